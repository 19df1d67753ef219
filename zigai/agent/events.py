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


@dataclass(frozen=True, slots=True)
class PartialOutputEvent:
    """A provisional output snapshot: text so far, or repaired and partially checked JSON.

    ``output`` is the value after partial-aware output functions and validators; ``json``
    is the repaired JSON snapshot (None for text output); ``choice_name`` the provisional
    structured branch; ``part_index`` the model part the snapshot came from.
    """

    output: Any
    json: Any = None
    choice_name: str | None = None
    tool_call_id: str | None = None
    part_index: int | None = None
    event_kind: Literal["partial_output"] = "partial_output"


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
