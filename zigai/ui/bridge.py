"""The neutral bridge: one agent stream in, :mod:`zigai.ui.events` values out.

There is no second execution engine.  :func:`start_run` and :func:`resume_run` call the
agent's own pause-aware streams (``Agent.run_until_pause_stream`` and
``Agent.resume_run_stream``); :class:`UiBridge` only *translates* what that stream says:

* identities: the run and thread ids given by the caller; one message id per model
  response (``<run>-m<step>``) and one part id per streamed part (``<message>-p<index>``);
  function tool calls keep the model's own ``tool_call_id``; provider-native (managed) tool
  calls and their provider-side results are shown like function calls and results; interrupts get the opaque
  ids of :class:`~zigai.ui.pauses.PauseStore`; custom events keep their names;
* output-tool calls (structured output in tool mode) are not shown as tool calls — the
  structured value arrives as ``zigai.partial_output`` custom events and the run result;
* a pause becomes ``RunEnd(outcome="interrupt")`` after its state is stored; the browser
  answers through :class:`~zigai.ui.pauses.ApprovalReply` values and the resume runs
  through the same deferred-run contract (decisions validated, tools executed by the
  agent's scheduler, never by the UI);
* every failure becomes one final :class:`RunFailure` (zigai errors keep their message;
  anything else is reported as ``internal error`` so application details do not leak).

:class:`CustomEvents` is a thread-safe outbox application code (a tool, a hook) may write
to while the run goes on; its events are delivered between agent events, in order.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from zigai.agent.events import (
    DeferredToolResultEvent,
    EnqueuedMessagesEvent,
    FinalResultEvent,
    FunctionToolResultEvent,
    ModelResponseEvent,
    PartialOutputEvent,
    ToolAvailabilityEvent,
)
from zigai.errors import ZigAIError
from zigai.messages import (
    Message,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolOutcome,
)
from zigai.messages.json_value import thaw_json
from zigai.model import (
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
)
from zigai.ui.events import (
    Custom,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunEnd,
    RunFailure,
    RunStart,
    StepEnd,
    StepStart,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    UiEvent,
    UsageEntry,
)
from zigai.ui.pauses import ApprovalReply, PauseStore, UnknownInterrupt

__all__ = ["CustomEvents", "UiBridge", "start_run", "resume_run", "json_value"]

OutcomeHook = Callable[[str, Any], None]
"""``(thread_id, outcome)`` — sees the owned RunOutcome before the bridge closes it."""


def json_value(value: Any) -> Any:
    """``value`` as plain JSON (frozen mappings thawed, tuples become lists; anything else
    becomes its ``str``)."""
    return json.loads(json.dumps(thaw_json(value), ensure_ascii=False, default=str))


class CustomEvents:
    """A thread-safe outbox of application custom events for one run."""

    __slots__ = ("_items", "_lock")

    def __init__(self) -> None:
        self._items: deque[Custom] = deque()
        self._lock = threading.Lock()

    def emit(self, name: str, value: Any = None, *, transient: bool = False) -> None:
        if not isinstance(name, str) or not name or name.startswith("zigai."):
            raise ValueError("custom event names are non-empty and 'zigai.' is reserved")
        event = Custom(name, json_value(value), transient)
        with self._lock:
            self._items.append(event)

    def put(self, name: str, value: Any) -> None:
        """Queue a zigai-defined event (``zigai.*`` names, e.g. shared-state updates)."""
        with self._lock:
            self._items.append(Custom(name, json_value(value)))

    def drain(self) -> list[Custom]:
        with self._lock:
            items = list(self._items)
            self._items.clear()
        return items


class UiBridge:
    """Translates the events of one agent stream (see module docs)."""

    def __init__(self, thread_id: str, run_id: str, *, custom: CustomEvents | None = None) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.custom = custom if custom is not None else CustomEvents()
        self._step = 0
        self._in_step = False
        self._parts: dict[int, tuple[str, str]] = {}  # index -> (kind, id)
        self._call_names: dict[str, str] = {}
        self._output_tools: frozenset[str] = frozenset()
        self._result: Any = None
        self._usage: dict[tuple[str | None, str | None], list[int]] = {}
        self.resumed = False
        self.error: BaseException | None = None

    @property
    def message_id(self) -> str:
        return f"{self.run_id}-m{self._step}"

    def translate(self, event: Any) -> list[UiEvent]:
        """The UI events one agent stream event produces (possibly none)."""
        out: list[UiEvent] = []
        if isinstance(event, PartStartEvent):
            if not self._in_step:
                self._step += 1
                self._in_step = True
                out.append(StepStart(self._step))
            self._start_part(event, out)
        elif isinstance(event, PartDeltaEvent):
            self._delta(event, out)
        elif isinstance(event, PartEndEvent):
            self._end_part(event, out)
        elif isinstance(event, ModelResponseEvent):
            self._record_usage(event)
            if self._in_step:
                out.append(StepEnd(self._step))
            self._in_step = False
            self._parts.clear()
        elif isinstance(event, ToolAvailabilityEvent):
            self._output_tools = frozenset(event.output_tools)
        elif isinstance(event, (FunctionToolResultEvent, DeferredToolResultEvent)):
            out.append(self._tool_result(event))
        elif isinstance(event, PartialOutputEvent):
            if event.json is not None:
                out.append(Custom("zigai.partial_output", json_value(event.json), transient=True))
        elif isinstance(event, EnqueuedMessagesEvent):
            out.append(Custom("zigai.enqueued_messages", {"count": len(event.messages)}))
        elif isinstance(event, FinalResultEvent):
            self._result = json_value(event.json if event.json is not None else event.output)
        out.extend(self.custom.drain())
        return out

    def _start_part(self, event: PartStartEvent, out: list[UiEvent]) -> None:
        part = event.part
        part_id = f"{self.message_id}-p{event.index}"
        if isinstance(part, TextPart):
            self._parts[event.index] = ("text", part_id)
            out.append(TextStart(self.message_id, part_id))
            if part.content:
                out.append(TextDelta(part_id, part.content))
        elif isinstance(part, ThinkingPart):
            self._parts[event.index] = ("reasoning", part_id)
            out.append(ReasoningStart(self.message_id, part_id))
            if part.content:
                out.append(ReasoningDelta(part_id, part.content))
        elif isinstance(part, NativeToolReturnPart):
            name = part.tool_name or self._call_names.get(part.tool_call_id, "")
            result_id = f"{self.run_id}-r-{part.tool_call_id}"
            if part.outcome is ToolOutcome.success:
                out.append(ToolResult(result_id, part.tool_call_id, name, json_value(part.content)))
            else:
                out.append(ToolResult(result_id, part.tool_call_id, name, None, "error",
                                      _text(part.content)))
        elif isinstance(part, NativeToolCallPart) or (
            isinstance(part, ToolCallPart) and part.tool_name not in self._output_tools
        ):
            call_id = part.tool_call_id
            self._parts[event.index] = ("call", call_id)
            self._call_names[call_id] = part.tool_name
            out.append(ToolCallStart(self.message_id, call_id, part.tool_name))
            if part.args:
                out.append(ToolCallDelta(call_id, part.args))

    def _delta(self, event: PartDeltaEvent, out: list[UiEvent]) -> None:
        known = self._parts.get(event.index)
        if known is None:
            return
        kind, ident = known
        delta = event.delta
        if kind == "text" and isinstance(delta, TextPartDelta) and delta.content_delta:
            out.append(TextDelta(ident, delta.content_delta))
        elif kind == "reasoning" and isinstance(delta, ThinkingPartDelta) and delta.content_delta:
            out.append(ReasoningDelta(ident, delta.content_delta))
        elif kind == "call" and isinstance(delta, ToolCallPartDelta) and delta.args_delta:
            out.append(ToolCallDelta(ident, delta.args_delta))

    def _end_part(self, event: PartEndEvent, out: list[UiEvent]) -> None:
        known = self._parts.pop(event.index, None)
        if known is None:
            return
        kind, ident = known
        if kind == "text":
            out.append(TextEnd(ident))
        elif kind == "reasoning":
            out.append(ReasoningEnd(ident))
        else:
            part = event.part
            assert isinstance(part, (ToolCallPart, NativeToolCallPart))
            self._call_names[part.tool_call_id] = part.tool_name
            out.append(ToolCallEnd(ident, part.tool_name, part.args))

    def _tool_result(self, event: FunctionToolResultEvent | DeferredToolResultEvent) -> ToolResult:
        part = event.result
        call_id = part.tool_call_id or ""
        name = part.tool_name or self._call_names.get(call_id, "")
        result_id = f"{self.run_id}-r-{call_id}"
        if isinstance(part, RetryPromptPart):
            return ToolResult(result_id, call_id, name, None, "error", part.content)
        if isinstance(event, DeferredToolResultEvent) and event.action == "deny":
            return ToolResult(result_id, call_id, name, None, "denied", _text(part.content))
        if part.outcome is not ToolOutcome.success:
            return ToolResult(result_id, call_id, name, None, "error", _text(part.content))
        return ToolResult(result_id, call_id, name, json_value(part.content))

    def _record_usage(self, event: ModelResponseEvent) -> None:
        key = (event.response.provider_name, event.response.model_name)
        usage = event.usage
        counts = self._usage.setdefault(key, [0, 0, 0, 0, 0])
        for position, value in enumerate((
            usage.input_tokens, usage.output_tokens, usage.reasoning_tokens,
            usage.cache_read_tokens, usage.cache_write_tokens,
        )):
            counts[position] += value

    def usage(self) -> tuple[UsageEntry, ...]:
        return tuple(UsageEntry(provider, model, *counts) for (provider, model), counts in self._usage.items())

    def events(self, stream: Any, pauses: PauseStore, on_outcome: OutcomeHook | None = None) -> Iterator[UiEvent]:
        """Drive ``stream`` (a pause-aware AgentStream) to its end, yielding UI events."""
        yield RunStart(self.thread_id, self.run_id, self.resumed)
        try:
            with stream:
                for event in stream:
                    yield from self.translate(event)
                outcome = stream.outcome()
        except Exception as exc:
            yield from self.custom.drain()
            yield self.failure(exc)
            return
        with outcome:
            end: RunEnd | RunFailure = RunEnd(self.thread_id, self.run_id, "complete",
                                              self._result, usage=self.usage())
            if outcome.is_paused:
                paused = outcome.paused
                stored = pauses.put(self.thread_id, paused.state_json, paused.calls)
                end = RunEnd(self.thread_id, self.run_id, "interrupt",
                             interrupts=stored.interrupts, usage=self.usage())
            if on_outcome is not None:
                try:
                    on_outcome(self.thread_id, outcome)
                except Exception as exc:  # saving history or a pause failed: report it
                    end = self.failure(exc)
        yield end

    def failure(self, exc: BaseException) -> RunFailure:
        """The final event for ``exc`` (kept in :attr:`error` for the caller)."""
        self.error = exc
        if isinstance(exc, ZigAIError):
            return RunFailure(self.thread_id, self.run_id, str(exc), type(exc).__name__, self.usage())
        return RunFailure(self.thread_id, self.run_id, "internal error: the run failed",
                          "InternalError", self.usage())


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(json_value(content), ensure_ascii=False)


def start_run(
    agent: Any, bridge: UiBridge, pauses: PauseStore, *, prompt: Any,
    history: Sequence[Message] = (), on_outcome: OutcomeHook | None = None, **options: Any,
) -> Iterator[UiEvent]:
    """UI events of ``agent.run_until_pause_stream(prompt, message_history=history, ...)``."""
    try:
        stream = agent.run_until_pause_stream(prompt, message_history=tuple(history), **options)
    except Exception as exc:
        return iter((RunStart(bridge.thread_id, bridge.run_id), bridge.failure(exc)))
    return bridge.events(stream, pauses, on_outcome)


def resume_run(
    agent: Any, bridge: UiBridge, pauses: PauseStore, replies: Sequence[ApprovalReply], *,
    on_outcome: OutcomeHook | None = None, **options: Any,
) -> Iterator[UiEvent]:
    """UI events of resuming the pause ``replies`` answer (decisions from the stored calls).

    A reply that does not fit (unknown id, missing call, wrong answer kind, or a decision
    the agent refuses) fails the run and leaves the pause in the store for a correct reply.
    """
    try:
        stored = pauses.find(replies)
        decisions = pauses.decisions(stored, replies)
        stream = agent.resume_run_stream(stored.state_json, decisions, **options)
    except Exception as exc:
        return iter((RunStart(bridge.thread_id, bridge.run_id, True), bridge.failure(exc)))
    if not pauses.take(stored.pause_id):  # another request claimed this pause first
        stream.close()
        lost = UnknownInterrupt(f"the pause {stored.pause_id!r} was already answered; start a new run")
        return iter((RunStart(bridge.thread_id, bridge.run_id, True), bridge.failure(lost)))
    bridge.resumed = True
    return bridge.events(stream, pauses, on_outcome)
