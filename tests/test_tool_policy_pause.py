"""A paused call carries the arguments it will run with: the policies' arguments stage
runs once, before the pause; the approver sees its result and a resume executes exactly
that (issue 31, defect 1).  Driven through real runs and persisted state documents."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import pytest

from zigai.agent import (
    Agent,
    InvalidPausedState,
    PausedStateIntegrityError,
    ResumeDecision,
)
from zigai.messages import ResponseMessage, TextPart, ToolCallPart
from zigai.testing import FunctionModel
from zigai.tool import Policy, Tool, ToolExecution, ToolPolicyContext

SCHEMA = {
    "type": "object",
    "properties": {"x": {"type": "integer", "maximum": 5}},
    "required": ["x"],
    "additionalProperties": False,
}
KEY = b"k" * 32


class Doubling(Policy):
    """An arguments stage that doubles ``x`` and counts how often it ran."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def arguments(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        self.seen.append(dict(arguments))
        return {"x": arguments["x"] * 2}


class ApproveAll(Policy):
    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def approval(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> bool:
        self.seen.append(dict(arguments))
        return True


def _model(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
    if sum(isinstance(m, ResponseMessage) for m in messages) == 0:
        return ResponseMessage((ToolCallPart("act", '{"x":1}', "c0"),))
    return ResponseMessage((TextPart("done"),))


def _agent(ran: list[dict[str, Any]], *policies: Policy, static: bool = True, key: bytes | None = None) -> Agent:
    execution = ToolExecution.requires_approval if static else ToolExecution.immediate
    tool = Tool.manual("act", "Act.", SCHEMA, lambda args: ran.append(dict(args)) or "ok", execution=execution)
    return Agent(FunctionModel(_model), tools=[tool], tool_policies=list(policies), state_key=key)


@pytest.mark.parametrize("static", [True, False], ids=["requires_approval_tool", "approval_stage"])
def test_the_approver_sees_the_resolved_arguments_and_resume_runs_exactly_them(static: bool) -> None:
    doubling, approve, ran = Doubling(), ApproveAll(), []
    policies: tuple[Policy, ...] = (doubling,) if static else (doubling, approve)
    with _agent(ran, *policies, static=static).run_until_pause("go") as outcome:
        (call,) = outcome.paused.calls
        state_json = outcome.paused.state_json
    assert call.args_as_dict() == {"x": 2} and call.resolved  # what the approver is shown
    assert approve.seen == ([] if static else [{"x": 2}])
    # A fresh agent (a new process would be the same): the stage does not run again.
    fresh, ran_after = Doubling(), []
    resumed_policies: tuple[Policy, ...] = (fresh,) if static else (fresh, ApproveAll())
    with _agent(ran_after, *resumed_policies, static=static).resume_run(
        state_json, [ResumeDecision.approve("c0")]
    ) as resumed:
        assert resumed.result.output == "done"
    assert ran_after == [{"x": 2}]
    assert doubling.seen == [{"x": 1}] and fresh.seen == []


def test_without_an_arguments_stage_the_pending_call_keeps_the_models_text() -> None:
    with _agent([]).run_until_pause("go") as outcome:
        (call,) = outcome.paused.calls
        state = json.loads(outcome.paused.state_json)
    assert call.args == '{"x":1}' and not call.resolved
    assert "resolved" not in state["state"]["pending_calls"][0]


def _edit_call(state_json: str, key: str, value: Any) -> str:
    """Rewrite one field of the pending call and recompute the (unkeyed) digest, as anyone can."""
    state = json.loads(state_json)["state"]
    state["pending_calls"][0][key] = value
    text = json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    return f'{{"version":1,"kind":"zigai.paused_run","digest":"{digest}","state":{text}}}'


def test_the_keyed_pause_covers_the_resolved_arguments() -> None:
    with _agent([], Doubling(), key=KEY).run_until_pause("go") as outcome:
        state_json = outcome.paused.state_json
    edited = state_json.replace('"args":"{\\"x\\":2}"', '"args":"{\\"x\\":4}"')
    assert edited != state_json
    ran: list[dict[str, Any]] = []
    with pytest.raises(PausedStateIntegrityError):
        _agent(ran, Doubling(), key=KEY).resume_run(edited, [ResumeDecision.approve("c0")])
    assert ran == []


def test_resolved_arguments_are_checked_against_the_tool_schema_on_resume() -> None:
    with _agent([], Doubling()).run_until_pause("go") as outcome:
        state_json = outcome.paused.state_json
    ran: list[dict[str, Any]] = []
    with pytest.raises(InvalidPausedState, match="no longer fit tool 'act'"):
        _agent(ran, Doubling()).resume_run(_edit_call(state_json, "args", '{"x":6}'), [ResumeDecision.approve("c0")])
    with pytest.raises(InvalidPausedState, match="pending call 'c0'"):
        _agent(ran, Doubling()).resume_run(_edit_call(state_json, "args", "[1]"), [ResumeDecision.approve("c0")])
    # The schema's exact limit still runs.
    with _agent(ran, Doubling()).resume_run(
        _edit_call(state_json, "args", '{"x":5}'), [ResumeDecision.approve("c0")]
    ) as resumed:
        assert resumed.result.output == "done"
    assert ran == [{"x": 5}]


def test_a_resolved_marker_other_than_true_is_refused() -> None:
    with _agent([], Doubling()).run_until_pause("go") as outcome:
        state_json = outcome.paused.state_json
    forged = _edit_call(state_json, "resolved", False)
    with pytest.raises(InvalidPausedState, match="resolved must be true"):
        _agent([], Doubling()).resume_run(forged, [ResumeDecision.approve("c0")])


def test_a_waiting_call_with_invalid_arguments_keeps_the_models_text() -> None:
    def model(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if sum(isinstance(m, ResponseMessage) for m in messages) == 0:
            return ResponseMessage((ToolCallPart("act", '{"x":"one"}', "c0"),))
        return ResponseMessage((TextPart("done"),))

    doubling = Doubling()
    tool = Tool.manual("act", "Act.", SCHEMA, lambda args: "ok", execution=ToolExecution.requires_approval)
    agent = Agent(FunctionModel(model), tools=[tool], tool_policies=[doubling])
    with agent.run_until_pause("go") as outcome:
        (call,) = outcome.paused.calls
    assert (call.args, call.resolved, doubling.seen) == ('{"x":"one"}', False, [])
