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

:class:`GrowingParts` is the decoders' side of the same rule: a part that grows by deltas
keeps its pieces in a list and is joined once when its value is read, so a stream of N
deltas costs O(total length), never O(N x length).
"""

from __future__ import annotations

from collections.abc import Iterator, ValuesView
from dataclasses import dataclass, replace
from typing import Any, Literal

from zigai.errors import ModelError
from zigai.messages import (
    FinishReason,
    ResponseMessage,
    ResponsePart,
    TextPart,
    ThinkingPart,
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
    "GrowingParts",
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


def _check_delta(part: ResponsePart, delta: ResponsePartDelta, index: int) -> None:
    """Reject a delta that does not fit its part's kind (O(1); nothing is copied)."""
    if isinstance(delta, ReplacePartDelta):
        return
    if isinstance(delta, TextPartDelta):
        if not isinstance(part, TextPart):
            raise InvalidStreamEvent(f"text delta for a {type(part).__name__} at index {index}")
    elif isinstance(delta, ThinkingPartDelta):
        if not isinstance(part, ThinkingPart):
            raise InvalidStreamEvent(f"thinking delta for a {type(part).__name__} at index {index}")
    elif isinstance(delta, ToolCallPartDelta):
        if not hasattr(part, "args") or not hasattr(part, "tool_name"):
            raise InvalidStreamEvent(f"tool-call delta for a {type(part).__name__} at index {index}")
    else:
        raise InvalidStreamEvent(f"unknown delta {type(delta).__name__}")


def _fold(part: ResponsePart, deltas: list[Any]) -> ResponsePart:
    """``part`` with every pending delta applied at once: one join, one new value.

    ``_check_delta`` already proved each delta fits ``part``'s kind.
    """
    if isinstance(part, TextPart):
        return replace(part, content=part.content + "".join(d.content_delta for d in deltas))
    if isinstance(part, ThinkingPart):
        signature = part.signature
        signatures = "".join(d.signature_delta for d in deltas if d.signature_delta)
        if signatures:
            signature = (signature or "") + signatures
        text = "".join(d.content_delta for d in deltas)
        return replace(part, content=part.content + text, signature=signature)
    call: Any = part  # a function or native tool call (checked by _check_delta)
    changes: dict[str, Any] = {"args": (call.args or "") + "".join(d.args_delta for d in deltas)}
    names = "".join(d.tool_name_delta for d in deltas if d.tool_name_delta)
    if names:
        changes["tool_name"] = call.tool_name + names
    ids = [d.tool_call_id for d in deltas if d.tool_call_id]
    if ids:
        changes["tool_call_id"] = ids[-1]
    return replace(call, **changes)


class PartAccumulator:
    """Applies model stream events in order and builds the final ResponseMessage.

    Deltas are checked against their part's kind as they arrive but only *folded*
    into a new part value when somebody reads it (``part``, ``parts``, ``build``), so
    a long stream costs one join per read instead of one full copy per delta.
    """

    __slots__ = ("_parts", "_pending", "_ended")

    def __init__(self) -> None:
        self._parts: dict[int, ResponsePart] = {}
        self._pending: dict[int, list[ResponsePartDelta]] = {}
        self._ended: set[int] = set()

    def apply(self, event: ModelStreamEvent) -> None:
        """Apply one event (raises ``InvalidStreamEvent`` when it does not fit)."""
        index = event.index
        parts = self._parts
        if isinstance(event, PartDeltaEvent):
            part = parts.get(index)
            if part is None:
                raise InvalidStreamEvent(f"event for part {index} before its start")
            if index in self._ended:
                raise InvalidStreamEvent(f"event for part {index} after its end")
            delta = event.delta
            _check_delta(part, delta, index)
            if isinstance(delta, ReplacePartDelta):
                self._pending.pop(index, None)
                parts[index] = delta.part
            else:
                self._pending.setdefault(index, []).append(delta)
            return
        if isinstance(event, PartStartEvent):
            if index in parts:
                raise InvalidStreamEvent(f"part {index} started twice")
            if index < 0:
                raise InvalidStreamEvent("part indexes are non-negative")
            parts[index] = event.part
            return
        if not isinstance(event, PartEndEvent):
            raise InvalidStreamEvent(f"unknown event {type(event).__name__}")
        if index not in parts:
            raise InvalidStreamEvent(f"event for part {index} before its start")
        if index in self._ended:
            raise InvalidStreamEvent(f"event for part {index} after its end")
        self._pending.pop(index, None)
        parts[index] = event.part
        self._ended.add(index)

    def kind(self, index: int) -> type | None:
        """The class of part ``index`` without folding its pending deltas."""
        part = self._parts.get(index)
        return None if part is None else type(part)

    def part(self, index: int) -> ResponsePart | None:
        """The current value of part ``index`` (pending deltas folded in), or None."""
        pending = self._pending.pop(index, None)
        if pending:
            self._parts[index] = _fold(self._parts[index], pending)
        return self._parts.get(index)

    def parts(self) -> tuple[ResponsePart, ...]:
        for index in list(self._pending):
            self.part(index)
        return tuple(self._parts[i] for i in sorted(self._parts))

    def build(self, **response_fields: Any) -> ResponseMessage:
        return ResponseMessage(parts=self.parts(), **response_fields)


def _grown(part: Any, pieces: list[str]) -> Any:
    text = "".join(pieces)
    if isinstance(part, (TextPart, ThinkingPart)):
        return replace(part, content=part.content + text)
    return replace(part, args=(part.args or "") + text)


class GrowingParts:
    """A stream decoder's parts by index, whose text (or tool-call ``args``) grows by pieces.

    :meth:`grow` appends a piece without copying the part; reading a part (``parts[i]``,
    :meth:`values`) joins its pending pieces once.  :meth:`base` returns the part as last
    stored, without its pending pieces: use it to look at a part's kind or metadata on the
    hot path.  Storing a part (``parts[i] = part``) drops that index's pending pieces.
    """

    __slots__ = ("_parts", "_pending")

    def __init__(self) -> None:
        self._parts: dict[int, ResponsePart] = {}
        self._pending: dict[int, list[str]] = {}

    def __len__(self) -> int:
        return len(self._parts)

    def __contains__(self, index: object) -> bool:
        return index in self._parts

    def __iter__(self) -> Iterator[int]:
        return iter(self._parts)

    def __getitem__(self, index: int) -> ResponsePart:
        pending = self._pending.pop(index, None)
        if pending:
            self._parts[index] = _grown(self._parts[index], pending)
        return self._parts[index]

    def __setitem__(self, index: int, part: ResponsePart) -> None:
        self._pending.pop(index, None)
        self._parts[index] = part

    def append(self, part: ResponsePart) -> int:
        """Store ``part`` at the next index (``len(self)``) and return that index."""
        index = len(self._parts)
        self[index] = part
        return index

    def base(self, index: int) -> ResponsePart:
        """Part ``index`` without its pending pieces (its kind and metadata are current)."""
        return self._parts[index]

    def grow(self, index: int, text: str) -> None:
        """Append ``text`` to part ``index``'s content (text, thinking) or ``args`` (calls)."""
        part = self._parts[index]
        if not isinstance(part, (TextPart, ThinkingPart)) and not hasattr(part, "args"):
            raise InvalidStreamEvent(f"part {index} ({type(part).__name__}) cannot grow by text")
        if text:
            self._pending.setdefault(index, []).append(text)

    def values(self) -> ValuesView[ResponsePart]:
        for index in list(self._pending):
            self.__getitem__(index)
        return self._parts.values()


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

    def current_part(self, index: int) -> ResponsePart | None:
        """The value part ``index`` has accumulated so far (None before its start)."""
        return self._accumulator.part(index)

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
