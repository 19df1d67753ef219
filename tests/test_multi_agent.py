"""multi_agent: sessions, scopes, delegation/handoff depth, correlation ids, usage on failure."""

from __future__ import annotations

import time
from typing import Any

import pytest

from zigai import Agent, Tool
from zigai.agent import RunOptions
from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut
from zigai.messages import ResponseMessage, TextPart, ToolCallPart
from zigai.multi_agent import (
    DelegationDepthExceeded,
    InvalidSession,
    Isolated,
    RunRecord,
    Session,
    SessionBudgetExceeded,
    SessionEvent,
    SessionLimits,
    SessionRunLimitExceeded,
    Shared,
)
from zigai.testing import FunctionModel
from zigai.usage import RequestUsage, RunUsage


def text(content: str, tokens: tuple[int, int]) -> ResponseMessage:
    return ResponseMessage(parts=(TextPart(content),), usage=RequestUsage(input_tokens=tokens[0], output_tokens=tokens[1]))


def call(tool: str, args: str, tokens: tuple[int, int], call_id: str = "c1") -> ResponseMessage:
    return ResponseMessage(parts=(ToolCallPart(tool, args, call_id),),
                           usage=RequestUsage(input_tokens=tokens[0], output_tokens=tokens[1]))


def scripted(name: str, *responses: Any, tools: tuple[Tool, ...] = ()) -> Agent:
    queue = list(responses)

    def answer(messages: Any, info: Any) -> ResponseMessage:
        item = queue.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item(messages, info) if callable(item) else item
    return Agent(FunctionModel(answer), name=name, tools=tools)


def three_agent_session(observer: Any = None) -> tuple[Session, list[str]]:
    """triage (with the researcher as a tool) -> handoff to closer -> a delegation that fails."""
    session = Session("support-42", observer=observer)
    root = session.scope(deps={"tenant": "acme"}, trace_parent="00-" + "a" * 32 + "-" + "b" * 16 + "-01")
    researcher = scripted("research", text("the answer is 42", (5, 1)))
    triage = scripted(
        "triage",
        call("research", '{"prompt": "find the answer"}', (10, 2)),
        text("triage done", (20, 3)),
        tools=(root.as_tool(researcher, name="research", description="ask the researcher"),),
    )
    outputs = []
    with root.run(triage, "customer asks") as first:
        outputs.append(first.output)
        history = first.messages
    closer = scripted("closer", lambda messages, info: text(f"closing after {len(messages)} messages", (7, 1)))
    with root.handoff(closer, "close the ticket", context=Shared(history)) as closed:
        outputs.append(closed.output)
    flaky = scripted("flaky", call("noop", "{}", (3, 2)), ConnectionError("provider went away"),
                     tools=(Tool.manual("noop", "does nothing", {"type": "object"}, lambda args: "ok"),))
    with pytest.raises(ConnectionError):
        root.delegate(flaky, "try something")
    return session, outputs


def test_three_agents_delegation_and_handoff_report_exact_usage_depths_and_ids() -> None:
    session, outputs = three_agent_session()
    assert outputs == ["triage done", "closing after 5 messages"]
    assert [(r.index, r.kind, r.depth, r.target, r.correlation_id, r.parent, r.ok, r.error)
            for r in session.records] == [
        (0, "run", 0, "triage", "support-42/0", None, True, None),
        (1, "subagent", 1, "research", "support-42/1", 0, True, None),
        (2, "handoff", 0, "closer", "support-42/2", None, True, None),
        (3, "delegation", 1, "flaky", "support-42/3", None, False, "ConnectionError"),
    ]
    usages = [r.usage for r in session.records]
    assert usages == [
        RunUsage(requests=2, tool_calls=1, input_tokens=30, output_tokens=5, attempts=2),
        RunUsage(requests=1, input_tokens=5, output_tokens=1, attempts=1),
        RunUsage(requests=1, input_tokens=7, output_tokens=1, attempts=1),
        # captured although it failed, with the failed attempt counted
        RunUsage(requests=1, tool_calls=1, input_tokens=3, output_tokens=2, attempts=2),
    ]
    assert session.usage == RunUsage(requests=5, tool_calls=2, input_tokens=45, output_tokens=9, attempts=6)
    assert session.usage == usages[0] + usages[1] + usages[2] + usages[3]
    assert all(u is not None and u.run_time_ns > 0 and u.provider_time_ns > 0 for u in usages)
    assert session.usage.run_time_ns == sum(u.run_time_ns for u in usages if u is not None)
    assert session.usage.provider_time_ns == sum(u.provider_time_ns for u in usages if u is not None)


def test_the_same_program_yields_the_same_identities() -> None:
    first, _ = three_agent_session()
    second, _ = three_agent_session()
    assert first.records == second.records and first.usage == second.usage


def test_lifecycle_events_are_observed_in_order() -> None:
    events: list[SessionEvent] = []
    three_agent_session(events.append)
    assert [(e.kind, e.run_index, e.depth) for e in events] == [
        ("run_start", 0, 0), ("run_start", 1, 1), ("run_end", 1, 1), ("run_end", 0, 0),
        ("run_start", 2, 0), ("run_end", 2, 0), ("run_start", 3, 1), ("run_error", 3, 1),
    ]
    assert isinstance(events[-1].error, ConnectionError) and events[-1].usage.requests == 1
    assert {e.session_id for e in events} == {"support-42"}


def test_correlation_reaches_the_agents_hooks_with_the_trace_parent() -> None:
    seen: list[Any] = []
    parent = "00-" + "c" * 32 + "-" + "d" * 16 + "-01"
    agent = Agent(FunctionModel(lambda m, i: text("ok", (1, 1))), name="worker",
                  hooks=[lambda e: seen.append(e.run) if e.kind == "run_start" else None])
    scope = Session("s1").scope(trace_parent=parent)
    scope.run(agent, "a").close()
    scope.delegate(agent, "b").close()
    assert [(r.run_id, r.correlation.trace_parent, r.correlation.node_index, r.correlation.node_name)
            for r in seen] == [("s1/0", parent, 0, "worker"), ("s1/1", parent, 1, "worker")]


def test_context_is_explicit_shared_or_isolated() -> None:
    seen: list[int] = []
    agent = Agent(FunctionModel(lambda m, i: seen.append(len(m)) or text("ok", (1, 1))))
    session = Session("ctx")
    root = session.scope()
    with root.run(agent, "first") as first:
        history = first.messages
    root.delegate(agent, "isolated").close()
    root.delegate(agent, "shared", context=Shared(history)).close()
    root.handoff(agent, "also isolated").close()
    assert seen == [1, 1, 3, 1]
    with pytest.raises(InvalidSession, match="context=Shared"):
        root.run(agent, options=RunOptions(prompt="x", message_history=history))
    with pytest.raises(InvalidSession, match="Shared\\(history\\) or Isolated\\(\\)"):
        root.delegate(agent, "x", context="everything")  # type: ignore[arg-type]


def test_dependencies_are_passed_never_inherited() -> None:
    seen: list[Any] = []
    agent = Agent(FunctionModel(lambda m, i: text("ok", (1, 1))), dynamic_instructions=[lambda c: seen.append(c.deps) or None])
    root = Session("deps").scope(deps="root-deps")
    root.run(agent, "a").close()
    root.delegate(agent, "b").close()
    root.delegate(agent, "c", deps="child-deps").close()
    child = root.child(deps="scoped")
    child.run(agent, "d").close()
    root.child().run(agent, "e").close()
    assert seen == ["root-deps", None, "child-deps", "scoped", None]


def test_delegation_depth_accepts_the_limit_and_refuses_one_more() -> None:
    agent = Agent(FunctionModel(lambda m, i: text("ok", (1, 1))))
    session = Session("deep", limits=SessionLimits(max_depth=2))
    level1 = session.scope().child()
    level1.delegate(agent, "depth 2").close()
    assert session.records[-1].depth == 2
    with pytest.raises(DelegationDepthExceeded, match="depth 3 exceeds SessionLimits.max_depth=2") as info:
        level1.child().delegate(agent, "depth 3")
    assert (info.value.depth, info.value.limit) == (3, 2)
    level1.child().handoff(agent, "a handoff keeps depth 2").close()
    assert [r.depth for r in session.records] == [2, 2]


def test_run_count_and_budgets_are_checked_before_a_child_starts() -> None:
    calls = [0]

    def answer(messages: Any, info: Any) -> ResponseMessage:
        calls[0] += 1
        return text("ok", (4, 1))
    agent = Agent(FunctionModel(answer))
    counted = Session("runs", limits=SessionLimits(max_runs=2)).scope()
    counted.run(agent, "1").close()
    counted.run(agent, "2").close()
    with pytest.raises(SessionRunLimitExceeded, match="already started 2 runs"):
        counted.run(agent, "3")
    assert calls[0] == 2
    budget = Session("budget", limits=SessionLimits(max_requests=2, max_total_tokens=100)).scope()
    budget.run(agent, "1").close()
    budget.run(agent, "2").close()
    with pytest.raises(SessionBudgetExceeded, match="used 2 requests; the budget is 2"):
        budget.run(agent, "3")
    tokens = Session("tokens", limits=SessionLimits(max_total_tokens=5)).scope()
    tokens.run(agent, "1").close()
    with pytest.raises(SessionBudgetExceeded, match="used 5 tokens; the budget is 5"):
        tokens.run(agent, "2")
    assert calls[0] == 5


def test_one_absolute_deadline_is_converted_right_before_each_child_starts() -> None:
    deadlines: list[float | None] = []

    def answer(messages: Any, info: Any) -> ResponseMessage:
        deadlines.append(info.request.control.deadline)
        time.sleep(0.05)
        return text("ok", (1, 1))
    agent = Agent(FunctionModel(answer))
    control = RunControl.start(5_000)
    scope = Session("time").scope(control=control)
    scope.run(agent, "a").close()
    scope.delegate(agent, "b").close()
    tool = scope.as_tool(agent, name="helper", description="d")
    parent = scripted("parent", call("helper", '{"prompt": "q"}', (1, 1)), text("done", (1, 1)), tools=(tool,))
    scope.run(parent, "c").close()
    assert control.deadline is not None and len(deadlines) == 3
    for deadline in deadlines:  # the remaining time, never more (slack: the agent's own start)
        assert deadline is not None and control.deadline - 5 < deadline <= control.deadline + 0.05
    expired = Session("late").scope(control=RunControl(deadline=time.monotonic() - 1))
    with pytest.raises(RunTimedOut):
        expired.run(agent, "never")
    assert expired.session.records == () and len(deadlines) == 3


def test_the_scope_token_cancels_the_child() -> None:
    token = CancellationToken()

    def answer(messages: Any, info: Any) -> ResponseMessage:
        token.cancel("user left")
        info.request.control.check()
        return text("never", (1, 1))
    session = Session("cancel")
    with pytest.raises(Cancelled, match="user left"):
        session.scope(control=RunControl(token=token)).delegate(Agent(FunctionModel(answer)), "x")
    assert session.records[0].error == "Cancelled"
    with pytest.raises(InvalidSession, match="supplies the cancellation token"):
        session.scope(control=RunControl()).run(Agent(FunctionModel(answer)),
                                                options=RunOptions(prompt="x", cancellation=CancellationToken()))


def test_typed_delegation_and_agent_as_tool_outputs() -> None:
    from dataclasses import dataclass

    @dataclass
    class Answer:
        value: int
    typed = Agent(FunctionModel(lambda m, i: text('{"value": 7}', (1, 1))))
    scope = Session("typed").scope()
    with scope.delegate(typed, "x", output_type=Answer) as result:
        assert result.value == Answer(7)
    tool = scope.as_tool(typed, name="ask", description="d", output_type=Answer)
    parent = scripted("parent", call("ask", '{"prompt": "q"}', (1, 1)),
                      lambda messages, info: text(messages[-1].parts[-1].content, (1, 1)), tools=(tool,))
    with scope.run(parent, "go") as done:
        assert "Answer(value=7)" in done.output
    assert tool.sequential


def test_an_observer_failure_never_masks_a_child_failure_and_a_refused_end_closes_the_result() -> None:
    def observer(event: SessionEvent) -> None:
        if event.kind != "run_start":
            raise RuntimeError(f"observer broke on {event.kind}")
    agent = scripted("a", ValueError("child failed"))
    scope = Session("obs", observer=observer).scope()
    with pytest.raises(ValueError, match="child failed") as info:
        scope.run(agent, "x")
    assert any("session observer also failed" in note for note in info.value.__notes__)
    with pytest.raises(RuntimeError, match="observer broke on run_end"):
        scope.run(Agent(FunctionModel(lambda m, i: text("ok", (1, 1)))), "y")
    assert [r.ok for r in scope.session.records] == [False, True]


@pytest.mark.parametrize(("build", "message"), [
    (lambda: Session(""), "session id must be 1..128"),
    (lambda: Session("x" * 129), "session id must be 1..128"),
    (lambda: Session("a b"), "session id must be"),
    (lambda: Session("s", limits={}), "must be a SessionLimits"),  # type: ignore[arg-type]
    (lambda: Session("s", observer=1), "observer must be callable"),  # type: ignore[arg-type]
    (lambda: SessionLimits(max_runs=0), "max_runs must be an int >= 1"),
    (lambda: SessionLimits(max_depth=-1), "max_depth must be an int >= 0"),
    (lambda: SessionLimits(max_requests=True), "max_requests must be an int >= 0 or None"),
    (lambda: Session("s").scope(history=["m"]), "context must be Shared"),
    (lambda: Session("s").scope(control="c"), "control must be a zigai.control.RunControl"),  # type: ignore[arg-type]
    (lambda: Session("s").scope(trace_parent=""), "trace_parent"),
    (lambda: Session("s").scope().run("agent"), "runs zigai.Agent values"),  # type: ignore[arg-type]
    (lambda: Session("s").scope().run(Agent(FunctionModel(lambda m, i: text("", (0, 0)))), options="o"),  # type: ignore[arg-type]
     "options must be a RunOptions"),
    (lambda: Session("s").scope().as_tool(Agent(FunctionModel(lambda m, i: text("", (0, 0)))), name="t",
                                          description="d", context=3), "context must be"),  # type: ignore[arg-type]
])
def test_arguments_are_checked(build: Any, message: str) -> None:
    with pytest.raises(InvalidSession, match=message):
        build()


def test_identity_bounds_accept_the_limit() -> None:
    session = Session("x" * 128)
    scope = session.scope(history=Isolated())
    assert session.id == "x" * 128 and scope.depth == 0 and scope.deps is None
    assert isinstance(scope.context, Isolated) and scope.control is None and scope.trace_parent is None
    assert "depth=0" in repr(scope) and "runs=0" in repr(session) and session.limits == SessionLimits()
    assert isinstance(RunRecord(0, "run", 0, "t", "c", None, RunUsage(), True), RunRecord)
