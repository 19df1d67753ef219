"""Agent stream events: the raw model part events plus what the agent loop derives from them.

``AgentStreamEvent`` is the union a streaming run delivers, in agent order:

* the model's own ``PartStartEvent`` / ``PartDeltaEvent`` / ``PartEndEvent`` values,
  forwarded unchanged (indexes restart at 0 for every model response);
* :class:`PartialOutputEvent` — the complete output accumulated so far (never just the
  latest delta), always delivered *after* the raw event that produced it;
* :class:`ModelResponseEvent` — one model response finished, with its request usage;
* :class:`ToolAvailabilityEvent` — the function and output tools offered to the next request
  (emitted when the set changes);
* :class:`FunctionToolCallEvent` / :class:`FunctionToolResultEvent` — an immediate call about
  to run and its result part;
* :class:`DeferredToolRequestEvent` — the run paused on calls that need a decision;
  :class:`DeferredToolResultEvent` — a resumed deferred call's result part;
* :class:`EnqueuedMessagesEvent` — batches from a ``PendingMessageQueue`` entered history;
* :class:`FinalResultEvent` — exactly once, after full validation, when the run completes.

Every event is an immutable value tagged by ``event_kind``.  Values are shared with the
run (messages are frozen); an application that must keep a mutable JSON snapshot beyond
the callback copies it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from zigai.messages import (
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
)
from zigai.model import PartDeltaEvent, PartEndEvent, PartStartEvent
from zigai.usage import RequestUsage

if TYPE_CHECKING:
    from zigai.agent.deferred import DeferredCall

__all__ = [
    "AgentStreamEvent",
    "PartialOutputEvent",
    "ModelResponseEvent",
    "ToolAvailabilityEvent",
    "FunctionToolCallEvent",
    "FunctionToolResultEvent",
    "DeferredToolRequestEvent",
    "DeferredToolResultEvent",
    "EnqueuedMessagesEvent",
    "FinalResultEvent",
    "AGENT_EVENT_KINDS",
]


class TextSoFar:
    """The pieces of a streamed text output, appended in O(piece); joined only when read.

    A text-output snapshot (:class:`PartialOutputEvent`) holds this buffer and its piece
    count instead of a copy of the text, so delivering one per delta costs O(delta) and a
    consumer that reads ``output`` pays for the join only for the events it reads.
    """

    __slots__ = ("pieces", "_joined", "_joined_count")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self._joined = ""
        self._joined_count = 0

    def text(self, count: int) -> str:
        """The text of the first ``count`` pieces (the last join is reused when it fits)."""
        if count == self._joined_count:
            return self._joined
        if count > self._joined_count:
            joined = self._joined + "".join(self.pieces[self._joined_count:count])
        else:
            joined = "".join(self.pieces[:count])
        self._joined, self._joined_count = joined, count
        return joined


_LAZY = object()


class PartialOutputEvent:
    """A provisional output snapshot: text so far, or repaired and partially checked JSON.

    ``output`` is the value after partial-aware output functions and validators; ``json``
    is the repaired JSON snapshot (None for text output); ``choice_name`` the provisional
    structured branch; ``part_index`` the model part the snapshot came from.  An immutable
    value; a text snapshot is materialized from the run's :class:`TextSoFar` on first read.
    """

    __slots__ = ("_output", "json", "choice_name", "tool_call_id", "part_index", "_source")

    event_kind: Literal["partial_output"] = "partial_output"
    _output: Any
    _source: tuple[TextSoFar, int] | None
    json: Any
    choice_name: str | None
    tool_call_id: str | None
    part_index: int | None

    def __init__(
        self, output: Any, json: Any = None, choice_name: str | None = None,
        tool_call_id: str | None = None, part_index: int | None = None,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "_output", output)
        set_(self, "json", json)
        set_(self, "choice_name", choice_name)
        set_(self, "tool_call_id", tool_call_id)
        set_(self, "part_index", part_index)
        set_(self, "_source", None)

    @classmethod
    def text_so_far(cls, source: TextSoFar, count: int, part_index: int) -> PartialOutputEvent:
        """A text snapshot of the first ``count`` pieces of ``source`` (joined lazily)."""
        event = cls(_LAZY, None, None, None, part_index)
        object.__setattr__(event, "_source", (source, count))
        return event

    @property
    def output(self) -> Any:
        output = self._output
        if output is _LAZY:
            assert self._source is not None
            source, count = self._source
            output = source.text(count)
            object.__setattr__(self, "_output", output)
            object.__setattr__(self, "_source", None)
        return output

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("PartialOutputEvent is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("PartialOutputEvent is immutable")

    def _key(self) -> tuple[Any, ...]:
        return (self.output, self.json, self.choice_name, self.tool_call_id, self.part_index)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PartialOutputEvent):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"PartialOutputEvent(output={self.output!r}, json={self.json!r}, "
            f"choice_name={self.choice_name!r}, tool_call_id={self.tool_call_id!r}, "
            f"part_index={self.part_index!r}, event_kind='partial_output')"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (PartialOutputEvent, (self.output, self.json, self.choice_name, self.tool_call_id, self.part_index))


@dataclass(frozen=True, slots=True)
class ModelResponseEvent:
    """One model response was completely received (after its last part event)."""

    response: ResponseMessage
    usage: RequestUsage
    event_kind: Literal["model_response"] = "model_response"


@dataclass(frozen=True, slots=True)
class ToolAvailabilityEvent:
    """The tools the next model request offers (function tools, then output tools)."""

    function_tools: tuple[str, ...]
    output_tools: tuple[str, ...] = ()
    event_kind: Literal["tool_availability"] = "tool_availability"


@dataclass(frozen=True, slots=True)
class FunctionToolCallEvent:
    """An immediate (or approved) function-tool call is about to execute."""

    part: ToolCallPart
    event_kind: Literal["function_tool_call"] = "function_tool_call"


@dataclass(frozen=True, slots=True)
class FunctionToolResultEvent:
    """A function-tool call ended: its return part, or a retry prompt for the model."""

    result: ToolReturnPart | RetryPromptPart
    event_kind: Literal["function_tool_result"] = "function_tool_result"


@dataclass(frozen=True, slots=True)
class DeferredToolRequestEvent:
    """The run paused: these calls need approval or an external result."""

    calls: tuple[DeferredCall, ...]
    event_kind: Literal["deferred_request"] = "deferred_request"


@dataclass(frozen=True, slots=True)
class DeferredToolResultEvent:
    """A deferred call was resolved on resume (approved and run, denied, or external)."""

    result: ToolReturnPart | RetryPromptPart
    action: Literal["approve", "deny", "result"] = "approve"
    event_kind: Literal["deferred_result"] = "deferred_result"


@dataclass(frozen=True, slots=True)
class EnqueuedMessagesEvent:
    """Batches accepted by a PendingMessageQueue entered the canonical history."""

    messages: tuple[RequestMessage, ...]
    event_kind: Literal["enqueued_messages"] = "enqueued_messages"


@dataclass(frozen=True, slots=True)
class FinalResultEvent:
    """The run's accepted output (delivered once, after full validation)."""

    output: Any
    json: Any = None
    output_name: str | None = None
    event_kind: Literal["final_result"] = "final_result"


AgentStreamEvent = (
    PartStartEvent
    | PartDeltaEvent
    | PartEndEvent
    | PartialOutputEvent
    | ModelResponseEvent
    | ToolAvailabilityEvent
    | FunctionToolCallEvent
    | FunctionToolResultEvent
    | DeferredToolRequestEvent
    | DeferredToolResultEvent
    | EnqueuedMessagesEvent
    | FinalResultEvent
)

AGENT_EVENT_KINDS: frozenset[str] = frozenset({
    "part_start", "part_delta", "part_end", "partial_output", "model_response",
    "tool_availability", "function_tool_call", "function_tool_result", "deferred_request",
    "deferred_result", "enqueued_messages", "final_result",
})
