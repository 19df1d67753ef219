"""zigai.evals items 2-4: repetitions, retries, events, concurrency, report evaluators, traces."""

from __future__ import annotations

import dataclasses
import math
import random
import threading
import time

import pytest

from zigai.agent import Agent, RunOptions
from zigai.evals import (
    MAX_ATTEMPTS,
    MAX_REPETITIONS,
    Case,
    CaseErrored,
    CaseFinished,
    CaseStarted,
    Check,
    Dataset,
    EvaluatorAttempted,
    ExactMatch,
    Grade,
    InvalidDataset,
    InvalidEvalOptions,
    InvalidEvaluator,
    MeanScore,
    Metric,
    PassRate,
    ReportCheck,
    ReportClosed,
    Retry,
    TaskAttempted,
    TraceCheck,
    TraceTelemetryMissing,
)
from zigai.evals.analysis import ReportView
from zigai.messages import ResponseMessage, TextPart
from zigai.telemetry import InMemoryExporter, Telemetry
from zigai.testing import FunctionModel, TestModel


class Flaky(Exception):
    pass


def _echo_agent(**kwargs) -> Agent:
    def model(messages, info):
        return ResponseMessage(parts=(TextPart(messages[-1].parts[-1].content.upper()),))

    return Agent(FunctionModel(model), **kwargs)


def test_200_cases_3_repetitions_concurrent_equals_sequential_under_random_latency():
    rng = random.Random(20)
    delays = {n: rng.uniform(0, 0.002) for n in range(200)}
    in_flight = 0
    peak = 0
    lock = threading.Lock()

    def task(n):
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(delays[n] * random.random())
        with lock:
            in_flight -= 1
        return n * 2 if n % 7 else n

    def score(ctx):
        return Grade(passed=ctx.output % 3 != 0, score=ctx.output / 400, reason=f"n={ctx.inputs}")

    dataset = Dataset(
        [Case(f"case{n:03}", n, expected_output=n * 2, metadata={"n": n}) for n in range(200)],
        [ExactMatch(), Check("score", score)],
        report_evaluators=[PassRate(0.5), MeanScore("score")],
    )
    with dataset.evaluate(task, repetitions=3) as sequential:
        assert peak == 1
        with dataset.evaluate(task, repetitions=3, max_concurrency=16) as concurrent:
            assert 1 < peak <= 16
            assert concurrent.cases == sequential.cases
            assert concurrent.analyses == sequential.analyses
            assert concurrent.summary() == sequential.summary()
            assert len(concurrent) == 600 and concurrent.repetitions == 3
            assert [(c.case_index, c.repetition) for c in concurrent] == [
                (i, r) for i in range(200) for r in range(3)
            ]
            assert concurrent.case("case007", repetition=2).output == 7


def test_task_retries_are_counted_classified_and_announced_before_each_retry():
    failures = {"again": 2, "fatal": 1, "tired": 5}
    counts: dict[str, int] = {}
    lock = threading.Lock()
    notices = []

    def task(name):
        with lock:
            counts[name] = counts.get(name, 0) + 1
            seen = counts[name]
        if seen <= failures.get(name, 0):
            raise (TypeError if name == "fatal" else Flaky)(f"{name} attempt {seen}")
        return name

    retry = Retry(3, retryable=lambda error: isinstance(error, Flaky), before_retry=notices.append)
    dataset = Dataset([Case(n, n, expected_output=n) for n in ("ok", "again", "fatal", "tired")], [ExactMatch()])
    with dataset.evaluate(task, task_retry=retry, max_concurrency=4) as report:
        ok, again, fatal, tired = report.cases
        assert (ok.task_attempts, ok.passed) == (1, True)
        assert (again.task_attempts, again.passed, again.output) == (3, True, "again")
        assert (fatal.task_attempts, fatal.error_type) == (1, "TypeError")  # not retryable
        assert (tired.task_attempts, tired.error_type, tired.error_message) == (3, "Flaky", "tired attempt 3")
        assert again.evaluation("exact_match").attempts == 1  # the evaluator policy is separate
    assert sorted((n.case_name, n.attempt) for n in notices) == [
        ("again", 1), ("again", 2), ("tired", 1), ("tired", 2)]
    assert all(n.stage == "task" and n.evaluator is None and isinstance(n.error, Flaky) for n in notices)


def test_evaluator_retries_use_their_own_policy_and_record_attempts():
    calls: dict[str, int] = {}

    def flaky(ctx):
        calls[ctx.case_name] = calls.get(ctx.case_name, 0) + 1
        if calls[ctx.case_name] < 3:
            raise Flaky("judge busy")
        return True

    dataset = Dataset([Case("a", 1), Case("b", 2)], [Check("flaky", flaky), ExactMatch(1)])
    notices = []
    with dataset.evaluate(lambda x: x, evaluator_retry=Retry(3, before_retry=notices.append)) as report:
        a, b = report.cases
        assert a.evaluation("flaky").attempts == 3 and a.evaluation("flaky").passed is True
        assert a.task_attempts == 1 and a.evaluation("exact_match").attempts == 1
        assert b.evaluation("exact_match").passed is False  # a verdict is never retried
    assert [(n.stage, n.evaluator, n.attempt) for n in notices] == [
        ("evaluator", "flaky", 1), ("evaluator", "flaky", 2)] * 2
    calls.clear()
    with dataset.evaluate(lambda x: x, evaluator_retry=Retry(2)) as report:
        flaky_result = report.cases[0].evaluation("flaky")
        assert (flaky_result.attempts, flaky_result.error_type, flaky_result.error_message) == (
            2, "Flaky", "judge busy")


def test_lifecycle_events_cover_case_attempts_errors_and_completion_in_order():
    seen = 0

    def task(x):
        nonlocal seen
        seen += 1
        if seen == 1:
            raise Flaky("first")
        return x

    def judge(ctx):
        raise ValueError("no verdict")

    events = []
    dataset = Dataset([Case("only", 5)], [Check("judge", judge)])
    with dataset.evaluate(task, task_retry=Retry(2), on_event=events.append) as report:
        result = report.cases[0]
    assert [type(e) for e in events] == [
        CaseStarted, TaskAttempted, TaskAttempted, EvaluatorAttempted, CaseErrored, CaseFinished]
    assert events[1] == TaskAttempted(0, "only", 0, 1, "Flaky", "first", True)
    assert events[2] == TaskAttempted(0, "only", 0, 2, None, None, False)
    assert events[3] == EvaluatorAttempted(0, "only", 0, "judge", 1, "ValueError", "no verdict", False)
    assert events[4] == CaseErrored(0, "only", 0, "evaluator", "judge", 1, "ValueError", "no verdict")
    assert events[5].result is result and events[5].kind == "case_finished"
    events.clear()
    with Dataset([Case("x", 1)]).evaluate(lambda x: 1 / 0, on_event=events.append) as report:
        assert report.cases[0].error_type == "ZeroDivisionError"
    assert [e.kind for e in events] == ["case_started", "task_attempted", "case_errored", "case_finished"]
    assert events[2].stage == "task" and events[2].attempts == 1


@pytest.mark.parametrize("where", ["on_event", "before_retry"])
def test_a_raising_callback_stops_the_run_and_propagates(where):
    started = []

    def task(x):
        started.append(x)
        if where == "before_retry":
            raise Flaky("retry me")
        return x

    def explode(_):
        raise KeyError("stop")

    dataset = Dataset([Case(f"c{n}", n) for n in range(50)])
    kwargs = {"on_event": explode} if where == "on_event" else {"task_retry": Retry(2, before_retry=explode)}
    with pytest.raises(KeyError, match="stop"):
        dataset.evaluate(task, max_concurrency=4, **kwargs)
    assert len(started) < 50


def test_report_evaluators_see_the_joined_immutable_view_after_every_case():
    order = []
    lock = threading.Lock()

    def task(n):
        time.sleep(random.random() / 1000)
        with lock:
            order.append("case")
        return n

    def aggregate(view):
        with lock:
            order.append("report")
        assert isinstance(view, ReportView) and len(view.cases) == 20 and view.repetitions == 2
        assert [(c.case_index, c.repetition) for c in view.cases] == [(i, r) for i in range(10) for r in range(2)]
        with pytest.raises(dataclasses.FrozenInstanceError):
            view.cases = ()  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError):
            view.cases[0].output = 99  # type: ignore[misc]
        assert view.usage.requests == 0 and view.dataset_name == "nums"
        return Metric(passed=view.pass_rate == 0.5, value=len(view.cases), unit="runs", reason="joined")

    dataset = Dataset(
        [Case(f"n{n}", n, expected_output=n if n < 5 else -1) for n in range(10)],
        [ExactMatch()],
        report_evaluators=[ReportCheck("joined", aggregate)],
        name="nums",
    )
    with dataset.evaluate(task, repetitions=2, max_concurrency=8) as report:
        assert order == ["case"] * 20 + ["report"]
        joined = report.analysis("joined")
        assert (joined.passed, joined.value, joined.unit, joined.reason) == (True, 20.0, "runs", "joined")
        assert "OK   [joined] ok 20 runs (joined)" in report.summary()
        with pytest.raises(KeyError):
            report.analysis("nope")


def test_pass_rates_per_report_and_per_source_case_and_score_statistics():
    def task(n):
        return n

    def score(ctx):
        values = {0: [1.0, 0.5, 0.0], 1: [math.nan, 2.0, math.inf], 2: [-math.inf, math.nan, math.nan]}
        return Grade(passed=ctx.repetition != 1 or ctx.inputs != 0, score=values[ctx.inputs][ctx.repetition])

    dataset = Dataset([Case(f"c{n}", n) for n in range(3)], [Check("s", score), Check("ok", lambda ctx: True)],
                      report_evaluators=[MeanScore("s", 0.9), MeanScore("missing"), PassRate()])
    with dataset.evaluate(task, repetitions=3) as report:
        assert report.pass_rate == 8 / 9
        assert [(r.name, r.runs, r.passed, r.rate) for r in report.case_pass_rates()] == [
            ("c0", 3, 2, 2 / 3), ("c1", 3, 3, 1.0), ("c2", 3, 3, 1.0)]
        overall = report.score_stats("s")
        assert (overall.count, overall.excluded) == (4, 5)
        assert (overall.mean, overall.minimum, overall.maximum) == (3.5 / 4, 0.0, 2.0)
        assert overall.stdev == pytest.approx(math.sqrt(((1 - .875) ** 2 + (.5 - .875) ** 2 + .875 ** 2
                                                        + (2 - .875) ** 2) / 4))
        first = report.score_stats("s", case_index=0)
        assert (first.count, first.mean, first.excluded) == (3, 0.5, 0)
        none = report.score_stats("s", case_index=2)
        assert (none.count, none.excluded, none.mean, none.stdev) == (0, 3, None, None)
        assert [s.evaluator for s in report.all_score_stats()] == ["s"]
        mean = report.analysis("mean_s")
        assert (mean.passed, mean.value, mean.unit) == (False, 0.875, "score") and "below 0.9" in mean.reason
        assert report.analysis("mean_missing").passed is False
        assert report.analysis("pass_rate").value == 8 / 9 and report.analysis("pass_rate").passed is None


def test_non_finite_or_wrong_report_analyses_are_rejected_and_recorded():
    def nan(view):
        return math.nan

    dataset = Dataset([Case("a", 1)], report_evaluators=[
        ReportCheck("nan", nan), ReportCheck("inf", lambda v: Metric(value=math.inf)),
        ReportCheck("text", lambda v: "fine"), ReportCheck("boom", lambda v: 1 / 0),
        ReportCheck("bool", lambda v: True), ReportCheck("number", lambda v: 3),
        PassRate(1.0, name="strict"),
    ])
    with dataset.evaluate(lambda x: x) as report:
        kinds = {a.name: a.error_type for a in report.analyses}
        assert kinds == {"nan": "InvalidEvaluatorResult", "inf": "InvalidEvaluatorResult",
                         "text": "InvalidEvaluatorResult", "boom": "ZeroDivisionError",
                         "bool": None, "number": None, "strict": None}
        assert report.analysis("nan").error_message == "Metric.value must be finite, got nan"
        assert report.analysis("number").value == 3.0 and report.analysis("bool").passed is True
        assert report.analysis("strict").passed is True and not report.analysis("strict").failed
        assert report.analysis("boom").failed
        assert "FAIL [boom] error ZeroDivisionError: division by zero" in report.summary()
    with pytest.raises(ReportClosed):
        report.analyses  # noqa: B018
    for bad in (dict(), dict(passed="yes"), dict(value="1"), dict(value=True), dict(passed=True, unit=3),
                dict(passed=True, reason=1)):
        with pytest.raises(Exception, match="Metric"):
            Metric(**bad)
    with pytest.raises(InvalidEvaluator):
        PassRate(math.nan)
    with pytest.raises(InvalidEvaluator):
        MeanScore("")
    with pytest.raises(InvalidEvaluator):
        ReportCheck("x", 3)  # type: ignore[arg-type]
    with pytest.raises(InvalidEvaluator):
        ReportCheck("", lambda v: True)


def test_trace_evaluators_get_owned_copies_of_each_cases_spans_and_originals_are_forwarded():
    forwarded = InMemoryExporter()
    starts = []

    class Recording(InMemoryExporter):
        def on_start(self, span):
            starts.append(span.name)

    target = Recording()
    agent = _echo_agent(hooks=[Telemetry(target)], name="shout")

    def one_agent_run(ctx, spans):
        names = [s.name for s in spans]
        root = spans[-1]
        return Grade(passed=names == ["chat function", "invoke_agent shout"]
                     and len({s.trace_id for s in spans}) == 1 and root.parent_span_id is None,
                     score=float(root.attributes["gen_ai.usage.output_tokens"]))

    dataset = Dataset([Case(f"c{n}", f"word{n}") for n in range(12)], [Check("nonempty", lambda c: bool(c.output))],
                      trace_evaluators=[TraceCheck("one_run", one_agent_run)])
    with dataset.evaluate(agent, max_concurrency=4, repetitions=2) as report:
        assert report.pass_rate == 1.0, report.summary()
        traces = [case.spans[-1].trace_id for case in report]
        assert len(set(traces)) == 24  # every case run its own trace, no cross-talk
        assert [e.name for e in report.cases[0].evaluations] == ["nonempty", "one_run"]
        kept = {span.span_id: span for case in report for span in case.spans}
    assert len(target.spans) == 48 and starts.count("invoke_agent shout") == 24 and target.metrics
    for original in target.spans:
        copy = kept[original.span_id]
        assert copy == original and copy is not original and copy.attributes is not original.attributes
    assert forwarded.spans == []


def test_trace_evaluation_fails_before_execution_without_telemetry():
    calls = []
    check = TraceCheck("t", lambda ctx, spans: True)
    dataset = Dataset([Case("a", "x")], trace_evaluators=[check])

    def task(x):
        calls.append(x)
        return x

    with pytest.raises(TraceTelemetryMissing, match="Agent task"):
        dataset.evaluate(task)
    with pytest.raises(TraceTelemetryMissing, match="found 0"):
        dataset.evaluate(_echo_agent())
    with pytest.raises(TraceTelemetryMissing, match="found 2"):
        dataset.evaluate(_echo_agent(hooks=[Telemetry(), Telemetry()]))
    assert calls == []
    with pytest.raises(InvalidEvaluator):
        TraceCheck("t", None)  # type: ignore[arg-type]
    with pytest.raises(InvalidEvaluator):
        TraceCheck("", lambda c, s: True)


def test_a_task_failing_under_tracing_keeps_its_spans():
    def model(messages, info):
        raise Flaky("model down")

    agent = Agent(FunctionModel(model), hooks=[Telemetry()])
    dataset = Dataset([Case("a", "x")], trace_evaluators=[TraceCheck("t", lambda c, s: True)])
    with dataset.evaluate(agent, task_retry=Retry(2)) as report:
        case = report.cases[0]
        assert case.error_type == "Flaky" and case.task_attempts == 2 and case.evaluations == ()
        assert [s.status for s in case.spans if s.name.startswith("invoke_agent")] == ["error"]


def test_per_case_agent_options_reach_the_run():
    def model(messages, info):
        return ResponseMessage(parts=(TextPart("|".join(info.request.instructions) or "none"),))

    agent = Agent(FunctionModel(model))
    dataset = Dataset([Case("cold", "q", expected_output="be cold", options=RunOptions(instructions="be cold")),
                       Case("default", "q", expected_output="none")], [ExactMatch()])
    with dataset.evaluate(agent) as report:
        assert report.pass_rate == 1.0, report.summary()
    with pytest.raises(InvalidEvalOptions, match="need an Agent"):
        dataset.evaluate(lambda x: x)
    with pytest.raises(InvalidDataset, match="RunOptions"):
        Case("x", 1, options={"deps": 1})  # type: ignore[arg-type]


def test_run_option_bounds_at_the_limit_and_one_past():
    dataset = Dataset([Case("a", 1)])
    with dataset.evaluate(lambda x: x, repetitions=MAX_REPETITIONS) as report:
        assert len(report) == MAX_REPETITIONS and report.case("a", MAX_REPETITIONS - 1).repetition == 999
    for bad in (0, MAX_REPETITIONS + 1, True, 1.0):
        with pytest.raises(InvalidEvalOptions, match="repetitions"):
            dataset.evaluate(lambda x: x, repetitions=bad)
    assert Retry(MAX_ATTEMPTS).max_attempts == MAX_ATTEMPTS
    for bad in (0, MAX_ATTEMPTS + 1, True):
        with pytest.raises(InvalidEvalOptions, match="max_attempts") as raised:
            Retry(bad)
        assert raised.value.limit == MAX_ATTEMPTS
    with pytest.raises(InvalidEvalOptions, match="retryable"):
        Retry(2, retryable=3)  # type: ignore[arg-type]
    with pytest.raises(InvalidEvalOptions, match="before_retry"):
        Retry(2, before_retry="x")  # type: ignore[arg-type]
    with pytest.raises(InvalidEvalOptions, match="task_retry"):
        dataset.evaluate(lambda x: x, task_retry=3)  # type: ignore[arg-type]
    with pytest.raises(InvalidEvalOptions, match="on_event"):
        dataset.evaluate(lambda x: x, on_event=3)  # type: ignore[arg-type]
    with pytest.raises(InvalidDataset, match="trace_evaluators"):
        Dataset([Case("a", 1)], trace_evaluators=[ExactMatch()])
    with pytest.raises(InvalidDataset, match="appears twice"):
        Dataset([Case("a", 1)], [ExactMatch(name="x")], report_evaluators=[PassRate(name="x")])
    trace, rate = TraceCheck("t", lambda c, s: True), PassRate()
    both = Dataset([Case("a", 1)], trace_evaluators=[trace], report_evaluators=[rate])
    assert both.trace_evaluators == (trace,) and both.report_evaluators == (rate,)
    assert repr(trace) == "TraceCheck(name='t')" and repr(rate) == "PassRate(name='pass_rate')"


def test_repeated_summary_labels_and_agent_usage_sum():
    agent = Agent(TestModel(custom_output_text="ok"))
    with Dataset([Case("a", "q", expected_output="ok")], [ExactMatch()]).evaluate(agent, repetitions=2) as report:
        assert report.summary().splitlines()[:2] == ["PASS a#0: exact_match ok", "PASS a#1: exact_match ok"]
        assert report.usage.requests == 2


class ThreadExecutor:
    """An Executor that runs each unit on its own pool and replays the events it recorded."""

    def __init__(self):
        from concurrent.futures import ThreadPoolExecutor

        self.pool = ThreadPoolExecutor(4)
        self.prepared = []

    def prepare(self, plan, units):
        self.prepared.append(plan)

    def submit(self, plan, unit):
        from zigai.evals.run import run_unit

        def work():
            events = []
            return run_unit(plan, unit, events.append), tuple(events)

        return self.pool.submit(work)


def test_an_executor_runs_units_elsewhere_and_events_are_replayed_in_the_calling_thread():
    executor = ThreadExecutor()
    caller = threading.get_ident()
    threads = set()

    def listen(event):
        threads.add(threading.get_ident())

    dataset = Dataset([Case(f"n{n}", n, expected_output=n) for n in range(30)], [ExactMatch()])
    with dataset.evaluate(lambda n: (time.sleep(random.random() / 1000), n)[1], repetitions=2, max_concurrency=3,
                          executor=executor, on_event=listen) as remote:
        with dataset.evaluate(lambda n: n, repetitions=2) as local:
            assert remote.cases == local.cases and remote.pass_rate == 1.0
    assert threads == {caller} and len(executor.prepared) == 1
    executor.pool.shutdown()
