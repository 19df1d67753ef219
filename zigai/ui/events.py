"""The neutral UI event vocabulary the bridge emits and every wire encoder consumes.

These values carry the identities a browser needs — run, message, part, call, interrupt
and custom-event names — and plain JSON payloads.  They say nothing about wire names:
``zigai.ui.agui`` and ``zigai.ui.vercel`` own those.  Every value is frozen and holds only
JSON-compatible data (strings, numbers, lists, dicts, None), so an encoder never touches a
zigai message object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "UiEvent",
    "RunStart",
    "StepStart",
    "StepEnd",
    "TextStart",
    "TextDelta",
    "TextEnd",
    "ReasoningStart",
    "ReasoningDelta",
    "ReasoningEnd",
    "ToolCallStart",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolResult",
    "Interrupt",
    "Custom",
    "UsageEntry",
    "RunEnd",
    "RunFailure",
]


@dataclass(frozen=True, slots=True)
class RunStart:
    """A run began; ``resumed`` when it continues a paused run (same conversation turn)."""

    thread_id: str
    run_id: str
    resumed: bool = False
    kind: Literal["run_start"] = "run_start"


@dataclass(frozen=True, slots=True)
class StepStart:
    """One model request (step numbers start at 1 and count requests of this run)."""

    step: int
    kind: Literal["step_start"] = "step_start"


@dataclass(frozen=True, slots=True)
class StepEnd:
    step: int
    kind: Literal["step_end"] = "step_end"


@dataclass(frozen=True, slots=True)
class TextStart:
    """A text part opened inside model response ``message_id``."""

    message_id: str
    part_id: str
    kind: Literal["text_start"] = "text_start"


@dataclass(frozen=True, slots=True)
class TextDelta:
    part_id: str
    delta: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True)
class TextEnd:
    part_id: str
    kind: Literal["text_end"] = "text_end"


@dataclass(frozen=True, slots=True)
class ReasoningStart:
    message_id: str
    part_id: str
    kind: Literal["reasoning_start"] = "reasoning_start"


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    part_id: str
    delta: str
    kind: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True, slots=True)
class ReasoningEnd:
    part_id: str
    kind: Literal["reasoning_end"] = "reasoning_end"


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A function tool call opened; ``call_id`` is the model's own tool call id."""

    message_id: str
    call_id: str
    tool_name: str
    kind: Literal["tool_call_start"] = "tool_call_start"


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    call_id: str
    delta: str
    kind: Literal["tool_call_delta"] = "tool_call_delta"


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """The call's arguments are complete: ``args`` is the raw argument JSON text."""

    call_id: str
    tool_name: str
    args: str
    kind: Literal["tool_call_end"] = "tool_call_end"


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A call ended.  ``status``: ``ok`` (``output`` is JSON), ``error`` or ``denied``
    (``error`` holds the text the model saw)."""

    result_id: str
    call_id: str
    tool_name: str
    output: Any = None
    status: Literal["ok", "error", "denied"] = "ok"
    error: str | None = None
    kind: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True, slots=True)
class Interrupt:
    """One call the paused run waits on; ``interrupt_id`` is server-minted and opaque.

    ``reason`` is ``tool_approval`` (approve or deny) or ``external_result`` (the client
    supplies the result).  ``args`` is the parsed argument object, or the raw argument text
    when the model's arguments are not a JSON object.
    """

    interrupt_id: str
    call_id: str
    tool_name: str
    args: Any
    reason: Literal["tool_approval", "external_result"]


@dataclass(frozen=True, slots=True)
class Custom:
    """An application- or zigai-defined event identified by ``name`` (``zigai.*`` is ours)."""

    name: str
    value: Any
    transient: bool = False
    kind: Literal["custom"] = "custom"


@dataclass(frozen=True, slots=True)
class UsageEntry:
    provider: str | None
    model: str | None
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True, slots=True)
class RunEnd:
    """The run finished: ``complete`` with ``result`` (the output as JSON) or ``interrupt``."""

    thread_id: str
    run_id: str
    outcome: Literal["complete", "interrupt"]
    result: Any = None
    interrupts: tuple[Interrupt, ...] = ()
    usage: tuple[UsageEntry, ...] = ()
    kind: Literal["run_end"] = "run_end"


@dataclass(frozen=True, slots=True)
class RunFailure:
    """The run failed; ``code`` is the error class name, ``message`` safe to show."""

    thread_id: str
    run_id: str
    message: str
    code: str
    usage: tuple[UsageEntry, ...] = field(default=())
    kind: Literal["run_failure"] = "run_failure"


UiEvent = (
    RunStart | StepStart | StepEnd | TextStart | TextDelta | TextEnd | ReasoningStart
    | ReasoningDelta | ReasoningEnd | ToolCallStart | ToolCallDelta | ToolCallEnd | ToolResult
    | Custom | RunEnd | RunFailure
)
