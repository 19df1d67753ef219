"""Forged pause state cannot run undecided calls; keyed integrity; bounded deferred JSON.

Issue 11 items 4-6: a paused-state document is application data that may come back
edited (with a recomputed digest).  A resume derives what must wait from the *current*
tools, an optional application key makes edits detectable, and model-supplied arguments
and external result content are parsed with bounded profiles and named errors.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest

from zigai.agent import (
    Agent,
    InvalidAgentConfiguration,
    InvalidPausedState,
    InvalidResumeDecisions,
    ResumeDecision,
    ResumeDecisionMismatch,
    ResumeDecisionsForAnotherPause,
    ResumeDecisionsTooLarge,
    parse_resume_decisions,
    stringify_resume_decisions,
)
from zigai.agent.deferred import (
    DeferredCall,
    PausedStateIntegrityError,
    ResumeDecisionsIntegrityError,
    decode_paused_state,
)
from zigai.agent.paused_state import keyed_mac
from zigai.json import defaults
from zigai.messages import InvalidMessagePart, ResponseMessage, TextPart, ToolCallPart
from zigai.testing import FunctionModel
from zigai.tool import Tool, ToolExecution

EMPTY = {"type": "object", "properties": {"text": {"type": "string"}}}
KEY = b"k" * 32
RAN: list[str] = []


@pytest.fixture(autouse=True)
def _reset() -> None:
    RAN.clear()


def _ran(name: str) -> Any:
    return lambda args: RAN.append(name) or f"{name} ran"


def _tools(publish: ToolExecution = ToolExecution.requires_approval) -> list[Tool]:
    return [
        Tool.manual("lookup", "Look up.", EMPTY, _ran("lookup")),
        Tool.manual("publish", "Publish.", EMPTY, _ran("publish"), execution=publish),
        Tool.manual("ship", "Ship outside.", EMPTY, _ran("ship"), execution=ToolExecution.external),
    ]


def _calls_then_text(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
    if not any(isinstance(m, ResponseMessage) for m in messages):
        return ResponseMessage((
            ToolCallPart("lookup", '{"text":"a"}', "c1"),
            ToolCallPart("publish", '{"text":"news"}', "c2"),
            ToolCallPart("ship", '{"text":"box"}', "c3"),
        ))
    return ResponseMessage((TextPart("done"),))


def _agent(**kwargs: Any) -> Agent:
    tools = kwargs.pop("tools", None) or _tools()
    return Agent(FunctionModel(_calls_then_text), tools=tools, **kwargs)


def _pause(agent: Agent) -> str:
    with agent.run_until_pause("go") as outcome:
        assert outcome.kind == "paused"
        return outcome.paused.state_json


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _forge(state_json: str, edit: Any) -> str:
    """Edit the state and recompute its (unkeyed) digest, as an attacker can."""
    document = json.loads(state_json)
    state = copy.deepcopy(document["state"])
    edit(state)
    document["state"] = state
    document["digest"] = "sha256:" + hashlib.sha256(_canonical(state).encode()).hexdigest()
    return json.dumps(document)


def _drop_pending(call_id: str) -> Any:
    def edit(state: dict[str, Any]) -> None:
        state["pending_calls"] = [c for c in state["pending_calls"] if c["tool_call_id"] != call_id]

    return edit


def _inject_call(name: str, call_id: str) -> Any:
    def edit(state: dict[str, Any]) -> None:
        parts = state["history"][-1]["parts"]
        injected = dict(parts[0], tool_name=name, tool_call_id=call_id, args='{"text":"evil"}')
        parts.append(injected)

    return edit


def _relabel(call_id: str, execution: str) -> Any:
    def edit(state: dict[str, Any]) -> None:
        for call in state["pending_calls"]:
            if call["tool_call_id"] == call_id:
                call["execution"] = execution

    return edit


# -- item 4: the execution mode comes from the current tools ------------------------------------


def test_a_dropped_pending_entry_still_needs_its_decision() -> None:
    agent = _agent()
    forged = _forge(_pause(agent), _drop_pending("c2"))
    assert [c.tool_call_id for c in decode_paused_state(forged).calls] == ["c3"]
    with pytest.raises(ResumeDecisionMismatch) as info:
        agent.resume_run(forged, [ResumeDecision.result("c3", "shipped")])
    assert info.value.missing == ("c2",)
    assert RAN == []


def test_an_injected_call_of_an_approval_tool_never_runs_undecided() -> None:
    agent = _agent()
    forged = _forge(_pause(agent), _inject_call("publish", "c9"))
    decisions = [ResumeDecision.approve("c2"), ResumeDecision.result("c3", "shipped")]
    with pytest.raises(ResumeDecisionMismatch) as info:
        agent.resume_run(forged, decisions)
    assert info.value.missing == ("c9",)
    assert RAN == []
    # An explicit decision for the injected call is honoured like any other.
    with agent.resume_run(forged, [*decisions, ResumeDecision.deny("c9")]) as outcome:
        assert outcome.result.output == "done"
    assert RAN == ["lookup", "publish"]


def test_an_injected_external_call_needs_a_result_decision() -> None:
    agent = _agent()
    forged = _forge(_pause(agent), _inject_call("ship", "c9"))
    with pytest.raises(ResumeDecisionMismatch) as info:
        agent.resume_run(forged, [ResumeDecision.deny("c2"), ResumeDecision.result("c3", "x")])
    assert info.value.missing == ("c9",)


def test_a_relabelled_approval_call_cannot_take_an_external_result() -> None:
    agent = _agent()
    forged = _forge(_pause(agent), _relabel("c2", "external"))
    with pytest.raises(ResumeDecisionMismatch, match="needs approval"):
        agent.resume_run(forged, [ResumeDecision.result("c2", "fake"), ResumeDecision.result("c3", "x")])
    assert RAN == []


def test_a_relabelled_external_call_cannot_be_approved_into_running() -> None:
    agent = _agent()
    forged = _forge(_pause(agent), _relabel("c3", "requires_approval"))
    with pytest.raises(ResumeDecisionMismatch, match="external tools never run"):
        agent.resume_run(forged, [ResumeDecision.deny("c2"), ResumeDecision.approve("c3")])
    assert RAN == []


def test_a_listed_immediate_call_waits_for_its_decision() -> None:
    agent = _agent()

    def list_lookup(state: dict[str, Any]) -> None:
        state["pending_calls"].insert(0, {
            "tool_call_id": "c1", "tool_name": "lookup", "args": '{"text":"a"}',
            "execution": "requires_approval", "approval": "dynamic",
        })

    forged = _forge(_pause(agent), list_lookup)
    decisions = [ResumeDecision.deny("c2"), ResumeDecision.result("c3", "x")]
    with pytest.raises(ResumeDecisionMismatch) as info:
        agent.resume_run(forged, decisions)
    assert info.value.missing == ("c1",)
    with agent.resume_run(forged, [ResumeDecision.deny("c1"), *decisions]) as outcome:
        assert outcome.result.output == "done"
    assert RAN == []


def test_dynamic_approval_is_rechecked_for_calls_the_state_lets_run() -> None:
    def approval(ctx: Any, name: str, args: Any) -> bool:
        return name == "lookup"

    agent = _agent(tool_approval=approval)
    state_json = _pause(agent)
    assert [c.tool_call_id for c in decode_paused_state(state_json).calls] == ["c1", "c2", "c3"]
    forged = _forge(state_json, _drop_pending("c1"))
    with pytest.raises(ResumeDecisionMismatch) as info:
        agent.resume_run(forged, [ResumeDecision.deny("c2"), ResumeDecision.result("c3", "x")])
    assert info.value.missing == ("c1",)
    assert RAN == []


def test_a_tool_that_became_approval_gated_since_the_pause_waits_too() -> None:
    paused_by = _agent(tools=_tools(publish=ToolExecution.immediate))
    state_json = _pause(paused_by)  # only ship waits
    resumed_by = _agent()
    with pytest.raises(ResumeDecisionMismatch) as info:
        resumed_by.resume_run(state_json, [ResumeDecision.result("c3", "x")])
    assert info.value.missing == ("c2",)
    assert RAN == []


def test_a_pending_call_of_a_tool_the_agent_no_longer_has_is_refused() -> None:
    state_json = _pause(_agent())
    without_ship = _agent(tools=_tools()[:2])
    with pytest.raises(InvalidPausedState, match="'ship', which is not a function tool"):
        without_ship.resume_run(state_json, [ResumeDecision.deny("c2"), ResumeDecision.deny("c3")])
    assert RAN == []


# -- item 4: keyed integrity ------------------------------------------------------------------


def test_a_keyed_state_resumes_with_its_key_and_refuses_edits() -> None:
    agent = _agent(state_key=KEY)
    state_json = _pause(agent)
    assert json.loads(state_json)["mac"].startswith("hmac-sha256:")
    decisions = [ResumeDecision.approve("c2"), ResumeDecision.result("c3", "x")]
    forged = _forge(state_json, _drop_pending("c2"))  # keeps the old mac, new digest
    with pytest.raises(PausedStateIntegrityError):
        agent.resume_run(forged, decisions)
    stripped = json.loads(state_json)
    del stripped["mac"]
    with pytest.raises(PausedStateIntegrityError):
        agent.resume_run(json.dumps(stripped), decisions)
    with pytest.raises(PausedStateIntegrityError):
        _agent(state_key=b"x" * 32).resume_run(state_json, decisions)
    assert RAN == []
    with agent.resume_run(state_json, decisions) as outcome:
        assert outcome.result.output == "done"
    assert RAN == ["lookup", "publish"]


def test_an_unkeyed_agent_checks_only_the_digest_of_a_keyed_state() -> None:
    state_json = _pause(_agent(state_key=KEY))
    with _agent().resume_run(state_json, [ResumeDecision.deny("c2"), ResumeDecision.deny("c3")]) as outcome:
        assert outcome.result.output == "done"


def test_keyed_resume_decisions_refuse_edits_and_missing_macs() -> None:
    agent = _agent(state_key=KEY)
    state_json = _pause(agent)
    signed = stringify_resume_decisions(
        [ResumeDecision.deny("c2", "no"), ResumeDecision.result("c3", "x")], key=KEY, pause=state_json
    )
    approved = signed.replace('"action":"deny","reason":"no"', '"action":"approve"')
    assert approved != signed
    with pytest.raises(ResumeDecisionsIntegrityError):
        agent.resume_run_json(state_json, approved)
    unsigned = stringify_resume_decisions([ResumeDecision.approve("c2"), ResumeDecision.result("c3", "x")])
    with pytest.raises(ResumeDecisionsIntegrityError):
        agent.resume_run_json(state_json, unsigned)
    assert RAN == []
    with parse_resume_decisions(signed) as unchecked:  # no key: the mac is not checked
        assert len(unchecked) == 2
    with agent.resume_run_json(state_json, signed) as outcome:
        assert outcome.result.output == "done"
    assert RAN == ["lookup"]


# -- decisions are bound to one pause ----------------------------------------------------------


def _pause_with(agent: Agent, prompt: str) -> Any:
    with agent.run_until_pause(prompt) as outcome:
        assert outcome.paused is not None
        return outcome.paused.state_json, outcome.paused.state_digest


APPROVE = [ResumeDecision.approve("c2"), ResumeDecision.result("c3", "shipped")]


def test_a_decision_signed_for_one_pause_is_refused_by_another_with_the_same_call_ids() -> None:
    agent = _agent(state_key=KEY)
    first, first_digest = _pause_with(agent, "publish the news")
    second, second_digest = _pause_with(agent, "publish other news")
    assert first_digest != second_digest and first_digest == json.loads(first)["digest"]
    signed_for_first = stringify_resume_decisions(APPROVE, key=KEY, pause=first)
    assert json.loads(signed_for_first)["pause"] == first_digest
    with pytest.raises(ResumeDecisionsForAnotherPause):
        agent.resume_run_json(second, signed_for_first)
    # the binding is part of the signed text: pointing it at the other pause breaks the MAC
    rebound = signed_for_first.replace(first_digest, second_digest)
    with pytest.raises(ResumeDecisionsIntegrityError) as refused:
        agent.resume_run_json(second, rebound)
    assert type(refused.value) is ResumeDecisionsIntegrityError
    assert RAN == []
    with agent.resume_run_json(first, signed_for_first) as outcome:
        assert outcome.result.output == "done"
    assert RAN == ["lookup", "publish"]


def test_a_signed_decision_must_be_bound_and_an_unbound_one_is_refused() -> None:
    agent = _agent(state_key=KEY)
    state_json, _ = _pause_with(agent, "go")
    with pytest.raises(InvalidResumeDecisions, match="bound to the pause"):
        stringify_resume_decisions(APPROVE, key=KEY)
    # an unbound document correctly signed (as an older release wrote it) is still refused
    unbound = stringify_resume_decisions(APPROVE)
    body = json.loads(unbound)
    body["mac"] = keyed_mac(KEY, "zigai.resume_decisions", unbound)
    with pytest.raises(ResumeDecisionsIntegrityError, match="not bound to a pause"):
        agent.resume_run_json(state_json, json.dumps(body))
    assert RAN == []


def test_an_unkeyed_bound_document_is_checked_against_the_resumed_pause_too() -> None:
    agent = _agent()
    first, first_digest = _pause_with(agent, "one")
    second, _ = _pause_with(agent, "two")
    bound = stringify_resume_decisions(APPROVE, pause=first)
    with pytest.raises(ResumeDecisionsForAnotherPause):
        agent.resume_run_json(second, bound)
    with parse_resume_decisions(bound, pause=first_digest) as owned:
        assert owned.pause == first_digest and len(owned) == 2
    with pytest.raises(ResumeDecisionsForAnotherPause):
        parse_resume_decisions(bound, pause="sha256:" + "0" * 64)
    with parse_resume_decisions(bound) as unchecked:  # nothing to compare with: the caller checks .pause
        assert unchecked.pause == first_digest
    with parse_resume_decisions(stringify_resume_decisions(APPROVE), pause=first) as loose:
        assert loose.pause is None  # an unkeyed, unbound document stays accepted (no key, no claim)
    with agent.resume_run_json(first, bound) as outcome:
        assert outcome.result.output == "done"


def test_pause_accepts_the_paused_run_itself() -> None:
    with _agent(state_key=KEY).run_until_pause("go") as outcome:
        paused = outcome.paused
        assert paused is not None
        assert stringify_resume_decisions(APPROVE, key=KEY, pause=paused) == stringify_resume_decisions(
            APPROVE, key=KEY, pause=paused.state_json.encode()
        )


@pytest.mark.parametrize("pause", ["not json", '{"digest": 7}', b"[]", 42])
def test_pause_must_be_a_paused_state_document(pause: Any) -> None:
    error = InvalidResumeDecisions if pause == 42 else InvalidPausedState
    with pytest.raises(error):
        stringify_resume_decisions(APPROVE, pause=pause)


@pytest.mark.parametrize("bound", [7, None])
def test_a_pause_binding_must_be_a_string(bound: Any) -> None:
    document = {"version": 1, "decisions": [], "pause": bound}
    if bound is None:
        with parse_resume_decisions(json.dumps(document)) as owned:
            assert owned.pause is None
    else:
        with pytest.raises(InvalidResumeDecisions, match="optional"):
            parse_resume_decisions(json.dumps(document))


def test_signed_decisions_resume_a_json_pause_in_another_process(tmp_path: Any) -> None:
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    agent = _agent(state_key=KEY)
    state_json, _ = _pause_with(agent, "go")
    (tmp_path / "state.json").write_text(state_json, encoding="utf-8")
    (tmp_path / "decisions.json").write_text(
        stringify_resume_decisions(APPROVE, key=KEY, pause=state_json), encoding="utf-8"
    )
    other, _ = _pause_with(agent, "another")
    (tmp_path / "other.json").write_text(other, encoding="utf-8")
    tests = Path(__file__).resolve().parent
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tests)!r})
        from pathlib import Path
        from test_pause_integrity import KEY, RAN, _agent
        from zigai.agent import ResumeDecisionsForAnotherPause
        folder = Path({str(tmp_path)!r})
        decisions = (folder / "decisions.json").read_text()
        try:
            _agent(state_key=KEY).resume_run_json((folder / "other.json").read_text(), decisions)
        except ResumeDecisionsForAnotherPause:
            print("replay refused", RAN)
        with _agent(state_key=KEY).resume_run_json((folder / "state.json").read_text(), decisions) as done:
            print(done.result.output, RAN)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["replay refused []", "done ['lookup', 'publish']"]


@pytest.mark.parametrize("key", [b"k" * 15, "k" * 32, 42])
def test_state_key_must_be_sixteen_or_more_bytes(key: Any) -> None:
    with pytest.raises(InvalidAgentConfiguration, match="at least 16 bytes"):
        _agent(state_key=key)


def test_a_sixteen_byte_state_key_is_accepted() -> None:
    agent = _agent(state_key=b"k" * 16)
    assert "mac" in json.loads(_pause(agent))


# -- item 5: new_start past the history --------------------------------------------------------


def test_new_start_past_the_history_is_refused_and_the_end_accepted() -> None:
    state_json = _pause(_agent())
    length = len(json.loads(state_json)["state"]["history"])

    def new_start(value: int) -> Any:
        return lambda state: state.__setitem__("new_start", value)

    assert decode_paused_state(_forge(state_json, new_start(length))).new_start == length
    with pytest.raises(InvalidPausedState, match="new_start is past the history"):
        decode_paused_state(_forge(state_json, new_start(length + 1)))


# -- item 6: bounded deferred JSON -------------------------------------------------------------


def _deferred(args: str) -> DeferredCall:
    return DeferredCall("c1", "publish", args, "requires_approval")


@pytest.mark.parametrize("args", ['{"a": NaN}', '{"a": Infinity}', "[1]", '{"a":', '{"a":1,"a":2}'])
def test_deferred_args_refuse_what_the_tool_profile_refuses(args: str) -> None:
    with pytest.raises(InvalidMessagePart, match="DeferredCall.args"):
        _deferred(args).args_as_dict()


def test_deferred_args_nesting_is_bounded_without_recursion_errors() -> None:
    depth = defaults.tool_payload.max_depth

    def nested(levels: int) -> str:
        return '{"a":' * levels + "1" + "}" * levels

    assert _deferred(nested(depth)).args_as_dict()["a"] is not None
    with pytest.raises(InvalidMessagePart):
        _deferred(nested(depth + 1)).args_as_dict()
    with pytest.raises(InvalidMessagePart):
        _deferred("[" * 200_000).args_as_dict()
    assert _deferred("  ").args_as_dict() == {}


def _nested_list(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def test_result_content_nesting_is_bounded_by_the_decisions_profile() -> None:
    fits = defaults.resume_decisions.max_depth - 3  # the document wraps content three deep
    decision = ResumeDecision.result("c1", _nested_list(fits))
    text = stringify_resume_decisions([decision])
    with parse_resume_decisions(text) as owned:
        assert owned.decisions[0].content == _nested_list(fits)
    with pytest.raises(ResumeDecisionsTooLarge):
        ResumeDecision.result("c1", _nested_list(fits + 1))
    with pytest.raises(ResumeDecisionsTooLarge):
        ResumeDecision.result("c1", _nested_list(100_000))


@pytest.mark.parametrize("content", [float("nan"), {"a": float("inf")}, {"a": object()}])
def test_result_content_must_be_plain_json(content: Any) -> None:
    with pytest.raises(InvalidResumeDecisions, match="not plain JSON"):
        ResumeDecision.result("c1", content)
