"""Model stream events and the accumulator that turns them into one ResponseMessage.

A streamed model response is a sequence of ``PartStartEvent`` /
``PartDeltaEvent`` / ``PartEndEvent`` values; every event for one part uses
the same ``index`` and indexes restart at 0 for every model response.  Usage
is reported separately (``StreamedResponse.usage``), never as a part.

Invariants of :class:`PartAccumulator`:

* a delta or end for an index that was never started raises
  ``InvalidStreamEvent``; a second start for a live index does too;
* a delta must match its part's kind (text delta → text part ...);
* ``build()`` returns parts in index order, so the accumulated response equals
  the buffered response the same provider would have returned.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from zigai.errors import ModelError
from zigai.messages import (
    FinishReason,
    ResponseMessage,
    ResponsePart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from zigai.usage import RequestUsage

__all__ = [
    "TextPartDelta",
    "ThinkingPartDelta",
    "ToolCallPartDelta",
    "ReplacePartDelta",
    "ResponsePartDelta",
    "PartStartEvent",
    "PartDeltaEvent",
    "PartEndEvent",
    "ModelStreamEvent",
    "InvalidStreamEvent",
    "PartAccumulator",
    "StreamedResponse",
]


class InvalidStreamEvent(ModelError):
    """A stream event referred to an unknown part or did not match its kind."""


@dataclass(frozen=True, slots=True)
class TextPartDelta:
    content_delta: str
    delta_kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ThinkingPartDelta:
    content_delta: str = ""
    signature_delta: str | None = None
    delta_kind: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True)
class ToolCallPartDelta:
    """Argument text (and rarely a late name or id) for a function or native tool call."""

    args_delta: str = ""
    tool_name_delta: str | None = None
    tool_call_id: str | None = None
    delta_kind: Literal["tool-call"] = "tool-call"


@dataclass(frozen=True, slots=True)
class ReplacePartDelta:
    """A whole new value for a part that has no incremental form (media, speech, returns)."""

    part: ResponsePart
    delta_kind: Literal["replace"] = "replace"


ResponsePartDelta = TextPartDelta | ThinkingPartDelta | ToolCallPartDelta | ReplacePartDelta


@dataclass(frozen=True, slots=True)
class PartStartEvent:
    index: int
    part: ResponsePart
    event_kind: Literal["part_start"] = "part_start"


@dataclass(frozen=True, slots=True)
class PartDeltaEvent:
    index: int
    delta: ResponsePartDelta
    event_kind: Literal["part_delta"] = "part_delta"


@dataclass(frozen=True, slots=True)
class PartEndEvent:
    index: int
    part: ResponsePart
    event_kind: Literal["part_end"] = "part_end"


ModelStreamEvent = PartStartEvent | PartDeltaEvent | PartEndEvent


def _apply(part: ResponsePart, delta: ResponsePartDelta, index: int) -> ResponsePart:
    if isinstance(delta, ReplacePartDelta):
        return delta.part
    if isinstance(delta, TextPartDelta):
        if not isinstance(part, TextPart):
            raise InvalidStreamEvent(f"text delta for a {type(part).__name__} at index {index}")
        return replace(part, content=part.content + delta.content_delta)
    if isinstance(delta, ThinkingPartDelta):
        if not isinstance(part, ThinkingPart):
            raise InvalidStreamEvent(f"thinking delta for a {type(part).__name__} at index {index}")
        signature = part.signature
        if delta.signature_delta:
            signature = (signature or "") + delta.signature_delta
        return replace(part, content=part.content + delta.content_delta, signature=signature)
    if isinstance(delta, ToolCallPartDelta):
        if not hasattr(part, "args") or not hasattr(part, "tool_name"):
            raise InvalidStreamEvent(f"tool-call delta for a {type(part).__name__} at index {index}")
        changes: dict[str, Any] = {"args": (part.args or "") + delta.args_delta}
        if delta.tool_name_delta:
            changes["tool_name"] = part.tool_name + delta.tool_name_delta
        if delta.tool_call_id:
            changes["tool_call_id"] = delta.tool_call_id
        return replace(part, **changes)
    raise InvalidStreamEvent(f"unknown delta {type(delta).__name__}")


class PartAccumulator:
    """Applies model stream events in order and builds the final ResponseMessage."""

    __slots__ = ("_parts", "_ended")

    def __init__(self) -> None:
        self._parts: dict[int, ResponsePart] = {}
        self._ended: set[int] = set()

    def apply(self, event: ModelStreamEvent) -> ResponsePart:
        """Apply one event; returns the part's value after it."""
        index = event.index
        if isinstance(event, PartStartEvent):
            if index in self._parts:
                raise InvalidStreamEvent(f"part {index} started twice")
            if index < 0:
                raise InvalidStreamEvent("part indexes are non-negative")
            self._parts[index] = event.part
            return event.part
        if index not in self._parts:
            raise InvalidStreamEvent(f"event for part {index} before its start")
        if index in self._ended:
            raise InvalidStreamEvent(f"event for part {index} after its end")
        if isinstance(event, PartDeltaEvent):
            part = _apply(self._parts[index], event.delta, index)
        elif isinstance(event, PartEndEvent):
            part = event.part
            self._ended.add(index)
        else:
            raise InvalidStreamEvent(f"unknown event {type(event).__name__}")
        self._parts[index] = part
        return part

    def parts(self) -> tuple[ResponsePart, ...]:
        return tuple(self._parts[i] for i in sorted(self._parts))

    def build(self, **response_fields: Any) -> ResponseMessage:
        return ResponseMessage(parts=self.parts(), **response_fields)


class StreamedResponse:
    """An in-progress streamed model response: iterate events, then read ``response()``.

    Subclasses implement :meth:`_events`; they set ``usage``, ``finish_reason``
    and friends as the provider reports them.  The object is a context manager;
    ``close()`` releases the underlying connection even when iteration stopped
    early.  ``response()`` is valid only after the events were exhausted.
    """

    def __init__(self, *, model_name: str | None = None, provider_name: str | None = None) -> None:
        self.model_name = model_name
        self.provider_name = provider_name
        self.usage = RequestUsage()
        self.finish_reason: FinishReason | None = None
        self.raw_finish_reason: str | None = None
        self.provider_response_id: str | None = None
        self.provider_details: Any = None
        self._accumulator = PartAccumulator()
        self._iterated = False
        self._complete = False
        self._closed = False

    def _events(self) -> Iterator[ModelStreamEvent]:
        raise NotImplementedError

    def __iter__(self) -> Iterator[ModelStreamEvent]:
        if self._iterated:
            raise InvalidStreamEvent("a streamed response can be iterated only once")
        self._iterated = True
        try:
            for event in self._events():
                self._accumulator.apply(event)
                yield event
            self._complete = True
        finally:
            self.close()

    def response(self) -> ResponseMessage:
        if not self._complete:
            raise InvalidStreamEvent("the stream has not been consumed to its end")
        return self._accumulator.build(
            usage=self.usage,
            model_name=self.model_name,
            provider_name=self.provider_name,
            provider_response_id=self.provider_response_id,
            finish_reason=self.finish_reason,
            raw_finish_reason=self.raw_finish_reason,
            provider_details=self.provider_details,
        )

    def _release(self) -> None:
        """Subclasses close their connection here."""

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._release()

    def __enter__(self) -> StreamedResponse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
