"""zigai.evals on a real ``distributed.LocalCluster`` (issue 20 item 8) and the picklable agent objects."""

from __future__ import annotations

import pickle
import sys
import threading

import distributed
import pytest

from zigai.agent import Agent, RunOptions
from zigai.evals import (
    Case,
    Check,
    DaskNotInstalled,
    Dataset,
    ExactMatch,
    Grade,
    InvalidEvalOptions,
    MeanScore,
    PassRate,
    Retry,
    TraceCheck,
    UnpicklableEvalObject,
)
from zigai.evals import io as eval_io
from zigai.evals.dask import DaskExecutor
from zigai.messages import ResponseMessage, TextPart
from zigai.telemetry import Telemetry
from zigai.testing import FunctionModel, TestModel


def shout(messages, info):
    """A module-level model function: FunctionModel agents built from it pickle."""
    text = messages[-1].parts[-1].content
    if text.startswith("fail"):
        raise RuntimeError(f"cannot answer {text}")
    return ResponseMessage(parts=(TextPart(text.upper()),))


def graded(ctx):
    return Grade(passed=ctx.output == ctx.expected_output, score=len(ctx.output or "") / 10, reason=ctx.case_name)


def retry_runtime_errors(error):
    return isinstance(error, RuntimeError)


def double(n):
    return n * 2


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None,
                                       silence_logs=40, worker_dashboard_address=None)
    try:
        with distributed.Client(cluster, timeout="60s") as connected:
            connected.wait_for_workers(2, timeout=60)
            yield connected
    finally:
        cluster.close(timeout=30)


def _dataset():
    cases = [Case(f"w{n:02}", f"word{n}", f"WORD{n}" if n % 4 else "wrong", {"n": n}) for n in range(24)]
    cases.append(Case("broken", "fail please", "x"))
    return Dataset(cases, [ExactMatch(), Check("graded", graded)],
                   report_evaluators=[PassRate(0.5), MeanScore("graded")], name="dask")


def test_the_cluster_report_equals_the_thread_pool_report_byte_for_byte(client):
    agent = Agent(FunctionModel(shout), name="shout")
    retry = Retry(max_attempts=2, retryable=retry_runtime_errors)
    options = {"repetitions": 2, "task_retry": retry}
    with _dataset().evaluate(agent, max_concurrency=8, **options) as local:
        expected = eval_io.dump_report(local, timing=False)
    seen = []
    with _dataset().evaluate(agent, max_concurrency=8, executor=DaskExecutor(client), on_event=seen.append,
                             progress=lambda p: None, **options) as remote:
        assert eval_io.dump_report(remote, timing=False) == expected
        assert remote.case("broken").task_attempts == 2 and remote.case("broken").error_type == "RuntimeError"
    assert sum(type(event).__name__ == "CaseFinished" for event in seen) == 50


def test_plain_callables_and_test_model_agents_run_on_the_cluster(client):
    dataset = Dataset([Case(f"n{n}", n, n * 2) for n in range(10)], [ExactMatch()])
    executor = DaskExecutor(client)
    with dataset.evaluate(double, executor=executor, max_concurrency=3) as report:
        assert report.pass_rate == 1.0 and [case.output for case in report] == [n * 2 for n in range(10)]
    words = Dataset([Case("a", "hi", "success (no tool calls)")], [ExactMatch()])
    with words.evaluate(Agent(TestModel()), executor=executor) as report:
        assert report.pass_rate == 1.0 and report.usage.requests == 1


class _Counting(DaskExecutor):
    submitted = 0

    def submit(self, plan, unit):
        type(self).submitted += 1
        return super().submit(plan, unit)


def test_unpicklable_objects_are_named_before_any_unit_is_submitted(client):
    lock = threading.Lock()
    executor = _Counting(client)
    refusals = [
        (Dataset([Case("a", 1)]), lambda n: (lock, n)[1], "the task (function)"),
        (Dataset([Case("a", 1)], [Check("locked", lambda ctx: lock is not None)]), double, "evaluator 'locked'"),
        (Dataset([Case("a", 1), Case("b", lock)]), double, "case 'b' inputs"),
        (Dataset([Case("a", "x", metadata={"lock": lock})]), Agent(TestModel()), "case 'a' metadata"),
        (Dataset([Case("a", "x", options=RunOptions(deps=lock))]), Agent(TestModel()), "case 'a' options"),
        (Dataset([Case("a", "x")]), Agent(TestModel(), hooks=[Telemetry()]), "the task (Agent)"),
    ]
    for dataset, task, what in refusals:
        with pytest.raises(UnpicklableEvalObject, match="cannot be sent to the Dask cluster") as caught:
            dataset.evaluate(task, executor=executor)
        assert caught.value.what == what and what in str(caught.value)
    retry = Retry(max_attempts=2, before_retry=lambda notice: lock.acquire(blocking=False))
    with pytest.raises(UnpicklableEvalObject, match="task_retry"):
        Dataset([Case("a", 1)]).evaluate(double, executor=executor, task_retry=retry)
    with pytest.raises(UnpicklableEvalObject, match="evaluator_retry"):
        Dataset([Case("a", 1)]).evaluate(double, executor=executor, evaluator_retry=retry)
    assert _Counting.submitted == 0


def test_trace_evaluators_are_refused_on_the_cluster(client):
    dataset = Dataset([Case("a", "x")], trace_evaluators=[TraceCheck("t", lambda ctx, spans: True)])
    with pytest.raises(InvalidEvalOptions, match="trace evaluators cannot run on the Dask executor"):
        dataset.evaluate(Agent(TestModel(), hooks=[Telemetry()]), executor=DaskExecutor(client))


def test_an_address_gives_the_executor_its_own_client(client):
    with DaskExecutor(address=client.scheduler.address) as executor:
        assert executor.client is not client
        with Dataset([Case("a", 2, 4)], [ExactMatch()]).evaluate(double, executor=executor) as report:
            assert report.pass_rate == 1.0
    assert executor.client.status == "closed" and client.status == "running"
    with pytest.raises(pickle.PicklingError, match="stays in the process"):
        pickle.dumps(executor)


def test_executor_arguments_are_checked(client, monkeypatch):
    with pytest.raises(InvalidEvalOptions, match="exactly one of"):
        DaskExecutor()
    with pytest.raises(InvalidEvalOptions, match="exactly one of"):
        DaskExecutor(client, address="tcp://127.0.0.1:1")
    with pytest.raises(InvalidEvalOptions, match="distributed.Client"):
        DaskExecutor(object())
    with pytest.raises(InvalidEvalOptions, match="scheduler address string"):
        DaskExecutor(address=8786)  # type: ignore[arg-type]
    DaskExecutor(client).close()  # a passed-in client stays open
    assert client.status == "running"
    with pytest.raises(InvalidEvalOptions, match="before prepare"):
        DaskExecutor(client).submit(None, None)  # type: ignore[arg-type]
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(DaskNotInstalled, match=r"pip install 'zigai\[dask\]'"):
        DaskExecutor(client)


# -- the objects a dataset run naturally holds pickle ---------------------------------------------


def test_agents_and_test_doubles_pickle_with_fresh_locks_and_caches():
    agent = Agent(TestModel(custom_output_text="hello"), instructions="Be brief.", name="copy")
    with agent.run("warm the cache") as first:
        assert first.output == "hello"
    clone = pickle.loads(pickle.dumps(agent))
    assert clone is not agent and clone.name == "copy" and clone.instructions == agent.instructions
    with clone.run("again") as second:
        assert second.output == "hello"
    assert clone.model.request_count == 1 and agent.model.request_count == 1  # a copy observes its own runs
    function_agent = pickle.loads(pickle.dumps(Agent(FunctionModel(shout))))
    with function_agent.run("abc") as result:
        assert result.output == "ABC"
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(FunctionModel(lambda messages, info: None))  # plain pickle: only module-level functions


def test_copied_builtin_evaluators_still_compare_with_the_expected_output():
    dataset = Dataset([Case("a", "x", "X")], [pickle.loads(pickle.dumps(ExactMatch()))])
    with dataset.evaluate(str.upper) as report:
        assert report.pass_rate == 1.0
    assert repr(pickle.loads(pickle.dumps(ExactMatch()))) == "ExactMatch(name='exact_match')"
