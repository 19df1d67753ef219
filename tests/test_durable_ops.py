"""Durable runs in process (SQLite): the tool wrapper hook, output-function steps, event records,
and the operations API and ``zigai durable`` CLI (list, show, cancel, resume, queue)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from zigai import Agent, Tool, ToolExecution
from zigai.agent import InvalidAgentConfiguration, ResumeDecision
from zigai.durable import (
    DurableAgent,
    DurableRunCancelled,
    DurableRuns,
    DurableSetupError,
    current_step_id,
)
from zigai.durable.codec import decode_output_return, encode_output_return
from zigai.messages import ResponseMessage, TextPart, ToolCallPart, ToolReturnPart
from zigai.output import OutputChoice, OutputResult, OutputSpec
from zigai.testing import FunctionModel
from zigai.tool import ModelRetry
from zigai.toolset import Toolset

dbos = pytest.importorskip("dbos", reason="durable tests need DBOS: pip install -e '.[dev]' (pins dbos)")

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


@pytest.fixture
def app(tmp_path: Path):
    from dbos import DBOS

    url = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    DBOS(config={"name": "zigai-durable-ops", "log_level": "WARNING", "system_database_url": url})
    yield url
    DBOS.destroy(destroy_registry=True)


def _calls_then_text(*calls: tuple[str, str]):
    def respond(messages, info):
        turn = sum(1 for m in messages if isinstance(m, ResponseMessage))
        if turn < len(calls):
            name, args = calls[turn]
            return ResponseMessage(parts=(ToolCallPart(name, args, f"c{turn}"),))
        returns = [str(p.content) for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        return ResponseMessage(parts=(TextPart("|".join(returns)),))
    return respond


# -- Agent.tool_wrapper ---------------------------------------------------------------------------


def test_the_tool_wrapper_sees_every_resolved_tool_of_every_step_and_must_keep_names() -> None:
    seen: list[str] = []

    def wrapper(tool: Tool) -> Tool:
        seen.append(tool.name)
        return tool.replace(invoke=lambda value, ctx: f"wrapped {tool.name}")

    echo = Tool.manual("echo", "echo", SCHEMA, lambda args: "plain")
    direct = Agent(FunctionModel(_calls_then_text(("echo", '{"n": 1}'))), tools=[echo], tool_wrapper=wrapper)
    assert direct.run("go").output == "wrapped echo"
    assert seen == ["echo"]  # the direct-tool table is wrapped once and cached per agent
    seen.clear()
    toolset = Agent(FunctionModel(_calls_then_text(("t__echo", '{"n": 1}'))), toolsets=[Toolset([echo], namespace="t")],
                    tool_wrapper=wrapper)
    assert toolset.run("go").output == "wrapped t__echo"
    assert seen == ["t__echo", "t__echo"]  # resolved (and wrapped) again for every model step
    with pytest.raises(InvalidAgentConfiguration, match="tool_wrapper must be callable"):
        Agent(FunctionModel(_calls_then_text()), tool_wrapper="nope")  # type: ignore[arg-type]
    renamed = Agent(FunctionModel(_calls_then_text(("echo", "{}"))), tools=[echo],
                    tool_wrapper=lambda tool: tool.replace(name="other"))
    with pytest.raises(InvalidAgentConfiguration, match="same name"):
        renamed.run("go")


def test_a_durable_agent_keeps_the_agents_own_tool_wrapper_inside_its_step(app) -> None:
    from dbos import DBOS

    def mine(tool: Tool) -> Tool:
        return tool.replace(invoke=lambda value, ctx: f"mine {current_step_id()}")

    echo = Tool.manual("echo", "echo", SCHEMA, lambda args: "plain")
    durable = DurableAgent(Agent(FunctionModel(_calls_then_text(("echo", '{"n": 1}'))), tools=[echo],
                                 tool_wrapper=mine), name="own-wrapper")
    DBOS.launch()
    with durable.run("go", workflow_id="ow-1") as result:
        assert result.output == "mine ow-1/1"


# -- output functions ------------------------------------------------------------------------------


def test_output_function_returns_round_trip_through_their_step_record() -> None:
    assert decode_output_return(encode_output_return({"a": 1})) == {"a": 1}
    assert decode_output_return(encode_output_return(OutputResult.output(3))) == OutputResult.output(3)
    assert decode_output_return(encode_output_return(OutputResult.retry("again"))) == OutputResult.retry("again")
    for bad in ('{"v": 1, "kind": "other"}', '{"v": 2, "kind": "value"}', "[]"):
        with pytest.raises(DurableSetupError):
            decode_output_return(bad)


def test_a_native_output_function_is_a_step_of_its_own_and_its_retries_are_recorded(app) -> None:
    from dbos import DBOS

    ran: list[str] = []

    def finish(ctx, value):
        ran.append(str(current_step_id()))
        if len(ran) == 1:
            return OutputResult.retry("bigger please")
        if len(ran) == 2:
            raise ModelRetry("still too small")
        return {"total": value["n"] * 2}

    def respond(messages, info):
        turn = sum(1 for m in messages if isinstance(m, ResponseMessage))
        return ResponseMessage(parts=(TextPart(json.dumps({"n": turn + 1})),))

    spec = OutputSpec.native([OutputChoice("total", SCHEMA, function=finish)])
    durable = DurableAgent(Agent(FunctionModel(respond), output=spec, max_output_retries=3), name="native-out")
    DBOS.launch()
    with durable.run("go", workflow_id="no-1") as result:
        assert result.output == {"total": 6}
    assert ran == ["no-1/1", "no-1/3", "no-1/5"]
    steps = [s["function_name"] for s in DBOS.list_workflow_steps("no-1")]
    assert steps == ["zigai.model_request#0", "zigai.output_function#1:total", "zigai.model_request#2",
                     "zigai.output_function#3:total", "zigai.model_request#4", "zigai.output_function#5:total"]
    ran.clear()
    with durable.run("go", workflow_id="no-1") as again:  # recorded: nothing runs again
        assert again.output == {"total": 6}
    assert ran == []


def test_an_agent_without_output_functions_keeps_its_output_spec(app) -> None:
    from zigai.durable.dbos_agent import _Binding, _durable_output
    from zigai.durable.ids import StepCounter

    spec = OutputSpec.native([OutputChoice("total", SCHEMA)])
    assert _durable_output(spec, _Binding(StepCounter("r"))) is spec


# -- event records in process ----------------------------------------------------------------------


def test_streamed_records_cover_tool_errors_and_pauses(app) -> None:
    from dbos import DBOS

    def flaky(args):
        raise ModelRetry("not yet")

    def respond(messages, info):
        turn = sum(1 for m in messages if isinstance(m, ResponseMessage))
        calls = [("flaky", '{"n": 1}'), ("gated", '{"n": 2}')]
        if turn < 2:
            name, args = calls[turn]
            yield DeltaToolCall(name, args[:3], f"c{turn}", key=0)
            yield DeltaToolCall(json_args=args[3:], key=0)  # argument deltas are not records
        else:
            yield DeltaThinking("hm", key=0)
            yield DeltaThinking("m", key=0)
            yield "thinking "
            yield "done"

    from zigai.testing import DeltaThinking, DeltaToolCall

    tools = [Tool.manual("flaky", "f", SCHEMA, flaky),
             Tool.manual("gated", "g", SCHEMA, lambda args: "ok", execution=ToolExecution.requires_approval)]
    durable = DurableAgent(Agent(FunctionModel(stream_function=respond), tools=tools, max_tool_retries=1),
                           name="streaming", stream_events=True)
    DBOS.launch()
    handle = durable.start("go", workflow_id="st-1")
    pending = None
    while pending is None:
        pending = durable.pending_approval("st-1", timeout_s=1)
    durable.send_decisions("st-1", [ResumeDecision.approve("c1")])
    handle.result().close()
    records = list(durable.events("st-1", timeout_s=10))
    kinds = [(r["kind"], r.get("step")) for r in records]
    assert kinds == [
        ("model_request", 0), ("model_response", 0), ("tool_call", 1), ("tool_error", 1),
        ("model_request", 2), ("model_response", 2), ("paused", None), ("tool_call", 3), ("tool_result", 3),
        ("model_request", 4), ("thinking_delta", 4), ("thinking_delta", 4), ("text_delta", 4), ("text_delta", 4),
        ("model_response", 4), ("final", None),
    ]
    assert [r["text"] for r in records[10:14]] == ["hm", "m", "thinking ", "done"]
    assert records[14]["text"] == "thinking done"
    assert records[3]["error"] == "ModelRetry: not yet"
    assert records[6] == {"kind": "paused", "round": 0, "tool_call_ids": ["c1"]}


# -- operations and the CLI ------------------------------------------------------------------------


def _cli(*argv: str) -> tuple[int, str, str]:
    from zigai.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), env={}, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_cancel_and_resume_a_run_through_the_api_and_the_cli(app) -> None:
    from dbos import DBOS

    ran: list[int] = []

    def ship(args):
        ran.append(args["n"])
        return f"done {args['n']}"

    DurableAgent(Agent(FunctionModel(_calls_then_text(("ship", '{"n": 5}'))),
                 tools=[Tool.manual("ship", "s", SCHEMA, ship)]), name="ops")
    DBOS.launch()
    with DurableRuns(app) as runs:
        # a queue no process serves holds the run, so cancelling it races nothing
        runs.enqueue("ops", "go", workflow_id="ops-1", queue="held")
        assert [(r.workflow_id, r.agent, r.status) for r in runs.list()] == [("ops-1", "ops", "ENQUEUED")]
        code, out, _ = _cli("durable", "cancel", "ops-1", "--db", app)
        assert (code, out) == (0, "cancel: ops-1\n")
        assert runs.inspect("ops-1").summary.status == "CANCELLED"
        with pytest.raises(DurableRunCancelled, match="zigai durable resume ops-1"):
            runs.result("ops-1")
        code, out, _ = _cli("durable", "list", "--db", app)
        assert code == 0 and out.splitlines()[1].split() == ["ops-1", "ops", "CANCELLED", "-"]  # off its queue
        assert ran == []
        code, out, _ = _cli("durable", "resume", "ops-1", "--db", app, "--json")  # DBOS's internal queue: served here
        assert (code, json.loads(out)) == (0, {"workflow_id": "ops-1", "action": "resume"})
        code, out, _ = _cli("durable", "show", "ops-1", "--db", app, "--wait", "60")
        lines = out.splitlines()
        assert code == 0 and lines[0].startswith("ops-1  agent=ops  status=SUCCESS")
        assert lines[1].split() == ["1", "ok", "zigai.model_request#0"]
        assert lines[-1] == 'output: "done 5"'
        assert ran == [5]
        code, out, _ = _cli("durable", "list", "--db", app, "--json", "--agent", "ops", "--status", "SUCCESS")
        assert [r["workflow_id"] for r in json.loads(out)] == ["ops-1"]


def test_a_failed_run_shows_its_error_and_operator_mistakes_exit_2(app, monkeypatch) -> None:
    from dbos import DBOS

    def boom(args):
        raise RuntimeError("card declined")

    durable = DurableAgent(Agent(FunctionModel(_calls_then_text(("boom", '{"n": 1}'))),
                                 tools=[Tool.manual("boom", "b", SCHEMA, boom)]), name="failing")
    DBOS.launch()
    with pytest.raises(RuntimeError):
        durable.run("go", workflow_id="fail-1")
    with DurableRuns(app) as runs:
        details = runs.inspect("fail-1")
        assert details.summary.status == "ERROR" and "card declined" in (details.error or "")
        assert [s.outcome for s in details.steps] == ["ok", "error"]
        assert "RuntimeError: card declined" in (details.steps[1].error or "")
        from zigai.durable import runs as runs_module

        monkeypatch.setattr(runs_module, "_PAGE", 1)  # steps are read in pages
        assert runs.inspect("fail-1").steps == details.steps
    code, out, _ = _cli("durable", "show", "fail-1", "--db", app)
    assert code == 0 and "error: RuntimeError: card declined" in out and "  (RuntimeError: card declined)" in out
    code, out, _ = _cli("durable", "show", "fail-1", "--db", app, "--json")
    assert json.loads(out)["error"].startswith("RuntimeError")
    code, _, err = _cli("durable", "show", "nope", "--db", app)
    assert code == 2 and "no durable run 'nope'" in err
    assert _cli("durable", "list")[0] == 2  # no --db and no ZIGAI_DURABLE_DB
    assert _cli("durable", "list", "--db", app, "--limit", "0")[0] == 2
    code, out, _ = _cli("durable", "list", "--db", app, "--limit", "1")
    assert code == 0 and len(out.splitlines()) == 2
    code, _, err = _cli("durable")
    assert code == 2 and "needs an action" in err
    with pytest.raises(DurableSetupError):
        DurableRuns("not a url")
    missing = app.replace("dbos.sqlite", "missing.sqlite")
    with pytest.raises(DurableSetupError, match="no DBOS system database"):
        DurableRuns(missing)
    code, _, err = _cli("durable", "list", "--db", missing)
    assert code == 2 and "no DBOS system database" in err and not Path(missing[10:]).exists()


def test_a_queued_run_is_served_by_this_process_and_enqueued_by_a_client(app) -> None:
    from dbos import DBOS

    echo = Tool.manual("echo", "echo", SCHEMA, lambda args: f"echo {args['n']}")
    durable = DurableAgent(Agent(FunctionModel(_calls_then_text(("echo", '{"n": 3}'))), tools=[echo]), name="queued")
    DBOS.launch()
    queue = DBOS.register_queue("ops-queue", polling_interval_sec=0.1)
    with durable.enqueue("go", workflow_id="q-1", queue=queue).result() as result:
        assert result.output == "echo 3"
    @DBOS.workflow(name="plain-workflow")
    def plain() -> str:
        return "plain"

    with dbos.SetWorkflowID("plain-1"):
        plain()
    with DurableRuns(app) as runs:
        assert runs.inspect("plain-1").summary.agent == "plain-workflow"  # shown, never listed
        assert "plain-1" not in [r.workflow_id for r in runs.list()]
        assert runs.enqueue("queued", "again", workflow_id="q-2", queue="ops-queue") == "q-2"
        with runs.result("q-2", timeout_s=60) as result:
            assert result.output == "echo 3"
        assert runs.inspect("q-2").summary.queue == "ops-queue"
