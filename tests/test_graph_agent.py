"""graph_agent: agent runs as graph steps, option preparation, streaming, correlation, Conversation."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from zigai import Agent, Tool
from zigai.agent import RunOptions
from zigai.agent.events import AgentStreamEvent
from zigai.control import CancellationToken, Cancelled, RunControl
from zigai.durable import StepId
from zigai.graph import END, GraphBuilder, GraphTypes, SnapshotCodec, StepContext
from zigai.graph_agent import (
    AgentNodeEvent,
    AgentStep,
    Conversation,
    InvalidAgentStep,
    durable_scope,
)
from zigai.hooks import Correlation
from zigai.messages import ResponseMessage, TextPart, ToolCallPart
from zigai.testing import FunctionModel
from zigai.usage import RequestUsage, RunUsage


def reply(text: str, tokens: tuple[int, int] = (10, 2)) -> ResponseMessage:
    return ResponseMessage(parts=(TextPart(text),), usage=RequestUsage(input_tokens=tokens[0], output_tokens=tokens[1]))


def echo_model(prefix: str = "echo") -> FunctionModel:
    def answer(messages: Any, info: Any) -> ResponseMessage:
        prompt = messages[-1].parts[-1].content
        return reply(f"{prefix}: {prompt}")

    def stream(messages: Any, info: Any) -> Any:
        prompt = messages[-1].parts[-1].content
        yield f"{prefix}: "
        yield prompt
    return FunctionModel(answer, stream_function=stream)


def single(step: AgentStep, types: GraphTypes | None = None) -> Any:
    return GraphBuilder(types or GraphTypes(value=str), identity="agent/v1").step("ask", step, next=END).build("ask")


def test_an_agent_step_runs_the_agent_and_adapts_its_output() -> None:
    graph = single(AgentStep(Agent(echo_model())))
    assert graph.run("hello", state=None).output == "echo: hello"


def test_graph_deps_become_agent_deps_unless_preparation_overrides_them() -> None:
    seen: list[Any] = []
    agent = Agent(echo_model(), dynamic_instructions=[lambda ctx: seen.append(ctx.deps) or None])
    single(AgentStep(agent)).run("a", state=None, deps="graph-deps")
    single(AgentStep(agent, prepare=lambda ctx, v: RunOptions(prompt=v, deps="own"))).run(
        "b", state=None, deps="graph-deps")
    assert seen == ["graph-deps", "own"]


def test_prepare_may_return_a_prompt_and_adapt_sees_the_open_result() -> None:
    kept: list[Any] = []

    def adapt(ctx: StepContext[Any, Any], result: Any) -> str:
        kept.append(result)
        return f"{result.output} ({result.usage.requests} request)"
    step = AgentStep(Agent(echo_model()), prepare=lambda ctx, v: f"about {v}", adapt=adapt)
    assert single(step).run("cats", state=None).output == "echo: about cats (1 request)"
    assert kept[0].closed  # released before the transition committed


def test_typed_output_uses_the_typed_value() -> None:
    @dataclass
    class Verdict:
        ok: bool
        reason: str

    def answer(messages: Any, info: Any) -> ResponseMessage:
        return reply('{"ok": true, "reason": "fine"}')
    step = AgentStep(Agent(FunctionModel(answer)), output_type=Verdict, mode="prompted")
    graph = single(step, GraphTypes(value=Any))
    assert graph.run("judge", state=None).output == Verdict(True, "fine")


def test_streaming_delivers_every_event_to_the_sink_before_the_observer() -> None:
    order: list[str] = []
    events: list[AgentNodeEvent] = []

    def sink(event: AgentStreamEvent) -> None:
        order.append(f"sink:{type(event).__name__}")

    def observer(event: AgentNodeEvent) -> None:
        events.append(event)
        order.append(f"node:{event.kind}:{type(event.event).__name__ if event.event else ''}")
    step = AgentStep(Agent(echo_model()), stream_sink=sink, observer=observer)
    assert single(step).run("hi", state=None, run_id="r9").output == "echo: hi"
    assert order[0] == "node:agent_start:" and order[-1] == "node:agent_end:"
    middle = order[1:-1]
    assert middle and len(middle) % 2 == 0
    for sink_entry, node_entry in zip(middle[::2], middle[1::2], strict=True):
        assert sink_entry.startswith("sink:") and node_entry == f"node:agent_event:{sink_entry[5:]}"
    assert {(e.run_id, e.node_index, e.node_name, e.step) for e in events} == {("r9", 0, "ask", 0)}
    assert events[-1].usage is not None and events[-1].usage.requests == 1


def test_a_sink_failure_aborts_the_adaptation_and_the_transition() -> None:
    adapted: list[Any] = []
    errors: list[AgentNodeEvent] = []

    def sink(event: AgentStreamEvent) -> None:
        raise BrokenPipeError("client went away")
    step = AgentStep(Agent(echo_model()), stream_sink=sink, adapt=lambda c, r: adapted.append(r) or "x",
                     observer=lambda e: errors.append(e) if e.kind == "agent_error" else None)
    run = single(step).start("hi", state=None)
    with pytest.raises(BrokenPipeError):
        run.next()
    assert adapted == [] and run.completed_steps == 0 and run.value == "hi"
    assert isinstance(errors[0].error, BrokenPipeError)


def test_a_failing_agent_reports_the_usage_it_accumulated_and_passes_through() -> None:
    calls = [0]

    def answer(messages: Any, info: Any) -> ResponseMessage:
        calls[0] += 1
        if calls[0] == 1:
            return ResponseMessage(parts=(ToolCallPart("lookup", "{}", "c1"),),
                                   usage=RequestUsage(input_tokens=7, output_tokens=3))
        raise ConnectionResetError("provider dropped")
    agent = Agent(FunctionModel(answer), tools=[Tool.manual("lookup", "look it up", {"type": "object"}, lambda args: "data")])
    errors: list[AgentNodeEvent] = []
    step = AgentStep(agent, observer=lambda e: errors.append(e) if e.kind == "agent_error" else None)
    with pytest.raises(ConnectionResetError):
        single(step).run("go", state=None)
    usage = errors[0].usage
    assert usage is not None and (usage.requests, usage.input_tokens, usage.output_tokens) == (1, 7, 3)


def test_an_observer_failure_while_reporting_an_error_is_attached_as_a_note() -> None:
    def observer(event: AgentNodeEvent) -> None:
        if event.kind == "agent_error":
            raise RuntimeError("observer broke")
    step = AgentStep(Agent(echo_model()), adapt=lambda c, r: 1 / 0, observer=observer)
    with pytest.raises(ZeroDivisionError) as info:
        single(step).run("x", state=None)
    assert any("observer also failed" in note for note in info.value.__notes__)


def test_the_correlation_bridge_reaches_lifecycle_hooks() -> None:
    seen: list[Any] = []
    agent = Agent(echo_model(), hooks=[lambda event: seen.append(event.run) if event.kind == "run_start" else None])
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    graph = (
        GraphBuilder(GraphTypes(value=str), identity="two")
        .step("first", AgentStep(agent, trace_parent=parent), next="second")
        .step("second", AgentStep(agent, prepare=lambda c, v: RunOptions(
            prompt=v, correlation=Correlation(trace_parent="00-" + "1" * 32 + "-" + "2" * 16 + "-01"))), next=END)
        .build("first")
    )
    graph.run("x", state=None, run_id="graph-run-1")
    assert [(r.run_id, r.correlation.node_index, r.correlation.node_name) for r in seen] == [
        ("graph-run-1", 0, "first"), ("graph-run-1", 1, "second")]
    assert seen[0].correlation.trace_parent == parent
    assert seen[1].correlation.trace_parent.startswith("00-1111")


def test_a_prepared_correlation_cannot_contradict_the_graph() -> None:
    step = AgentStep(Agent(echo_model()), prepare=lambda c, v: RunOptions(prompt=v, correlation=Correlation(run_id="other")))
    with pytest.raises(InvalidAgentStep, match="run_id='other' contradicts"):
        single(step).run("x", state=None, run_id="mine")


def _ctx(control: RunControl, deps: Any = None) -> StepContext[Any, Any]:
    return StepContext(None, deps, control, "run", 2, "node", 5)


def test_node_controls_only_tighten_the_agent_deadline() -> None:
    step = AgentStep(Agent(echo_model()), timeout_ms=5_000)
    assert step.options_for(_ctx(RunControl()), "p").timeout_ms == 5_000
    options = step.options_for(_ctx(RunControl(deadline=time.monotonic() + 1.0)), "p")
    assert options.timeout_ms is not None and 900 <= options.timeout_ms <= 1_000
    tighter = AgentStep(Agent(echo_model()), prepare=lambda c, v: RunOptions(prompt=v, timeout_ms=50), timeout_ms=5_000)
    assert tighter.options_for(_ctx(RunControl(deadline=time.monotonic() + 10)), "p").timeout_ms == 50
    assert AgentStep(Agent(echo_model())).options_for(_ctx(RunControl()), "p").timeout_ms is None
    expired = RunControl(deadline=time.monotonic() - 1)
    assert step.options_for(_ctx(expired), "p").timeout_ms == 0


def test_cancellation_is_the_graph_runs_token() -> None:
    token = CancellationToken()

    def answer(messages: Any, info: Any) -> ResponseMessage:
        token.cancel("graph stopped")
        info.request.control.check()
        return reply("never")
    step = AgentStep(Agent(FunctionModel(answer)))
    with pytest.raises(Cancelled, match="graph stopped"):
        single(step).run("x", state=None, control=RunControl(token=token))
    own = AgentStep(Agent(echo_model()), prepare=lambda c, v: RunOptions(prompt=v, cancellation=CancellationToken()))
    with pytest.raises(InvalidAgentStep, match="its own cancellation token"):
        single(own).run("x", state=None)
    options = step.options_for(_ctx(RunControl(token=token)), "p")
    assert options.cancellation is token


def test_durable_scope_is_the_node_index_and_completed_step_ordinal() -> None:
    scopes: list[tuple[int, int]] = []

    def record(ctx: Any, v: int) -> int:
        scope = durable_scope(ctx)
        scopes.append((scope.node_index, scope.completed_steps))
        assert StepId("graph-run", 3, "ns", scope).text == f"ns/graph-run/n0.s{ctx.step}/3"
        return v + 1
    graph = (
        GraphBuilder(GraphTypes(value=int), identity="cycle")
        .step("a", record, next="b")
        .decision("b", lambda c, v: ("again" if v < 3 else "done", v), routes={"again": "a", "done": END})
        .build("a")
    )
    graph.run(0, state=None)
    assert scopes == [(0, 0), (0, 2), (0, 4)]  # repeated visits never collide


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"prepare": 1}, "prepare must be callable"),
    ({"timeout_ms": -1}, "timeout_ms must be None or an int >= 0"),
    ({"trace_parent": ""}, "trace_parent"),
])
def test_agent_step_arguments_are_checked(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((InvalidAgentStep, ValueError), match=message):
        AgentStep(Agent(echo_model()), **kwargs)
    with pytest.raises(InvalidAgentStep, match="needs a zigai.Agent"):
        AgentStep("agent")  # type: ignore[arg-type]


def test_preparation_errors_name_the_node() -> None:
    with pytest.raises(InvalidAgentStep, match="node 'ask': the value is a int, not a prompt"):
        single(AgentStep(Agent(echo_model())), GraphTypes(value=int)).run(3, state=None)
    with pytest.raises(InvalidAgentStep, match="prepare must return RunOptions or a prompt str"):
        single(AgentStep(Agent(echo_model()), prepare=lambda c, v: 3)).run("x", state=None)
    agent = Agent(echo_model())
    assert repr(AgentStep(agent)) == "AgentStep(agent=None, streaming=False)"
    assert AgentStep(agent).agent is agent


# -- Conversation -------------------------------------------------------------------------------


@dataclass
class Chat:
    conversation: Conversation = field(default_factory=Conversation)


def chat_graph(agent: Agent, turns: int = 3) -> Any:
    def prepare(ctx: StepContext[Chat, Any], value: int) -> RunOptions:
        return RunOptions(prompt=f"turn {value}", message_history=ctx.state.conversation.messages)

    def adapt(ctx: StepContext[Chat, Any], result: Any) -> int:
        ctx.state.conversation = ctx.state.conversation.extend(result)
        return ctx.state.conversation.runs
    return (
        GraphBuilder(GraphTypes(state=Chat, value=int), identity="chat/v1")
        .step("talk", AgentStep(agent, prepare=prepare, adapt=adapt), next="more")
        .decision("more", lambda c, v: ("again" if v < turns else "done", v), routes={"again": "talk", "done": END})
        .build("talk")
    )


def counting_model() -> FunctionModel:
    return FunctionModel(lambda messages, info: reply(f"seen {len(messages)} messages", (len(messages), 1)))


def test_a_conversation_keeps_messages_and_usage_across_visits() -> None:
    result = chat_graph(Agent(counting_model())).run(0, state=Chat())
    conversation = result.state.conversation
    assert conversation.runs == 3 and len(conversation.messages) == 6
    assert [m.parts[-1].content for m in conversation.messages[1::2]] == [
        "seen 1 messages", "seen 3 messages", "seen 5 messages"]
    assert conversation.usage == RunUsage(requests=3, input_tokens=1 + 3 + 5, output_tokens=3, attempts=3)


def test_a_conversation_survives_a_snapshot_round_trip() -> None:
    # a fixed clock: the resumed and the uninterrupted run must build equal histories
    graph = chat_graph(Agent(counting_model(), clock=lambda: datetime(2025, 1, 1, tzinfo=UTC)))
    codec = SnapshotCodec(
        encode_state=lambda chat: chat.conversation.to_json_value(),
        decode_state=lambda data: Chat(Conversation.from_json_value(data)),
    )
    run = graph.start(0, state=Chat())
    run.next()
    run.next()
    text = graph.snapshot(run, codec)
    json.loads(text)
    resumed = graph.restore(text, codec).run_to_end()
    uninterrupted = graph.run(0, state=Chat())
    assert resumed.state.conversation.messages == uninterrupted.state.conversation.messages
    assert resumed.state.conversation.usage == uninterrupted.state.conversation.usage


@pytest.mark.parametrize("value", [
    [], {"history": {}, "usage": {}, "runs": 0},
    {"history": {}, "usage": {**Conversation().to_json_value()["usage"]}, "runs": -1},
    {"history": {}, "usage": {**Conversation().to_json_value()["usage"], "requests": -1}, "runs": 0},
])
def test_conversation_values_are_checked(value: Any) -> None:
    with pytest.raises(InvalidAgentStep):
        Conversation.from_json_value(value)


def test_conversation_arguments_are_checked() -> None:
    with pytest.raises(InvalidAgentStep, match="needs an agent Result"):
        Conversation().extend("result")  # type: ignore[arg-type]
    with pytest.raises(InvalidAgentStep, match="must be a RunUsage"):
        Conversation(usage=3)  # type: ignore[arg-type]
    assert Conversation.from_json_value(Conversation().to_json_value()) == Conversation()


def test_an_agent_step_refuses_to_be_a_fork_branch() -> None:
    from zigai.graph import Join

    graph = (
        GraphBuilder(GraphTypes(value=Any), identity="fan")
        .fork("fan", branches=[AgentStep(Agent(echo_model()))], join=Join(list, lambda a, v: [*a, v]), next=END)
        .build("fan")
    )
    with pytest.raises(InvalidAgentStep, match="not a fork branch callback"):
        graph.run("x", state=None)
