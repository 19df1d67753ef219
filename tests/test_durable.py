"""Durable execution on DBOS (SQLite): steps with stable ids, crash recovery, durable approvals."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from zigai import Agent, Tool
from zigai.agent import ResultClosed, ResumeDecision
from zigai.durable import (
    DurableAgent,
    DurableApprovalTimedOut,
    DurableSetupError,
    DurableStepUnbound,
    StepCounter,
    StepId,
    StepScope,
    current_step_id,
)
from zigai.durable.codec import decode_response, decode_tool_output, encode_tool_output
from zigai.messages import (
    RequestMessage,
    ResponseMessage,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from zigai.testing import FunctionModel
from zigai.tool import ToolExecution, ToolOutput, ToolRunContext
from zigai.toolset import PreparedTool, Toolset

dbos = pytest.importorskip("dbos", reason="durable tests need DBOS: pip install -e '.[dev]' (pins dbos)")

WORKER = Path(__file__).parent / "support" / "durable_worker.py"
REPO = Path(__file__).resolve().parent.parent
CHILD_CEILING_S = 120.0


# -- stable ids (no engine) -----------------------------------------------------------------------


def test_step_ids_are_run_id_and_ordinal_with_optional_prefixes() -> None:
    assert StepId("run-1", 3).text == "run-1/3"
    assert str(StepId("run-1", 3, namespace="billing")) == "billing/run-1/3"
    assert StepId("r", 0, scope=StepScope(node_index=2, completed_steps=5)).text == "r/n2.s5/0"
    counter = StepCounter("r", namespace="ns")
    assert [counter.next().text for _ in range(3)] == ["ns/r/0", "ns/r/1", "ns/r/2"]
    for bad in (lambda: StepId("", 0), lambda: StepId("a/b", 0), lambda: StepId("r", -1),
                lambda: StepId("r", True), lambda: StepId("r", 0, namespace="x y"),
                lambda: StepScope(-1, 0), lambda: StepCounter("bad id")):
        with pytest.raises(ValueError):
            bad()


def test_tool_outputs_round_trip_through_the_step_codec() -> None:
    follow = RequestMessage(parts=(UserPromptPart("look at this"),))
    output = ToolOutput({"rows": [1, 2]}, (follow,))
    assert decode_tool_output(encode_tool_output(output)) == output
    assert decode_tool_output(encode_tool_output(ToolOutput("plain"))) == ToolOutput("plain")
    with pytest.raises(DurableSetupError):
        decode_tool_output('{"v": 99}')
    from zigai import history

    with pytest.raises(DurableSetupError):
        decode_response(history.stringify([follow]))


def test_constructor_checks_happen_before_dbos_is_touched() -> None:
    agent = Agent(FunctionModel(lambda m, i: ResponseMessage(parts=(TextPart("x"),))))
    with pytest.raises(DurableSetupError):
        DurableAgent("agent", name="x")  # type: ignore[arg-type]
    with pytest.raises(DurableSetupError):
        DurableAgent(agent, name="")
    with pytest.raises(DurableSetupError):
        DurableAgent(agent, name="x", approval_timeout_s=0)
    with pytest.raises(ValueError):
        DurableAgent(agent, name="x", namespace="bad namespace")


# -- the crash test -------------------------------------------------------------------------------


def _child(directory: Path, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, str(WORKER), str(directory), mode], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _executed(directory: Path) -> Counter[str]:
    with sqlite3.connect(directory / "counts.sqlite") as db:
        return Counter(row[0] for row in db.execute("SELECT what FROM executed"))


def test_a_run_killed_after_its_first_tool_call_resumes_without_repeating_anything(tmp_path: Path) -> None:
    first = _child(tmp_path, "first")
    # Ceilings that only bound a hang: under load and coverage one child (DBOS, SQLite and
    # zigai imported, traced) has taken over 25 s to reach its crash point.
    deadline = time.monotonic() + CHILD_CEILING_S
    while not (tmp_path / "ready").exists():
        if first.poll() is not None or time.monotonic() > deadline:
            first.kill()
            out, err = first.communicate()
            pytest.fail(f"the first worker never reached the crash point:\n{out}\n{err}")
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    assert first.returncode == -signal.SIGKILL
    assert _executed(tmp_path) == Counter({"model:0": 1, "tool:A:crash-run/1": 1})

    second = _child(tmp_path, "second")
    out, err = second.communicate(timeout=CHILD_CEILING_S)
    assert second.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    assert report["output"] == "done after A,B"
    assert report["steps"] == [
        "zigai.model_request#0", "zigai.tool_call#1:tally",
        "zigai.model_request#2", "zigai.tool_call#3:tally", "zigai.model_request#4",
    ]
    assert report["messages"] == 6
    # every model request that ran and every tool call happened exactly once across both processes
    assert _executed(tmp_path) == Counter({
        "model:0": 1, "tool:A:crash-run/1": 1, "model:1": 1, "tool:B:crash-run/3": 1, "model:2": 1,
    })


# -- in-process DBOS -------------------------------------------------------------------------------


@pytest.fixture
def dbos_app(tmp_path: Path):
    from dbos import DBOS

    DBOS(config={"name": "zigai-durable-tests", "log_level": "WARNING",
                 "system_database_url": f"sqlite:///{tmp_path / 'dbos.sqlite'}"})
    launched = []

    def launch() -> None:
        DBOS.launch()
        launched.append(True)

    yield launch
    DBOS.destroy(destroy_registry=True)


def _turns(messages) -> list[ToolReturnPart]:
    return [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]


def test_parallel_tool_calls_get_ordinals_in_call_order_whatever_thread_runs_them(dbos_app) -> None:
    from dbos import DBOS

    ran: list[str] = []
    lock = threading.Lock()

    def respond(messages, info):
        if not _turns(messages):
            return ResponseMessage(parts=tuple(
                ToolCallPart("slow", json.dumps({"n": n}), f"c{n}") for n in range(4)))
        return ResponseMessage(parts=(TextPart(",".join(str(r.content) for r in _turns(messages))),))

    # Later calls finish first, by events rather than sleeps: call n waits (bounded) until
    # call n + 1 has finished, so the finishing order is 3, 2, 1, 0 however threads are
    # scheduled.  A run that did not overlap the calls would stall each wait to its ceiling
    # and finish 0 first, failing the order assert below.
    finished = [threading.Event() for _ in range(5)]
    finished[4].set()

    def slow(args, ctx: ToolRunContext):
        n = args["n"]
        finished[n + 1].wait(10)
        with lock:
            ran.append(str(current_step_id()))
        finished[n].set()
        return n * 10

    tool = Tool.manual("slow", "slow", {"type": "object", "properties": {"n": {"type": "integer"}}}, slow)
    durable = DurableAgent(Agent(FunctionModel(respond), tools=[tool]), name="parallel", namespace="tests")
    dbos_app()
    with durable.run("go", workflow_id="par-1") as result:
        assert result.output == "0,10,20,30"
        assert result.workflow_id == "par-1"
    assert ran == ["tests/par-1/4", "tests/par-1/3", "tests/par-1/2", "tests/par-1/1"]
    steps = [s["function_name"] for s in DBOS.list_workflow_steps("par-1")]
    assert steps == ["zigai.model_request#0", *(f"zigai.tool_call#{n}:slow" for n in range(1, 5)),
                     "zigai.model_request#5"]
    ran.clear()
    with durable.run("go", workflow_id="par-1") as again:  # a finished run is not executed twice
        assert again.output == "0,10,20,30"
    assert ran == []


def test_toolset_tools_and_retries_are_durable_steps_too(dbos_app) -> None:
    from dbos import DBOS

    from zigai.tool import ModelRetry

    attempts = Counter()

    def respond(messages, info):
        returns = _turns(messages)
        retries = [p for m in messages for p in m.parts if type(p).__name__ == "RetryPromptPart"]
        if not returns and len(retries) == 0:
            return ResponseMessage(parts=(ToolCallPart("ns__flaky", "{}", "f1"),))
        if not returns:
            return ResponseMessage(parts=(ToolCallPart("ns__flaky", "{}", "f2"),))
        return ResponseMessage(parts=(TextPart(f"ok {returns[0].content}"),))

    def flaky(args):
        attempts["flaky"] += 1
        if attempts["flaky"] == 1:
            raise ModelRetry("try again")
        return "fine"

    tool = Tool.manual("flaky", "flaky", {"type": "object"}, flaky)
    toolset = Toolset([tool], namespace="ns", prepare=lambda ctx: [PreparedTool(tool, {"step": 1})])
    durable = DurableAgent(Agent(FunctionModel(respond), toolsets=[toolset], max_tool_retries=2),
                           name="toolsets")
    dbos_app()
    with durable.run("go", workflow_id="ts-1") as result:
        assert result.output == "ok fine"
    steps = [s["function_name"] for s in DBOS.list_workflow_steps("ts-1")]
    assert steps == ["zigai.model_request#0", "zigai.tool_call#1:ns__flaky", "zigai.model_request#2",
                     "zigai.tool_call#3:ns__flaky", "zigai.model_request#4"]
    assert attempts["flaky"] == 2


def test_an_approval_waits_durably_for_decisions_sent_through_dbos(dbos_app) -> None:
    executed: list[str] = []

    def respond(messages, info):
        returns = _turns(messages)
        if not returns:
            return ResponseMessage(parts=(ToolCallPart("delete", '{"name":"db"}', "d1"),
                                          ToolCallPart("delete", '{"name":"cache"}', "d2")))
        return ResponseMessage(parts=(TextPart("; ".join(str(r.content) for r in returns)),))

    def delete(args):
        executed.append(args["name"])
        return f"deleted {args['name']}"

    tool = Tool.manual("delete", "delete a thing", {"type": "object", "properties": {"name": {"type": "string"}}},
                       delete, execution=ToolExecution.requires_approval)
    durable = DurableAgent(Agent(FunctionModel(respond), tools=[tool]), name="approvals")
    dbos_app()
    handle = durable.start("clean up", workflow_id="appr-1")
    assert handle.workflow_id == "appr-1"
    pending = None
    deadline = time.monotonic() + 20
    while pending is None and time.monotonic() < deadline:
        pending = durable.pending_approval("appr-1", timeout_s=1)
    assert pending is not None and pending.round == 0
    assert [(c.tool_call_id, c.args_as_dict()) for c in pending.calls] == [
        ("d1", {"name": "db"}), ("d2", {"name": "cache"})]
    assert '"version"' in pending.state_json
    assert executed == []  # nothing runs before a decision
    durable.send_decisions("appr-1", [ResumeDecision.approve("d2"), ResumeDecision.deny("d1", "never the db")])
    with handle.result() as result:
        assert "deleted cache" in result.output and "never the db" in result.output
    assert executed == ["cache"]
    assert durable.pending_approval("appr-1", timeout_s=0.1) is None


def test_a_plan_proposed_through_plan_tool_waits_durably_and_runs_each_step_once(dbos_app) -> None:
    from zigai import json as zjson
    from zigai.planning import StepContext, plan_tool

    ran: list[str] = []
    proposal = json.dumps({"plan_id": "migrate", "steps": [
        {"id": "backup"}, {"id": "switch", "depends_on": ["backup"], "requires_approval": True}]})

    def respond(messages, info):
        returns = _turns(messages)
        if not returns:
            return ResponseMessage(parts=(ToolCallPart("run_plan", proposal, "p1"),))
        return ResponseMessage(parts=(TextPart(zjson.dumps(returns[0].content)),))

    def step(ctx: StepContext) -> str:
        ran.append(ctx.step.id)
        return f"{ctx.step.id} done"

    durable = DurableAgent(Agent(FunctionModel(respond), tools=[plan_tool(step)]), name="plans")
    dbos_app()
    handle = durable.start("migrate the database", workflow_id="plan-1")
    pending = None
    deadline = time.monotonic() + 20
    while pending is None and time.monotonic() < deadline:
        pending = durable.pending_approval("plan-1", timeout_s=1)
    assert pending is not None and [c.tool_name for c in pending.calls] == ["run_plan"]
    assert pending.calls[0].args_as_dict()["plan_id"] == "migrate"
    assert ran == []  # the plan waits for its approval like any approval-gated tool
    durable.send_decisions("plan-1", [ResumeDecision.approve("p1")])
    with handle.result() as result:
        assert json.loads(result.output)["steps"] == [
            {"id": "backup", "status": "succeeded", "output": "backup done"},
            {"id": "switch", "status": "succeeded", "output": "switch done"},
        ]
    assert ran == ["backup", "switch"]


def test_a_paused_run_without_decisions_times_out_with_a_named_error(dbos_app) -> None:
    def respond(messages, info):
        return ResponseMessage(parts=(ToolCallPart("ask", "{}", "a1"),))

    tool = Tool.manual("ask", "ask", {"type": "object"}, lambda args: "x", execution=ToolExecution.external)
    durable = DurableAgent(Agent(FunctionModel(respond), tools=[tool]), name="timeouts", approval_timeout_s=0.2)
    dbos_app()
    with pytest.raises(DurableApprovalTimedOut) as info:
        durable.run("q", workflow_id="late-1")
    assert info.value.workflow_id == "late-1"
    assert durable.pending_approval("never-started", timeout_s=0.1) is None


def test_durable_tools_refuse_to_run_outside_their_reserved_step(dbos_app) -> None:
    from zigai.durable.dbos_agent import _Binding, _durable_tool

    binding = _Binding(StepCounter("loose"))
    tool = _durable_tool(Tool.manual("t", "t", {"type": "object"}, lambda args: 1), binding)
    with pytest.raises(DurableStepUnbound):
        tool.call("{}", ToolRunContext(tool_call_id="nobody-reserved-this"))


def test_the_durable_model_is_buffered_and_forwards_its_identity(dbos_app) -> None:
    from zigai.durable.dbos_agent import _Binding, _DurableModel
    from zigai.model import ModelRequest
    from zigai.settings import ModelSettings

    class WithSettings(FunctionModel):
        settings = ModelSettings(temperature=0.5)

    inner = WithSettings(lambda m, i: ResponseMessage(parts=(TextPart("x"),)))
    wrapped = _DurableModel(inner, _Binding(StepCounter("m")))
    assert (wrapped.model_name, wrapped.provider_name) == (inner.model_name, inner.provider_name)
    assert wrapped.profile == inner.profile and wrapped.settings == inner.settings
    assert not hasattr(_DurableModel(FunctionModel(lambda m, i: None), _Binding(StepCounter("m"))), "settings")
    with pytest.raises(DurableSetupError):
        wrapped.stream(ModelRequest(messages=()))


def test_results_of_existing_runs_and_result_ownership(dbos_app) -> None:
    from zigai.durable.dbos_agent import _decode_result

    durable = DurableAgent(Agent(FunctionModel(lambda m, i: ResponseMessage(parts=(TextPart("hi"),)))),
                           name="existing")
    assert durable.name == "existing"
    dbos_app()
    durable.run("x", workflow_id="ex-1").close()
    result = durable.result("ex-1")
    assert result.output == "hi" and len(result.messages) == 2
    result.close()
    with pytest.raises(ResultClosed):
        result.workflow_id  # noqa: B018
    with pytest.raises(DurableSetupError):
        _decode_result("w", '{"v": 7}')


# -- Agent(output_type=...) on a durable run (issue 35's typed output meets issue 34) --------------


FORECAST_TEXT = json.dumps({"city": "Oslo", "temp": 3})


def test_a_typed_agent_runs_durably_and_its_result_is_the_typed_value(dbos_app, tmp_path: Path) -> None:
    from dataclasses import dataclass

    from zigai.durable import DurableRuns

    @dataclass
    class Forecast:
        city: str
        temp: int

    durable = DurableAgent(Agent(FunctionModel(stream_function=lambda m, i: [FORECAST_TEXT]), output_type=Forecast),
                           name="typed", stream_events=True)
    dbos_app()
    with durable.run("weather", workflow_id="typed-1") as result:
        assert result.output == Forecast("Oslo", 3)  # the same value Agent.run gives
    with durable.result("typed-1") as again:  # read back from the recorded result
        assert again.output == Forecast("Oslo", 3)
    final = [record for record in durable.events("typed-1", timeout_s=10) if record["kind"] == "final"]
    assert final == [{"kind": "final", "output": {"city": "Oslo", "temp": 3}}]
    # a process without the agent reads the validated JSON the value was decoded from
    with DurableRuns(f"sqlite:///{tmp_path / 'dbos.sqlite'}") as runs, runs.result("typed-1") as plain:
        assert plain.output == {"city": "Oslo", "temp": 3}


def test_a_typed_union_output_decodes_into_the_member_the_model_chose(dbos_app) -> None:
    from dataclasses import dataclass

    @dataclass
    class Sunny:
        uv: int

    @dataclass
    class Rainy:
        uv: int
        mm: int = 0

    def model(messages, info) -> ResponseMessage:
        rainy = next(t.name for t in info.output_tools if "Rainy" in t.name)
        return ResponseMessage(parts=(ToolCallPart(rainy, json.dumps({"uv": 1}), "o1"),))

    durable = DurableAgent(Agent(FunctionModel(model), output_type=[Sunny, Rainy], output_mode="tool"),
                           name="union")
    dbos_app()
    with durable.run("weather", workflow_id="union-1") as result:
        assert result.output == Rainy(1)
