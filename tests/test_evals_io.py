"""zigai.evals.io (issue 20 item 5): dataset and report documents, exact round trips, refusals."""

from __future__ import annotations

import json
import math
import random
import threading
import time

import pytest

from zigai.agent import Agent, RunOptions
from zigai.evals import (
    Case,
    Check,
    Contains,
    Dataset,
    ExactMatch,
    Grade,
    MeanScore,
    PassRate,
    ReportCheck,
    Retry,
    TraceCheck,
)
from zigai.evals import io as eval_io
from zigai.evals.errors import (
    AmbiguousEvaluatorName,
    InvalidEvalDocument,
    UnknownEvaluatorName,
    UnsupportedEvalDocumentVersion,
)
from zigai.json import Limits
from zigai.telemetry import Telemetry
from zigai.testing import TestModel


def _registry():
    return [ExactMatch(), Contains(name="contains"), Check("short", lambda c: len(str(c.output)) < 40),
            TraceCheck("spans", lambda c, spans: bool(spans)), PassRate(0.5), MeanScore("short")]


def _dataset(**kwargs):
    registry = _registry()
    cases = [Case("plain", "hello", "success (no tool calls)"),
             Case("nested", {"q": ["a", 1, 2.5, None, True]}, None, {"tags": ["x"], "weight": 0.25, "ü": "é"}),
             Case("quoted: yes", "null", "true", {"yes": "no", "multi": "line one\nline two"})]
    return Dataset(cases, registry[:3], trace_evaluators=registry[3:4], report_evaluators=registry[4:],
                   name="round-trip", **kwargs)


def _flaky_report():
    """A report with every kind of field: task errors, evaluator retries, scores incl. NaN, spans."""
    attempts: dict[tuple[int, int], int] = {}

    def flaky(ctx):
        key = (ctx.case_index, ctx.repetition)
        attempts[key] = attempts.get(key, 0) + 1
        if attempts[key] == 1:
            raise RuntimeError("first call fails")
        return Grade(passed=ctx.case_index != 1, score=math.nan if ctx.case_index == 2 else 0.75, reason="why")

    def model_output(ctx, spans):
        return Grade(score=float(len(spans)), reason=spans[-1].trace_id[:4])

    agent = Agent(TestModel(), hooks=[Telemetry()], name="echo")
    cases = [Case("ok", "a", "success (no tool calls)", {"n": 1}), Case("bad", "b", "nope"), Case("nan", "c")]
    dataset = Dataset(cases, [ExactMatch(), Check("flaky", flaky)],
                      trace_evaluators=[TraceCheck("spans", model_output)],
                      report_evaluators=[PassRate(0.9), MeanScore("flaky"),
                                         ReportCheck("boom", lambda view: 1 / 0)], name="flaky")
    return dataset.evaluate(agent, repetitions=2, evaluator_retry=Retry(max_attempts=2))


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_report_documents_round_trip_exactly_with_every_durable_field(fmt):
    with _flaky_report() as report:
        text = eval_io.dump_report(report, fmt)
        with eval_io.load_report(text, fmt) as back:
            assert eval_io.dump_report(back, fmt) == text
            assert back.cases == report.cases and back.analyses == report.analyses
            assert back.usage == report.usage and back.repetitions == 2 and back.dataset_name == "flaky"
            assert [c.duration_s for c in back.cases] == [c.duration_s for c in report.cases]
            first = back.cases[0]
            assert first.evaluation("flaky").attempts == 2 and first.spans[-1].parent_span_id is None
            assert first.spans[0].parent_span_id == first.spans[-1].span_id
            assert math.isnan(back.case("nan").evaluation("flaky").score)
            assert back.analysis("boom").error_type == "ZeroDivisionError"
            assert back.summary() == report.summary()
    document = eval_io.loads(text, fmt)
    assert document["format"] == "zigai.evals.report" and document["version"] == 1
    span = document["cases"][0]["spans"][-1]
    assert len(span["trace_id"]) == 32 and span["trace_id"] == span["trace_id"].lower()
    assert isinstance(span["attributes"]["gen_ai.usage.output_tokens"], int)
    assert document["cases"][4]["evaluations"][1]["score"] == "nan"


def test_report_without_timing_omits_only_clocks():
    with _flaky_report() as report:
        document = eval_io.report_to_document(report, timing=False)
        assert "duration_s" not in document["cases"][0] and "run_time_ns" not in document["usage"]
        with eval_io.report_from_document(document) as back:
            assert back.cases == report.cases  # durations are excluded from equality


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_dataset_documents_round_trip_exactly_and_resolve_names_in_order(fmt):
    dataset = _dataset()
    text = eval_io.dump_dataset(dataset, fmt)
    back = eval_io.load_dataset(text, _registry(), fmt)
    assert eval_io.dump_dataset(back, fmt) == text
    assert back.cases == dataset.cases and back.name == "round-trip"
    assert [e.name for e in back.evaluators] == ["exact_match", "contains", "short"]
    assert [e.name for e in back.trace_evaluators] == ["spans"]
    assert [e.name for e in back.report_evaluators] == ["pass_rate", "mean_short"]
    if fmt == "yaml":
        assert '"quoted: yes"' in text and '"null"' in text and "\n  - " in text
        assert eval_io.loads(text, "yaml", eval_io.DATASET_LIMITS)["cases"][2]["inputs"] == "null"
    else:
        assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"


def test_a_hand_written_yaml_dataset_loads():
    text = ('format: zigai.evals.dataset\nversion: 1\nname: capitals\ncases:\n'
            '  - name: france\n    inputs: "Capital of France?"\n    expected_output: Paris\n'
            '  - {name: peru, inputs: "Capital of Peru?", metadata: {region: americas}}\n'
            'evaluators: [contains]\ntrace_evaluators: []\nreport_evaluators: [pass_rate]\n')
    dataset = eval_io.load_dataset(text, _registry(), "yaml")
    assert [c.name for c in dataset.cases] == ["france", "peru"]
    assert dataset.cases[1].expected_output is None and dataset.cases[1].metadata == {"region": "americas"}


def test_200_cases_3_repetitions_16_threads_random_latency_give_the_sequential_report_document():
    latency = random.Random(5)
    delays = [latency.uniform(0, 0.002) for _ in range(200)]
    attempts: dict[tuple[int, int], int] = {}
    lock = threading.Lock()

    def task(n):
        time.sleep(delays[n] * random.random())
        if n % 37 == 0:
            raise ValueError(f"case {n} always fails")
        return {"n": n, "double": n * 2 if n % 7 else n}

    def sometimes_flaky(ctx):
        with lock:
            key = (ctx.case_index, ctx.repetition)
            attempts[key] = attempts.get(key, 0) + 1
            first = attempts[key] == 1
        if first and ctx.case_index % 5 == 0:
            raise RuntimeError("evaluator hiccup")
        return Grade(passed=ctx.output["double"] == ctx.expected_output, score=ctx.inputs / 200,
                     reason=f"n={ctx.inputs}")

    dataset = Dataset([Case(f"case{n:03}", n, n * 2, {"n": n, "even": n % 2 == 0}) for n in range(200)],
                      [Check("double", sometimes_flaky)],
                      report_evaluators=[PassRate(0.5), MeanScore("double")], name="stress")
    texts = []
    for concurrency in (1, 16):
        attempts.clear()
        with dataset.evaluate(task, repetitions=3, max_concurrency=concurrency, task_retry=Retry(max_attempts=2),
                              evaluator_retry=Retry(max_attempts=2)) as report:
            texts.append((eval_io.dump_report(report, timing=False),
                          eval_io.dump_report(report, "yaml", timing=False)))
    assert texts[0] == texts[1]
    document = json.loads(texts[0][0])
    assert len(document["cases"]) == 600
    assert document["cases"][37 * 3]["task_attempts"] == 2 and document["cases"][37 * 3]["error_type"] == "ValueError"
    assert document["cases"][5 * 3 + 2]["evaluations"][0]["attempts"] == 2
    assert document["cases"][3]["evaluations"][0]["attempts"] == 1


# -- refusals, each at its path ------------------------------------------------------------------


def _dataset_document():
    return eval_io.dataset_to_document(_dataset())


def _refused(document, path, match, error=InvalidEvalDocument, registry=None):
    with pytest.raises(error, match=match) as caught:
        eval_io.dataset_from_document(document, _registry() if registry is None else registry)
    assert caught.value.path == path and str(caught.value).startswith(path)
    return caught.value


def test_dataset_refusals_name_the_exact_path():
    doc = _dataset_document()
    doc["cases"][1]["extra"] = 1
    _refused(doc, "$.cases[1].extra", "unknown field")
    doc = _dataset_document()
    del doc["cases"][2]["inputs"]
    _refused(doc, "$.cases[2]", "missing field 'inputs'")
    doc = _dataset_document()
    doc["cases"][0]["name"] = 7
    _refused(doc, "$.cases[0].name", "must be a string, got an integer")
    doc = _dataset_document()
    doc["cases"][0]["metadata"] = ["x"]
    _refused(doc, "$.cases[0].metadata", "must be an object")
    doc = _dataset_document()
    doc["cases"][1]["options"] = {"deps": 1}
    _refused(doc, "$.cases[1].options", "not data")
    doc = _dataset_document()
    doc["cases"][1]["name"] = "plain"
    _refused(doc, "$", "appears twice")
    doc = _dataset_document()
    doc["format"] = "zigai.evals.report"
    _refused(doc, "$.format", "expected 'zigai.evals.dataset'")
    doc = _dataset_document()
    doc["version"] = 2
    assert _refused(doc, "$.version", "version 2 is not supported", UnsupportedEvalDocumentVersion).version == 2
    doc = _dataset_document()
    doc["evaluators"] = "exact_match"
    _refused(doc, "$.evaluators", "must be an array")
    doc = _dataset_document()
    doc["evaluators"][1] = "missing"
    missing = _refused(doc, "$.evaluators[1]", "no Evaluator named 'missing'", UnknownEvaluatorName)
    assert missing.name == "missing" and "exact_match" in str(missing)
    doc = _dataset_document()
    doc["trace_evaluators"] = ["exact_match"]  # a name of the wrong kind is not found
    _refused(doc, "$.trace_evaluators[0]", "no TraceEvaluator", UnknownEvaluatorName)
    ambiguous = _refused(_dataset_document(), "$.report_evaluators[0]", "2 ReportEvaluators named 'pass_rate'",
                         AmbiguousEvaluatorName, [*_registry(), PassRate()])
    assert ambiguous.name == "pass_rate"
    _refused([], "$", "must be an object, got an array")


def test_cases_with_run_options_are_never_written():
    dataset = Dataset([Case("a", "x"), Case("b", "y", options=RunOptions(deps={"db": object()}))])
    with pytest.raises(InvalidEvalDocument, match="per-case run options") as caught:
        eval_io.dump_dataset(dataset)
    assert caught.value.path == "$.cases[1].options"


def test_values_that_are_not_json_data_are_refused_at_their_path():
    with pytest.raises(InvalidEvalDocument, match="not JSON data") as caught:
        eval_io.dump_dataset(Dataset([Case("a", {"when": object()})]))
    assert caught.value.path == "$.cases[0].inputs"
    with Dataset([Case("a", "x"), Case("b", "y")]).evaluate(lambda x: {1, 2}) as report:
        with pytest.raises(InvalidEvalDocument) as caught:
            eval_io.dump_report(report)
    assert caught.value.path == "$.cases[0].output"


def _report_document():
    with _flaky_report() as report:
        return eval_io.report_to_document(report)


def _report_refused(document, path, match):
    with pytest.raises(InvalidEvalDocument, match=match) as caught:
        eval_io.report_from_document(document)
    assert caught.value.path == path and str(caught.value).startswith(path)


def test_report_refusals_name_the_exact_path():
    doc = _report_document()
    doc["cases"][2]["spans"][0]["trace_id"] = "ABC"
    _report_refused(doc, "$.cases[2].spans[0].trace_id", "32 lowercase hex digits")
    doc = _report_document()
    doc["cases"][0]["spans"][1]["kind"] = "server"
    _report_refused(doc, "$.cases[0].spans[1].kind", "one of internal, client")
    doc = _report_document()
    doc["cases"][0]["spans"][0]["attributes"]["mixed"] = [1, "a"]
    _report_refused(doc, "$.cases[0].spans[0].attributes.mixed", "only strings, only integers")
    doc = _report_document()
    doc["cases"][0]["spans"][0]["attributes"]["obj"] = {}
    _report_refused(doc, "$.cases[0].spans[0].attributes.obj", "got an object")
    doc = _report_document()
    doc["cases"][1]["evaluations"][0]["score"] = "NaN"
    _report_refused(doc, "$.cases[1].evaluations[0].score", "'nan', 'inf' or '-inf'")
    doc = _report_document()
    doc["cases"][1]["evaluations"][0]["attempts"] = 0
    _report_refused(doc, "$.cases[1].evaluations[0].attempts", "at least 1")
    doc = _report_document()
    doc["cases"][1]["usage"]["requests"] = -1
    _report_refused(doc, "$.cases[1].usage.requests", "non-negative integer")
    doc = _report_document()
    doc["cases"][1]["usage"]["details"]["x"] = "1"
    _report_refused(doc, "$.cases[1].usage.details.x", "non-negative integer")
    doc = _report_document()
    doc["cases"][1]["usage"]["requests"] += 1
    _report_refused(doc, "$.usage", "not the sum")
    doc = _report_document()
    doc["cases"][0], doc["cases"][1] = doc["cases"][1], doc["cases"][0]
    _report_refused(doc, "$.cases[0]", "source order")
    doc = _report_document()
    doc["cases"][3]["duration_s"] = -1
    _report_refused(doc, "$.cases[3].duration_s", "finite number of seconds")
    doc = _report_document()
    doc["analyses"][0]["passed"] = "yes"
    _report_refused(doc, "$.analyses[0].passed", "must be a boolean or null")
    doc = _report_document()
    doc["repetitions"] = True
    _report_refused(doc, "$.repetitions", "non-negative integer")
    doc = _report_document()
    doc["cases"][0]["spans"][0]["events"] = [{"name": "e", "time_ns": 1}]
    _report_refused(doc, "$.cases[0].spans[0].events[0]", "missing field 'attributes'")


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_documents_at_the_size_limit_load_and_one_byte_more_is_refused(fmt):
    text = eval_io.dump_dataset(_dataset(), fmt)
    size = len(text.encode("utf-8"))
    exact = Limits(size, 1024, 16, 64)
    assert eval_io.loads(text, fmt, exact)["name"] == "round-trip"
    with pytest.raises(InvalidEvalDocument, match=f"is {size} bytes") as caught:
        eval_io.loads(text, fmt, Limits(size - 1, 1024, 16, 64))
    assert caught.value.path == "$"
    with pytest.raises(InvalidEvalDocument, match="depth|deep|nest"):
        eval_io.loads(text, fmt, Limits(size, 1024, 3, 64))


def test_the_named_profiles_and_syntax_refusals():
    assert eval_io.DATASET_LIMITS == Limits(16 << 20, 4 << 20, 64, 65_536)
    assert eval_io.REPORT_LIMITS == Limits(256 << 20, 16 << 20, 64, 1_000_000)
    refusals = [
        ('{"a": 1, "a": 2}', "json", "duplicate"),
        ("{nope", "json", "not valid JSON"),
        (b"\xff\xfe", "yaml", "not UTF-8"),
        ("a: &x 1\nb: *x\n", "yaml", "anchors are refused"),
        ("a: !!python/object:os.system 1\n", "yaml", "tag"),
        ("a: 1\na: 2\n", "yaml", "duplicate key"),
        ("a: .inf\n", "yaml", "finite"),
        ("", "yaml", "empty"),
        ("a: [1\n", "yaml", "not valid YAML"),
    ]
    for text, fmt, match in refusals:
        with pytest.raises(InvalidEvalDocument, match=match):
            eval_io.loads(text, fmt)
    with pytest.raises(InvalidEvalDocument, match="format must be"):
        eval_io.loads("{}", "toml")  # type: ignore[arg-type]
    with pytest.raises(InvalidEvalDocument, match="format must be"):
        eval_io.dumps({}, "toml")  # type: ignore[arg-type]
    with pytest.raises(InvalidEvalDocument, match=r"^\$\.a\.b: duplicate key"):
        eval_io.loads("a:\n  b: 1\n  b: 2\n", "yaml")


def test_span_events_and_array_attributes_survive_a_round_trip():
    doc = _report_document()
    doc["cases"][0]["spans"][0]["events"] = [{"name": "retry", "time_ns": 5, "attributes": {"waits": [1, 2]}}]
    with eval_io.report_from_document(doc) as report:
        event = report.cases[0].spans[0].events[0]
        assert (event.name, event.time_ns, event.attributes["waits"]) == ("retry", 5, (1, 2))
        assert eval_io.report_to_document(report) == doc
