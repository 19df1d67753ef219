"""zigai.evals item 1: datasets of named cases over real agents, evaluators, the owned report."""

from __future__ import annotations

import pickle
import random
import threading
import time

import pytest

from zigai.agent import Agent
from zigai.errors import EvalsError
from zigai.evals import (
    MAX_CASE_NAME_BYTES,
    MAX_CASES,
    MAX_CONCURRENCY,
    Case,
    Check,
    Contains,
    Dataset,
    EvalContext,
    ExactMatch,
    Grade,
    InvalidDataset,
    InvalidEvalOptions,
    InvalidEvaluator,
    InvalidEvaluatorResult,
    IsJson,
    MatchesSchema,
    Progress,
    ReportClosed,
)
from zigai.json import Limits
from zigai.json_schema import UnsupportedJsonSchema
from zigai.messages import ResponseMessage, TextPart
from zigai.testing import FunctionModel
from zigai.usage import RunUsage


def _prompt(messages) -> str:
    return messages[-1].parts[-1].content


def shouting_agent(delay=None) -> Agent:
    """An agent whose model upper-cases the prompt (optionally after a per-prompt delay)."""

    def model(messages, info):
        prompt = _prompt(messages)
        if delay is not None:
            delay(prompt)
        if prompt == "boom":
            raise RuntimeError("model exploded")
        return ResponseMessage(parts=(TextPart(prompt.upper()),))

    return Agent(FunctionModel(model))


def _ctx(output, expected=None) -> EvalContext:
    return EvalContext("c", 0, "in", expected, {}, output, RunUsage())


def test_agent_dataset_runs_every_case_and_records_passes_failures_and_usage():
    dataset = Dataset(
        [
            Case("hello", "hello", expected_output="HELLO", metadata={"lang": "en"}),
            Case("wrong", "bye", expected_output="ciao"),
            Case("boom", "boom", expected_output="X"),
        ],
        [ExactMatch(), Check("short", lambda ctx: len(ctx.output) <= 5)],
        name="shout",
    )
    with dataset.evaluate(shouting_agent()) as report:
        assert [case.name for case in report] == ["hello", "wrong", "boom"] and len(report) == 3
        hello, wrong, boom = report.cases
        assert hello.output == "HELLO" and hello.passed and hello.metadata["lang"] == "en"
        assert hello.usage.requests == 1 and hello.usage.total_tokens > 0
        assert wrong.evaluation("exact_match").passed is False
        assert wrong.evaluation("exact_match").reason == "expected 'ciao', got 'BYE'"
        assert wrong.evaluation("short").passed is True and not wrong.passed
        assert boom.error_type == "RuntimeError" and "model exploded" in boom.error_message
        assert boom.evaluations == () and not boom.passed
        assert report.pass_rate == pytest.approx(1 / 3)
        assert [case.name for case in report.failures] == ["wrong", "boom"]
        assert report.usage == hello.usage + wrong.usage
        assert report.case("wrong") is wrong and report.dataset_name == "shout"
        assert report.summary().splitlines() == [
            "PASS hello: exact_match ok, short ok",
            "FAIL wrong: exact_match failed (expected 'ciao', got 'BYE'), short ok",
            "FAIL boom: task error RuntimeError: model exploded",
            "1/3 cases passed",
        ]
        with pytest.raises(KeyError, match="no case named 'nope'"):
            report.case("nope")
        with pytest.raises(KeyError, match="no evaluation named 'nope'"):
            hello.evaluation("nope")
    assert report.closed and repr(report) == "Report(closed)"
    for use in (lambda: report.cases, lambda: report.usage, lambda: len(report), lambda: report.summary()):
        with pytest.raises(ReportClosed, match="used after close"):
            use()


def test_concurrent_run_is_bounded_and_source_ordered_and_equals_sequential():
    lock = threading.Lock()
    active = 0
    peak = 0
    reached = threading.Event()
    limit = 4
    rng = random.Random(7)
    latencies = {f"p{i}": rng.uniform(0.0, 0.01) for i in range(40)}
    latencies["p0"] = 0.2  # the first case finishes well after later ones

    def delay(prompt: str) -> None:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
            if active == limit:
                reached.set()
        reached.wait(2)  # hold the first wave until the bound is really reached
        time.sleep(latencies[prompt])
        with lock:
            active -= 1

    cases = [Case(name, name, expected_output=name.upper()) for name in latencies]
    dataset = Dataset(cases, [ExactMatch(), Contains("P")])
    seen: list[Progress] = []
    with dataset.evaluate(shouting_agent(delay), max_concurrency=limit, progress=seen.append) as parallel:
        parallel_cases = parallel.cases
    with dataset.evaluate(shouting_agent()) as sequential:
        assert sequential.cases == parallel_cases
    assert peak == limit
    assert [case.name for case in parallel_cases] == list(latencies)
    assert [case.case_index for case in parallel_cases] == list(range(40))
    assert [item.done for item in seen] == list(range(1, 41))
    assert {item.total for item in seen} == {40} and seen[-1].failed == 0
    assert sorted(item.case.case_index for item in seen) == list(range(40))
    assert seen[0].case.case_index != 0  # completion order really differed from source order


def test_progress_counts_failures_and_its_exception_stops_the_run():
    dataset = Dataset([Case(f"c{i}", "boom" if i % 2 else "ok") for i in range(6)])
    seen: list[tuple[int, int]] = []
    with dataset.evaluate(shouting_agent(), progress=lambda p: seen.append((p.done, p.failed))):
        pass
    assert seen == [(1, 0), (2, 1), (3, 1), (4, 2), (5, 2), (6, 3)]

    calls = []

    def task(inputs):
        calls.append(inputs)
        return inputs

    class Stop(Exception):
        pass

    def stop(progress):
        raise Stop("enough")

    for concurrency in (1, 2):
        calls.clear()
        with pytest.raises(Stop):
            dataset.evaluate(task, max_concurrency=concurrency, progress=stop)
        assert len(calls) <= concurrency + 1 < len(dataset)


def test_plain_callable_task_and_a_callable_returning_an_agent_result():
    agent = shouting_agent()
    dataset = Dataset([Case("a", "abc", expected_output="ABC")], [ExactMatch()])
    with dataset.evaluate(lambda inputs: inputs.upper()) as report:
        assert report.cases[0].passed and report.usage == RunUsage()
    results = []

    def via_result(inputs):
        results.append(agent.run(inputs))
        return results[-1]

    with dataset.evaluate(via_result) as report:
        assert report.cases[0].output == "ABC" and report.usage.requests == 1
    assert results[0].closed  # the runner owns and closes the Result it was handed


def test_evaluator_exceptions_and_wrong_results_are_recorded_not_raised():
    def broken(ctx):
        raise ValueError("bad evaluator")

    dataset = Dataset(
        [Case("a", "x")],
        [
            Check("broken", broken),
            Check("wrong_type", lambda ctx: "yes"),
            Check("score", lambda ctx: 3),
            Check("graded", lambda ctx: Grade(passed=True, score=0.5, reason="fine")),
            Check("bad_grade", lambda ctx: Grade()),
        ],
    )
    with dataset.evaluate(lambda inputs: inputs) as report:
        broken_r, wrong_r, score_r, graded_r, bad_grade_r = report.cases[0].evaluations
    assert (broken_r.error_type, broken_r.error_message) == ("ValueError", "bad evaluator")
    assert wrong_r.error_type == "InvalidEvaluatorResult" and "returned str" in wrong_r.error_message
    assert score_r.score == 3.0 and isinstance(score_r.score, float) and score_r.passed is None
    assert not score_r.failed
    assert (graded_r.passed, graded_r.score, graded_r.reason) == (True, 0.5, "fine")
    assert bad_grade_r.error_type == "InvalidEvaluatorResult"
    assert report_summary(dataset).splitlines() == [
        "FAIL a: broken error ValueError, wrong_type error InvalidEvaluatorResult, score score=3, "
        "graded ok score=0.5, bad_grade error InvalidEvaluatorResult",
        "0/1 cases passed",
    ]


def report_summary(dataset: Dataset) -> str:
    with dataset.evaluate(lambda inputs: inputs) as report:
        return report.summary()


def test_grade_validation():
    for kwargs, match in [
        ({}, "needs passed="),
        ({"passed": 1}, "passed must be a bool"),
        ({"score": True}, "score must be an int or float"),
        ({"score": "1"}, "score must be an int or float"),
        ({"passed": True, "reason": 3}, "reason must be a str"),
    ]:
        with pytest.raises(InvalidEvaluatorResult, match=match):
            Grade(**kwargs)


def test_exact_match_and_contains():
    assert ExactMatch().evaluate(_ctx({"a": 1}, {"a": 1})).passed
    assert ExactMatch(5).evaluate(_ctx(5, "ignored")).passed
    assert ExactMatch().evaluate(_ctx("x" * 100, "y")).reason.endswith("...")
    contains = Contains("World")
    assert contains.evaluate(_ctx("Hello World")).passed
    assert not contains.evaluate(_ctx("hello world")).passed
    assert Contains("WORLD", case_sensitive=False).evaluate(_ctx("hello world")).passed
    assert Contains().evaluate(_ctx("abc", expected="b")).passed
    assert Contains(2).evaluate(_ctx([1, 2, 3])).passed
    assert not Contains(4).evaluate(_ctx((1, 2, 3))).passed
    assert Contains({"a": 1}).evaluate(_ctx({"a": 1, "b": 2})).passed
    assert not Contains({"a": 2}).evaluate(_ctx({"a": 1})).passed
    assert Contains("a").evaluate(_ctx({"a": 1})).passed
    assert Contains(1).evaluate(_ctx("abc")).reason == "cannot look for int in a str output"
    assert Contains(1).evaluate(_ctx(12)).reason == "output of type int cannot contain values"
    with pytest.raises(InvalidEvaluator, match="case_sensitive must be a bool"):
        Contains("a", case_sensitive=1)


def test_is_json_and_matches_schema_use_the_bounded_parser_and_local_dialect():
    assert IsJson().evaluate(_ctx('{"a": [1, 2]}')).passed
    assert not IsJson().evaluate(_ctx("{nope")).passed
    assert IsJson().evaluate(_ctx({"a": 1})).reason == "output is a dict, not a str"
    limits = Limits(max_document_bytes=100, max_value_bytes=100, max_depth=2, max_items=10)
    assert IsJson(limits=limits).evaluate(_ctx("[[1]]")).passed  # depth 2: at the limit
    assert not IsJson(limits=limits).evaluate(_ctx("[[[1]]]")).passed  # one past
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    matches = MatchesSchema(schema, limits=limits)
    assert matches.evaluate(_ctx('{"n": 3}')).passed
    assert matches.evaluate(_ctx({"n": 3})).passed
    assert matches.evaluate(_ctx('{"n": "x"}')).reason.startswith("$.n:")
    assert matches.evaluate(_ctx("{")).reason == "output is not valid JSON within the limits"
    with pytest.raises(UnsupportedJsonSchema):
        MatchesSchema({"type": "string", "pattern": "a+"})
    for build in (lambda: IsJson(limits={}), lambda: MatchesSchema(schema, limits={})):
        with pytest.raises(InvalidEvaluator, match="zigai.json.Limits"):
            build()


def test_case_and_dataset_validation_and_bounds():
    name = "n" * MAX_CASE_NAME_BYTES
    assert Case(name, 1).name == name
    with pytest.raises(InvalidDataset, match=f"the limit is {MAX_CASE_NAME_BYTES}"):
        Case(name + "n", 1)
    with pytest.raises(InvalidDataset, match="limit is 256"):
        Case("é" * 129, 1)  # 258 UTF-8 bytes
    for bad in ("", 3):
        with pytest.raises(InvalidDataset, match="non-empty str"):
            Case(bad, 1)
    with pytest.raises(InvalidDataset, match="must be a mapping"):
        Case("a", 1, metadata=[("k", 1)])
    with pytest.raises(InvalidDataset, match="keys must be str"):
        Case("a", 1, metadata={1: 2})
    source = {"k": [1]}
    case = Case("a", 1, metadata=source)
    source["k2"] = 2
    assert dict(case.metadata) == {"k": [1]}
    with pytest.raises(TypeError):
        case.metadata["x"] = 1
    assert pickle.loads(pickle.dumps(case)) == case

    many = [Case(f"c{i}", i) for i in range(MAX_CASES)]
    assert len(Dataset(many)) == MAX_CASES
    with pytest.raises(InvalidDataset, match=f"at most {MAX_CASES} cases"):
        Dataset([*many, Case("extra", 0)])
    with pytest.raises(InvalidDataset, match="at least one case"):
        Dataset([])
    with pytest.raises(InvalidDataset, match="appears twice"):
        Dataset([Case("a", 1), Case("a", 2)])
    with pytest.raises(InvalidDataset, match="must be Case values"):
        Dataset(["a"])
    with pytest.raises(InvalidDataset, match="evaluator name 'exact_match' appears twice"):
        Dataset([Case("a", 1)], [ExactMatch(), ExactMatch(2)])
    assert len(Dataset([Case("a", 1)], [ExactMatch(), ExactMatch(2, name="two")]).evaluators) == 2
    with pytest.raises(InvalidDataset, match="must be Evaluator values"):
        Dataset([Case("a", 1)], [lambda ctx: True])
    with pytest.raises(InvalidEvaluator, match="non-empty str"):
        Check("", lambda ctx: True)
    with pytest.raises(InvalidEvaluator, match="needs a callable"):
        Check("x", 3)
    small = Dataset([Case("a", 1)], name="d")
    assert repr(small) == "Dataset(name='d', cases=1, evaluators=0)"
    assert small.name == "d" and small.cases == (Case("a", 1),)
    assert repr(Check("x", bool)) == "Check(name='x')"


def test_max_concurrency_bounds_at_the_limit_and_one_past():
    dataset = Dataset([Case("a", "a", expected_output="A")], [ExactMatch()])
    with dataset.evaluate(lambda s: s.upper(), max_concurrency=MAX_CONCURRENCY) as report:
        assert report.cases[0].passed
    with dataset.evaluate(lambda s: s.upper(), max_concurrency=1) as report:
        assert repr(report) == "Report(dataset='dataset', cases=1)"
    for bad in (0, MAX_CONCURRENCY + 1):
        with pytest.raises(InvalidEvalOptions, match=f"between 1 and {MAX_CONCURRENCY}") as info:
            dataset.evaluate(lambda s: s, max_concurrency=bad)
        assert info.value.limit == MAX_CONCURRENCY
    for bad in (True, 2.0):
        with pytest.raises(InvalidEvalOptions, match="must be an int"):
            dataset.evaluate(lambda s: s, max_concurrency=bad)
    with pytest.raises(InvalidEvalOptions, match="progress must be callable"):
        dataset.evaluate(lambda s: s, progress=3)
    with pytest.raises(InvalidEvalOptions, match="task must be an Agent or a callable"):
        dataset.evaluate("not a task")


def test_errors_sit_under_the_evals_base_and_pickle():
    for error in (
        InvalidDataset("d"), InvalidEvaluator("e"), InvalidEvaluatorResult("r"),
        InvalidEvalOptions("o", limit=3), ReportClosed("c"),
    ):
        assert isinstance(error, EvalsError)
        copy = pickle.loads(pickle.dumps(error))
        assert str(copy) == str(error) and vars(copy) == vars(error)
