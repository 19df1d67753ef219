"""Every call of a pausing response runs the policies' stages once across the pause.

The model answers ``act(x=1)`` (an approval stage gates it) and ``free(x=2)`` (no approval):
the arguments and approval stages run for both at the pause; the resume takes their
persisted verdicts instead of running the stages again, and ``free`` runs with exactly the
arguments resolved at the pause (issue 31, defect 1).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest

from zigai.agent import (
    Agent,
    InvalidPausedState,
    PausedStateIntegrityError,
    ResumeDecision,
)
from zigai.agent.deferred import stringify_resume_decisions
from zigai.messages import ResponseMessage, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from zigai.testing import FunctionModel
from zigai.tool import ModelRetry, Policy, Tool, ToolExecution, ToolPolicyContext
from zigai.tool.policy import ToolRefused

SCHEMA = {
    "type": "object",
    "properties": {"x": {"type": "integer", "maximum": 9}},
    "required": ["x"],
    "additionalProperties": False,
}
KEY = b"s" * 32


class Counting(Policy):
    """Adds a growing offset to ``x`` (a second run would change the arguments) and gates ``act``."""

    def __init__(self, verdict: str = "args") -> None:
        self.arguments_runs: Counter[str] = Counter()
        self.approval_runs: Counter[str] = Counter()
        self.verdict = verdict

    def arguments(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        self.arguments_runs[ctx.tool_call_id] += 1
        if ctx.tool_name == "free" and self.verdict == "retry":
            raise ModelRetry("free needs another x")
        if ctx.tool_name == "free" and self.verdict == "refused":
            raise ToolRefused("free is off today")
        return {"x": arguments["x"] + self.arguments_runs[ctx.tool_call_id]}

    def approval(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> bool:
        self.approval_runs[ctx.tool_call_id] += 1
        return ctx.tool_name == "act"


def _model(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
    if sum(isinstance(m, ResponseMessage) for m in messages) == 0:
        return ResponseMessage((ToolCallPart("act", '{"x":1}', "c0"), ToolCallPart("free", '{"x":2}', "c1")))
    return ResponseMessage((TextPart("done"),))


def _agent(ran: list[tuple[str, dict[str, Any]]], policy: Policy, key: bytes | None = None) -> Agent:
    tools = [
        Tool.manual(name, name, SCHEMA, lambda args, name=name: ran.append((name, dict(args))) or "ok")
        for name in ("act", "free")
    ]
    return Agent(FunctionModel(_model), tools=tools, tool_policies=[policy], state_key=key)


@pytest.mark.parametrize("route", ["same_agent", "json_round_trip", "keyed_fresh_agent"])
def test_each_call_runs_the_stages_once_across_pause_and_resume(route: str) -> None:
    key = KEY if route == "keyed_fresh_agent" else None
    policy, ran = Counting(), []
    agent = _agent(ran, policy, key)
    with agent.run_until_pause("go") as outcome:
        (call,) = outcome.paused.calls
        state_json = outcome.paused.state_json
    assert (call.tool_call_id, call.args_as_dict()) == ("c0", {"x": 2})
    decision = [ResumeDecision.approve("c0")]
    if route == "same_agent":
        resumed = agent.resume_run(state_json, decision)
    elif route == "json_round_trip":
        resumed = agent.resume_run_json(state_json, stringify_resume_decisions(decision, pause=state_json))
    else:
        policy = Counting()  # a new process: only the keyed document carries the verdicts
        resumed = _agent(ran, policy, key).resume_run(state_json, decision)
    with resumed:
        assert resumed.result.output == "done"
    assert sorted(ran) == [("act", {"x": 2}), ("free", {"x": 3})]  # exactly what the pause resolved
    if route == "keyed_fresh_agent":
        assert policy.arguments_runs == policy.approval_runs == Counter()
    else:
        assert policy.arguments_runs == policy.approval_runs == Counter({"c0": 1, "c1": 1})
    settled = json.loads(state_json)["state"]["settled_calls"]
    assert settled == [{"tool_call_id": "c1", "tool_name": "free", "verdict": "args", "value": '{"x":3}'}]


@pytest.mark.parametrize("verdict", ["retry", "refused"])
def test_a_retry_or_refusal_at_the_pause_is_what_the_resume_applies(verdict: str) -> None:
    policy, ran = Counting(verdict), []
    agent = _agent(ran, policy)
    with agent.run_until_pause("go") as outcome:
        state_json = outcome.paused.state_json
    (settled,) = json.loads(state_json)["state"]["settled_calls"]
    assert settled["verdict"] == verdict
    with agent.resume_run(state_json, [ResumeDecision.approve("c0")]) as resumed:
        assert resumed.result.output == "done"
        answers = {
            p.tool_call_id: p for m in resumed.result.all_messages() for p in getattr(m, "parts", ())
            if isinstance(p, (RetryPromptPart, ToolReturnPart))
        }
    assert ran == [("act", {"x": 2})]
    assert "free" in str(answers["c1"].content) and not isinstance(answers["c0"], RetryPromptPart)
    assert policy.arguments_runs == Counter({"c0": 1, "c1": 1})
    assert policy.approval_runs == Counter({"c0": 1})  # a sent-back call never reaches approval


def _edit_settled(state_json: str, value: str) -> str:
    """Rewrite the settled call's arguments and recompute the unkeyed digest, as anyone can."""
    document = json.loads(state_json)
    state = document["state"]
    state["settled_calls"][0]["value"] = value
    text = json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    mac = f'"mac":"{document["mac"]}",' if "mac" in document else ""
    return f'{{"version":1,"kind":"zigai.paused_run","digest":"{digest}",{mac}"state":{text}}}'


def test_a_keyed_pause_refuses_edited_settled_arguments() -> None:
    with _agent([], Counting(), KEY).run_until_pause("go") as outcome:
        state_json = outcome.paused.state_json
    edited = _edit_settled(state_json, '{"x":9}')
    ran: list[tuple[str, dict[str, Any]]] = []
    with pytest.raises(PausedStateIntegrityError):
        _agent(ran, Counting(), KEY).resume_run(edited, [ResumeDecision.approve("c0")])
    assert ran == []


def test_settled_arguments_are_checked_against_the_tools_current_schema() -> None:
    with _agent([], Counting()).run_until_pause("go") as outcome:
        state_json = outcome.paused.state_json
    ran: list[tuple[str, dict[str, Any]]] = []
    with pytest.raises(InvalidPausedState, match="settled call 'c1' no longer fit tool 'free'"):
        _agent(ran, Counting()).resume_run(_edit_settled(state_json, '{"x":10}'), [ResumeDecision.approve("c0")])
    with pytest.raises(InvalidPausedState, match="settled call 'c1'"):
        _agent(ran, Counting()).resume_run(_edit_settled(state_json, "[1]"), [ResumeDecision.approve("c0")])
    assert ran == []
    with _agent(ran, Counting()).resume_run(
        _edit_settled(state_json, '{"x":9}'), [ResumeDecision.approve("c0")]  # the schema's exact limit
    ) as resumed:
        assert resumed.result.output == "done"
    assert sorted(ran) == [("act", {"x": 2}), ("free", {"x": 9})]


def _edit_state(state_json: str, edit: Any) -> str:
    state = json.loads(state_json)["state"]
    edit(state)
    text = json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    return f'{{"version":1,"kind":"zigai.paused_run","digest":"{digest}","state":{text}}}'


def _set(field: str, value: Any) -> Any:
    return lambda state: state["settled_calls"][0].__setitem__(field, value)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_set("verdict", "maybe"), r"settled_calls\[0\].verdict 'maybe' is not one of"),
        (_set("tool_call_id", "c9"), "settled call 'c9' is not a call of the last response"),
        (_set("tool_name", "act"), "settled call 'c1' is not a call of the last response"),
        (lambda state: state["settled_calls"][0].update(tool_call_id="c0", tool_name="act"),
         "settled call 'c0' appears twice or contradicts its pending call"),
        (lambda state: state["settled_calls"].append(dict(state["settled_calls"][0])),
         "settled call 'c1' appears twice"),
        (_set("value", 3), r"settled_calls\[0\].value must be a string"),
        (_set("extra", 1), r"unknown \['extra'\]"),
        (lambda state: state.__setitem__("settled_calls", []), "present but empty"),
        (lambda state: state.__setitem__("settled_calls", {}), "settled_calls must be an array"),
    ],
)
def test_malformed_settled_calls_are_refused(edit: Any, message: str) -> None:
    with _agent([], Counting()).run_until_pause("go") as outcome:
        state_json = outcome.paused.state_json
    with pytest.raises(InvalidPausedState, match=message):
        _agent([], Counting()).resume_run(_edit_state(state_json, edit), [ResumeDecision.approve("c0")])


def test_a_settled_call_of_a_tool_the_agent_no_longer_has_is_refused() -> None:
    with _agent([], Counting()).run_until_pause("go") as outcome:
        state_json = outcome.paused.state_json
    act = Tool.manual("act", "act", SCHEMA, lambda args: "ok")
    agent = Agent(FunctionModel(_model), tools=[act], tool_policies=[Counting()])
    with pytest.raises(InvalidPausedState, match="settled call 'c1' names 'free', which is not a function tool"):
        agent.resume_run(state_json, [ResumeDecision.approve("c0")])


def test_a_state_written_before_settled_calls_still_resumes_and_runs_the_stages_then() -> None:
    with _agent([], Counting()).run_until_pause("go") as outcome:
        state_json = outcome.paused.state_json
    old = _edit_state(state_json, lambda state: state.pop("settled_calls"))
    policy, ran = Counting(), []
    with _agent(ran, policy).resume_run(old, [ResumeDecision.approve("c0")]) as resumed:
        assert resumed.result.output == "done"
    assert sorted(ran) == [("act", {"x": 2}), ("free", {"x": 3})]
    assert policy.arguments_runs == policy.approval_runs == Counter({"c1": 1})


def test_a_waiting_call_whose_stage_retried_meets_that_verdict_not_the_stage_again() -> None:
    def model(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if sum(isinstance(m, ResponseMessage) for m in messages) == 0:
            return ResponseMessage((ToolCallPart("free", '{"x":2}', "c1"),))
        return ResponseMessage((TextPart("done"),))

    class RetryFree(Policy):
        def __init__(self) -> None:
            self.runs: Counter[str] = Counter()

        def arguments(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
            self.runs[ctx.tool_call_id] += 1
            raise ModelRetry("free needs another x")

    policy, ran = RetryFree(), []
    tool = Tool.manual("free", "free", SCHEMA, lambda args: ran.append(dict(args)) or "ok",
                       execution=ToolExecution.requires_approval)
    agent = Agent(FunctionModel(model), tools=[tool], tool_policies=[policy])
    with agent.run_until_pause("go") as outcome:
        (call,) = outcome.paused.calls
        state_json = outcome.paused.state_json
    assert (call.args, call.resolved) == ('{"x":2}', False)  # the approver sees the model's text
    assert json.loads(state_json)["state"]["settled_calls"][0]["verdict"] == "retry"
    forged = _edit_state(state_json, _set("verdict", "args"))  # a waiting call's arguments live in its entry
    with pytest.raises(InvalidPausedState, match="settled call 'c1' appears twice or contradicts its pending call"):
        agent.resume_run(forged, [ResumeDecision.approve("c1")])
    with agent.resume_run(state_json, [ResumeDecision.approve("c1")]) as resumed:
        assert resumed.result.output == "done"
        retries = [p for m in resumed.result.all_messages() for p in getattr(m, "parts", ())
                   if isinstance(p, RetryPromptPart)]
    assert ran == [] and [str(p.content) for p in retries] == ["free needs another x"]
    assert policy.runs == Counter({"c1": 1})
