"""run_until_pause / resume_run(_json): the paused state, decisions and their failures."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from zigai.agent import (
    Agent,
    ApprovalSource,
    DeferredToolRequestEvent,
    DeferredToolResultEvent,
    EnqueuedMessagesEvent,
    FunctionToolResultEvent,
    InvalidPausedState,
    InvalidResumeDecisions,
    PausedStateTooLarge,
    PauseRequired,
    PendingMessageQueue,
    ResumeDecision,
    ResumeDecisionMismatch,
    ResumeDecisionsTooLarge,
    UnsupportedPausedStateVersion,
    UnsupportedResumeDecisionsVersion,
    parse_resume_decisions,
    stringify_resume_decisions,
)
from zigai.agent.deferred import PAUSED_STATE_VERSION
from zigai.json import defaults
from zigai.messages import (
    RequestMessage,
    ResponseMessage,
    TextPart,
    ToolCallPart,
    ToolOutcome,
    ToolReturnPart,
    UserPromptPart,
)
from zigai.testing import DeltaToolCall, FunctionModel
from zigai.tool import Tool, ToolExecution

ROOT = Path(__file__).resolve().parent.parent
EMPTY = {"type": "object", "properties": {"text": {"type": "string"}}}
RAN: list[str] = []


def _tools() -> list[Tool]:
    return [
        Tool.manual("lookup", "Look up.", EMPTY, lambda a: RAN.append("lookup") or "looked up"),
        Tool.manual("publish", "Publish.", EMPTY, lambda a: RAN.append("publish") or f"published {a['text']}",
                    execution=ToolExecution.requires_approval),
        Tool.manual("ship", "Ship outside.", EMPTY, lambda a: RAN.append("ship") or "never",
                    execution=ToolExecution.external),
    ]


def _calls_then_text(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
    responses = sum(isinstance(m, ResponseMessage) for m in messages)
    if responses == 0:
        return ResponseMessage((
            ToolCallPart("lookup", '{"text":"a"}', "c1"),
            ToolCallPart("publish", '{"text":"news"}', "c2"),
            ToolCallPart("ship", '{"text":"box"}', "c3"),
        ))
    returns = [p for m in messages if isinstance(m, RequestMessage) for p in m.parts
               if isinstance(p, ToolReturnPart)]
    return ResponseMessage((TextPart("; ".join(f"{p.tool_name}={p.content}" for p in returns)),))


def _as_stream(function: Any) -> Any:
    def stream(messages: tuple[Any, ...], info: Any) -> Any:
        for key, part in enumerate(function(messages, info).parts):
            if isinstance(part, TextPart):
                yield part.content
            else:
                yield DeltaToolCall(part.tool_name, part.args, part.tool_call_id, key=key)

    return stream


def _agent(**kwargs: Any) -> tuple[Agent, FunctionModel]:
    model = FunctionModel(_calls_then_text, stream_function=_as_stream(_calls_then_text))
    return Agent(model, tools=_tools(), **kwargs), model


@pytest.fixture(autouse=True)
def _reset() -> None:
    RAN.clear()


def _pause() -> tuple[Agent, FunctionModel, str]:
    agent, model = _agent()
    with agent.run_until_pause("go") as outcome:
        assert outcome.kind == "paused"
        return agent, model, outcome.paused.state_json


def test_run_refuses_to_discard_a_pause() -> None:
    agent, _ = _agent()
    with pytest.raises(PauseRequired) as info:
        agent.run("go")
    assert info.value.tool_call_ids == ("c2", "c3")
    assert RAN == []


def test_pause_happens_before_any_call_of_the_response_runs() -> None:
    agent, model = _agent()
    with agent.run_until_pause("go") as outcome:
        paused = outcome.paused
        assert [(c.tool_call_id, c.tool_name, c.args, c.execution) for c in paused.calls] == [
            ("c2", "publish", '{"text":"news"}', "requires_approval"),
            ("c3", "ship", '{"text":"box"}', "external"),
        ]
        assert RAN == []
        assert paused.usage.requests == 1
        document = json.loads(paused.state_json)
    assert document["version"] == PAUSED_STATE_VERSION and document["kind"] == "zigai.paused_run"
    assert document["digest"].startswith("sha256:")
    assert set(document["state"]) == {
        "history", "new_start", "instructions", "usage", "output_retries", "tool_retries",
        "pending_calls", "pending_messages",
    }
    assert document["state"]["pending_calls"][0] == {
        "tool_call_id": "c2", "tool_name": "publish", "args": '{"text":"news"}',
        "execution": "requires_approval", "approval": "static",
    }
    assert model.request_count == 1


def test_resume_runs_immediate_and_approved_calls_and_never_replays_the_request() -> None:
    agent, model, state = _pause()
    decisions = [ResumeDecision.approve("c2"), ResumeDecision.result("c3", {"tracking": "T1"})]
    with agent.resume_run(state, decisions) as outcome:
        result = outcome.result
        assert RAN == ["lookup", "publish"]  # the external tool never runs
        assert result.output.startswith("lookup=looked up; publish=published news; ship=")
        assert result.usage.requests == 2
        returns = result.messages[2]
        assert isinstance(returns, RequestMessage)
        assert [(p.tool_call_id, p.outcome) for p in returns.parts] == [
            ("c1", ToolOutcome.success), ("c2", ToolOutcome.success), ("c3", ToolOutcome.success),
        ]
        assert returns.parts[2].content == {"tracking": "T1"}
        assert len(result.messages) == 4
        assert result.new_messages()[0].parts[0] == UserPromptPart("go", timestamp=result.new_messages()[0].timestamp)
    assert model.request_count == 2  # one before the pause, one after — no replay


def test_deny_becomes_a_denied_tool_return_with_the_reason() -> None:
    agent, _, state = _pause()
    with agent.resume_run(state, [ResumeDecision.deny("c2", "not today"), ResumeDecision.deny("c3")]) as outcome:
        returns = outcome.result.messages[2].parts
        stamp = outcome.result.messages[2].timestamp
    assert returns[1] == ToolReturnPart("publish", "c2", "not today", ToolOutcome.denied, timestamp=stamp)
    assert returns[2] == ToolReturnPart("ship", "c3", "The tool call was denied.", ToolOutcome.denied,
                                        timestamp=stamp)
    assert RAN == ["lookup"]


@pytest.mark.parametrize(
    ("decisions", "missing", "unexpected"),
    [
        ([ResumeDecision.approve("c2")], ("c3",), ()),
        ([ResumeDecision.approve("c2"), ResumeDecision.deny("c3"), ResumeDecision.deny("zz")], (), ("zz",)),
        ([ResumeDecision.approve("c2"), ResumeDecision.deny("c3"), ResumeDecision.deny("c3")], (), ("c3",)),
        ([ResumeDecision.approve("c2"), ResumeDecision.approve("c3")], (), ("c3",)),
        ([ResumeDecision.result("c2", 1), ResumeDecision.deny("c3")], (), ("c2",)),
    ],
)
def test_each_deferred_call_needs_exactly_one_fitting_decision(
    decisions: list[ResumeDecision], missing: tuple[str, ...], unexpected: tuple[str, ...]
) -> None:
    agent, model, state = _pause()
    with pytest.raises(ResumeDecisionMismatch) as info:
        agent.resume_run(state, decisions)
    assert info.value.missing == missing and info.value.unexpected == unexpected
    assert RAN == [] and model.request_count == 1  # nothing half-applied


def test_resume_decisions_json_round_trip_and_resume_run_json() -> None:
    decisions = [ResumeDecision.approve("c2"), ResumeDecision.deny("c3", "no"),
                 ResumeDecision.result("x", {"a": [1, "b"]})]
    text = stringify_resume_decisions(decisions)
    assert text == (
        '{"decisions":[{"action":"approve","tool_call_id":"c2"},'
        '{"action":"deny","reason":"no","tool_call_id":"c3"},'
        '{"action":"result","content":{"a":[1,"b"]},"tool_call_id":"x"}],"version":1}'
    )
    with parse_resume_decisions(text) as owned:
        assert owned.decisions == tuple(decisions)
    agent, _, state = _pause()
    json_decisions = stringify_resume_decisions([ResumeDecision.approve("c2"), ResumeDecision.result("c3", "T")])
    with agent.resume_run_json(state, json_decisions) as outcome:
        assert outcome.result.output == "lookup=looked up; publish=published news; ship=T"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("{", InvalidResumeDecisions),
        ('{"version":2,"decisions":[]}', UnsupportedResumeDecisionsVersion),
        ('{"version":1}', InvalidResumeDecisions),
        ('{"version":1,"decisions":[{"tool_call_id":"a","action":"maybe"}]}', InvalidResumeDecisions),
        ('{"version":1,"decisions":[{"tool_call_id":"a","action":"approve","content":1}]}', InvalidResumeDecisions),
        ('{"version":1,"decisions":[{"tool_call_id":"a","action":"result"}]}', InvalidResumeDecisions),
    ],
)
def test_malformed_decisions_fail_with_named_errors(text: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        parse_resume_decisions(text)


def test_decisions_document_limit_is_exact() -> None:
    limit = defaults.resume_decisions.max_document_bytes
    reasons = ["r" * 800_000 for _ in range(5)]

    def document() -> str:
        return stringify_resume_decisions(ResumeDecision.deny(f"c{i}", r) for i, r in enumerate(reasons))

    reasons[-1] += "r" * (limit - len(document()))
    text = document()
    assert len(text.encode()) == limit
    assert len(parse_resume_decisions(text)) == 5
    with pytest.raises(ResumeDecisionsTooLarge):
        parse_resume_decisions(text + " ")
    reasons[-1] += "r"
    with pytest.raises(ResumeDecisionsTooLarge):
        document()


def _tamper(state: str, edit: Any) -> str:
    document = json.loads(state)
    edit(document)
    return json.dumps(document)


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda s: s[: len(s) // 2], InvalidPausedState),  # truncated
        (lambda s: s.replace("news", "NEWS"), InvalidPausedState),  # edited, digest stale
        (lambda s: _tamper(s, lambda d: d.update(version=99)), UnsupportedPausedStateVersion),
        (lambda s: _tamper(s, lambda d: d.update(kind="other")), InvalidPausedState),
        (lambda s: _tamper(s, lambda d: d.update(extra=1)), InvalidPausedState),
        (lambda s: "[]", InvalidPausedState),
        (lambda s: " " * (defaults.paused_state.max_document_bytes + 1), PausedStateTooLarge),
    ],
)
def test_bad_states_fail_with_named_errors_and_nothing_runs(make: Any, error: type[Exception]) -> None:
    agent, model, state = _pause()
    with pytest.raises(error):
        agent.resume_run(make(state), [ResumeDecision.approve("c2"), ResumeDecision.deny("c3")])
    assert RAN == [] and model.request_count == 1


def test_a_consistent_forgery_is_still_cross_checked() -> None:
    import hashlib

    from zigai.agent.deferred import _canonical

    agent, _, state = _pause()
    document = json.loads(state)
    document["state"]["pending_calls"][0]["args"] = '{"text":"forged"}'
    document["state"]["pending_calls"][0]["tool_call_id"] = "c2"
    body = document["state"]
    document["digest"] = "sha256:" + hashlib.sha256(_canonical(body).encode()).hexdigest()
    with pytest.raises(InvalidPausedState, match="arguments"):
        agent.resume_run(json.dumps(document), [ResumeDecision.approve("c2"), ResumeDecision.deny("c3")])
    assert RAN == []


def test_paused_state_survives_a_process_boundary(tmp_path: Path) -> None:
    _, _, state = _pause()
    path = tmp_path / "state.json"
    path.write_text(state, encoding="utf-8")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from pathlib import Path
        from test_agent_deferred import RAN, _agent
        from zigai.agent import ResumeDecision, stringify_resume_decisions
        agent, model = _agent()
        decisions = stringify_resume_decisions(
            [ResumeDecision.approve("c2"), ResumeDecision.result("c3", "T9")])
        with agent.resume_run_json(Path({str(path)!r}).read_text(), decisions) as outcome:
            print(outcome.result.output)
            print(outcome.result.usage.requests, model.request_count, ",".join(RAN))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          cwd=str(ROOT))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "lookup=looked up; publish=published news; ship=T9", "2 1 lookup,publish",
    ]


def test_resume_gets_a_fresh_deadline_and_fresh_deps() -> None:
    seen: list[Any] = []

    def remember(args: dict[str, Any], ctx: Any) -> str:
        seen.append(ctx.deps)
        return "ok"

    tool = Tool.manual("publish", "P", EMPTY, remember, execution=ToolExecution.requires_approval,
                       takes_context=True)

    def model_fn(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if any(isinstance(m, ResponseMessage) for m in messages):
            return ResponseMessage((TextPart("done"),))
        return ResponseMessage((ToolCallPart("publish", "{}", "p1"),))

    agent = Agent(FunctionModel(model_fn), tools=[tool], run_timeout_ms=60_000)
    with agent.run_until_pause("go", deps="first") as outcome:
        state = outcome.paused.state_json
    with agent.resume_run(state, [ResumeDecision.approve("p1")], deps="second", timeout_ms=50_000) as out:
        assert out.result.output == "done"
    assert seen == ["second"]


def test_dynamic_approval_is_persisted_across_the_pause() -> None:
    def needs_approval(ctx: Any, name: str, args: Any) -> bool:
        return name == "lookup" and args.get("text") == "a"

    agent, _ = _agent(tool_approval=needs_approval)
    with agent.run_until_pause("go") as outcome:
        calls = outcome.paused.calls
        state = outcome.paused.state_json
    assert [(c.tool_call_id, c.approval) for c in calls] == [
        ("c1", ApprovalSource.dynamic), ("c2", ApprovalSource.static), ("c3", ApprovalSource.static),
    ]
    assert json.loads(state)["state"]["pending_calls"][0]["approval"] == "dynamic"
    decisions = [ResumeDecision.deny("c1", "no lookups"), ResumeDecision.approve("c2"), ResumeDecision.result("c3", 1)]
    with agent.resume_run(state, decisions) as outcome:
        assert outcome.result.output == "lookup=no lookups; publish=published news; ship=1"
    assert RAN == ["publish"]


def test_pending_messages_are_saved_and_inserted_after_the_deferred_results() -> None:
    agent, _ = _agent()
    queue = PendingMessageQueue()
    queue.enqueue(RequestMessage((UserPromptPart("meanwhile"),)))
    original = agent.run_until_pause
    with original("go", pending_messages=queue) as outcome:
        state = outcome.paused.state_json
    # the batch entered the first request (before the model request), so enqueue another
    # one during the model step to exercise the paused-state copy
    queue2 = PendingMessageQueue()

    def model_fn(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if not any(isinstance(m, ResponseMessage) for m in messages):
            queue2.enqueue(RequestMessage((UserPromptPart("later"),)))
        return _calls_then_text(messages, info)

    agent2 = Agent(FunctionModel(model_fn, stream_function=_as_stream(model_fn)), tools=_tools())
    with agent2.run_until_pause("go", pending_messages=queue2) as outcome:
        state = outcome.paused.state_json
    assert queue2.closed
    assert len(json.loads(state)["state"]["pending_messages"]) == 1
    with agent2.resume_run_stream(state, [ResumeDecision.approve("c2"), ResumeDecision.deny("c3")]) as stream:
        events = list(stream)
        outcome = stream.outcome()
    kinds = [e.event_kind for e in events]
    assert kinds.index("enqueued_messages") > max(i for i, k in enumerate(kinds) if k == "deferred_result")
    deferred = [e for e in events if isinstance(e, DeferredToolResultEvent)]
    assert [(e.result.tool_call_id, e.action) for e in deferred] == [("c2", "approve"), ("c3", "deny")]
    assert [e.result.tool_call_id for e in events if isinstance(e, FunctionToolResultEvent)] == ["c1"]
    assert isinstance(events[kinds.index("enqueued_messages")], EnqueuedMessagesEvent)
    with outcome:
        messages = outcome.result.messages
        assert isinstance(messages[3], RequestMessage) and messages[3].parts == (UserPromptPart("later"),)


def test_pause_stream_reports_the_deferred_request() -> None:
    agent, _ = _agent()
    with agent.run_until_pause_stream("go") as stream:
        events = list(stream)
        outcome = stream.outcome()
        with pytest.raises(PauseRequired):
            stream.result()
    assert isinstance(events[-1], DeferredToolRequestEvent)
    with outcome:
        assert events[-1].calls == outcome.paused.calls
    assert RAN == []


def test_resumed_run_may_pause_again() -> None:
    calls = {"n": 0}

    def model_fn(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        calls["n"] += 1
        if calls["n"] <= 2:
            return ResponseMessage((ToolCallPart("publish", '{"text":"x"}', f"p{calls['n']}"),))
        return ResponseMessage((TextPart("end"),))

    agent = Agent(FunctionModel(model_fn), tools=_tools())
    with agent.run_until_pause("go") as first:
        state = first.paused.state_json
    with agent.resume_run(state, [ResumeDecision.approve("p1")]) as second:
        assert second.is_paused and [c.tool_call_id for c in second.paused.calls] == ["p2"]
        state = second.paused.state_json
    with agent.resume_run(state, [ResumeDecision.approve("p2")]) as third:
        assert third.result.output == "end"
        assert third.result.usage.requests == 3


def test_closed_resume_decisions_refuse_reentry_like_every_owner() -> None:
    from zigai.agent import (
        ResultClosed,
        ResumeDecision,
        parse_resume_decisions,
        stringify_resume_decisions,
    )

    owned = parse_resume_decisions(stringify_resume_decisions([ResumeDecision.approve("call-1")]))
    owned.close()
    with pytest.raises(ResultClosed):
        with owned:
            pass
