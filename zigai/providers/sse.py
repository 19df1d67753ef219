"""Server-sent events framing shared by every streaming provider adapter.

The decoder takes raw byte chunks split anywhere (what
``ChunkedStreamResponse.chunks`` yields) and keeps only what it cannot parse yet;
single lines can also be fed.  It implements the WHATWG event-stream rules
adapters need: ``event:`` and ``data:`` fields (several ``data:`` lines join
with ``\\n``), one optional space after the colon, comment lines starting with
``:``, dispatch on a blank line, CR / LF / CRLF line ends.  ``id`` and
``retry`` are accepted and ignored (adapters never resume streams).  An event
left unterminated at the end of the stream is still dispatched.

Invariants: one event's data never exceeds ``max_event_bytes`` (the next byte
raises ``SseEventTooLarge``); an unterminated line is bounded by the same
number plus 64 bytes; the decoder holds at most 64 KiB of an unfinished
event's whole lines (beyond that they are parsed into the event as they
arrive); splitting the same bytes at any boundary yields the same events.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from zigai.errors import ProviderError

__all__ = ["SseEvent", "SseDecoder", "SseEventTooLarge", "iter_sse_batches"]

DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024


class SseEventTooLarge(ProviderError):
    """One server-sent event carried more data than the configured bound."""


class SseEvent(NamedTuple):
    """One dispatched event (a tuple: cheap to build on the hot path)."""

    event: str  # "message" when the stream named none
    data: str


# Either one event of the common shape (an optional ``event: `` line, one ``data: `` line, a
# blank line) or any other whole block up to and including its blank line.  Both start at a
# line start and end after a blank line, so matches tile a region that ends in "\n\n".
# Fields written without the space after the colon are valid too; they take the block path.
# The possessive quantifiers only spare the engine retries that could never match.
_EVENT_OR_BLOCK = re.compile(r"(?:event: (.*+)\n)?+data: (.*+)\n\n|((?:.+\n)*+\n)")

# Bytes kept unparsed while an event is incomplete; past this its lines are parsed early, so
# the buffer holds at most one partial line however long the event grows.
_HOLD_BYTES = 64 * 1024


class SseDecoder:
    """Incremental event-stream decoder; feed byte chunks (or lines), collect events.

    :meth:`feed` is the hot path: it parses every complete event of a chunk with one regular
    expression scan over the decoded text instead of one Python step per line.  Regions that
    are not valid UTF-8, or that are longer than the event bound, take the exact per-line path
    (:meth:`feed_line`), which is also where the size bound is counted.
    """

    __slots__ = (
        "_max", "_hold_limit", "_event", "_data", "_size", "_held", "_held_bytes", "_partial",
        "_pending_cr",
    )

    def __init__(self, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        if max_event_bytes <= 0:
            raise ValueError("max_event_bytes must be positive")
        self._max = max_event_bytes
        self._hold_limit = min(_HOLD_BYTES, max_event_bytes)
        self._event = ""
        self._data: list[bytes] = []
        self._size = 0
        # Unparsed input: whole lines of an event not yet ended (at most ``_hold_limit`` bytes),
        # then the partial line after them (``_partial`` bytes), as the pieces that arrived.
        self._held: list[bytes] = []
        self._held_bytes = 0
        self._partial = 0
        self._pending_cr = False

    @property
    def buffered_bytes(self) -> int:
        """Input bytes held unparsed (lines of an unfinished event and a partial line)."""
        return self._held_bytes

    def feed_line(self, line: bytes) -> SseEvent | None:
        """Process one complete line (without its terminator); return a dispatched event."""
        if not line:
            if self._data:
                return self._dispatch()
            self._event = ""
            return None
        if line.startswith(b"data:"):
            value = line[6:] if line[5:6] == b" " else line[5:]
            size = self._size + len(value) + (1 if self._data else 0)
            if size > self._max:
                raise SseEventTooLarge(f"server-sent event exceeds {self._max} bytes")
            self._size = size
            self._data.append(value)
            return None
        if line[:1] == b":":
            return None
        name, sep, value = line.partition(b":")
        if sep and value[:1] == b" ":
            value = value[1:]
        if name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"data":  # only reached without a colon: an empty value
            if self._size + (1 if self._data else 0) > self._max:
                raise SseEventTooLarge(f"server-sent event exceeds {self._max} bytes")
            self._size += 1 if self._data else 0
            self._data.append(b"")
        return None

    def _dispatch(self) -> SseEvent | None:
        data = self._data
        if not data:
            self._event = ""
            return None
        event = SseEvent(
            self._event or "message",
            (data[0] if len(data) == 1 else b"\n".join(data)).decode("utf-8", "replace"),
        )
        self._event = ""
        self._data = []
        self._size = 0
        return event

    def _feed_lines(self, text: bytes, events: list[SseEvent]) -> None:
        """The exact path: every ``\n``-terminated line of ``text`` through :meth:`feed_line`."""
        feed_line = self.feed_line
        for line in text.split(b"\n")[:-1]:
            event = feed_line(line)
            if event is not None:
                events.append(event)

    def _feed_region(self, region: bytes | memoryview, events: list[SseEvent]) -> None:
        """Parse ``region``: whole lines ending with a blank line, starting with no event
        under way, so every event in it is complete."""
        try:
            text = str(region, "utf-8") if len(region) <= self._max else None
        except UnicodeDecodeError:
            text = None
        if text is None:  # invalid UTF-8 is replaced per event; big regions are counted exactly
            self._feed_lines(bytes(region), events)
            return
        append = events.append
        new_event = tuple.__new__  # NamedTuple construction without its Python-level __new__
        for name, data, block in _EVENT_OR_BLOCK.findall(text):
            if block:
                self._feed_lines(block.encode("utf-8"), events)
            else:
                append(new_event(SseEvent, (name or "message", data)))

    def _take_held(self, tail: bytes) -> bytes:
        """The held bytes followed by ``tail``, as one string; nothing stays held."""
        joined = b"".join([*self._held, tail])
        self._held, self._held_bytes, self._partial = [], 0, 0
        return joined

    def _hold(self, piece: bytes, events: list[SseEvent]) -> None:
        """Keep ``piece`` (it holds no blank line) unparsed until its event ends; past the
        hold size the whole lines kept so far are parsed now and only a partial line stays."""
        held = self._held
        held.append(piece)
        self._held_bytes += len(piece)
        line_end = piece.rfind(b"\n") + 1
        if line_end:
            self._partial = len(piece) - line_end
            if self._held_bytes > self._hold_limit:
                joined = b"".join(held)
                line_end = len(joined) - self._partial
                self._feed_lines(joined[:line_end], events)
                self._held = [joined[line_end:]] if self._partial else []
                self._held_bytes = self._partial
        else:
            self._partial += len(piece)
        if self._partial > self._max + 64:
            raise SseEventTooLarge(f"server-sent event line exceeds {self._max} bytes")

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Process a raw chunk split at any byte; return the events it completed."""
        if self._pending_cr:
            self._pending_cr = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]  # the LF of a CRLF split across chunks
        if b"\r" in chunk:
            if chunk.endswith(b"\r"):
                # A final CR ends a line now, but may be the first half of a CRLF.
                self._pending_cr = True
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if not chunk:
            return []
        events: list[SseEvent] = []
        start = search = 0
        held = self._held
        if self._data or self._event:
            # An event whose first lines were already parsed (it outgrew the hold size) ends
            # at the first blank line this chunk completes; held bytes have no blank line.
            at_line_start = held[-1][-1] == 10 if held else True
            if at_line_start and chunk[0] == 10:
                start = 1
            else:
                start = chunk.find(b"\n\n") + 2
                if start == 1:  # not found
                    self._hold(chunk, events)
                    return events
            self._feed_lines(self._take_held(chunk[:start]), events)
            search = start - 1  # the next blank line may begin on the byte before ``start``
        elif held:
            if b"\n" not in chunk:  # only a partial line grows: keep the piece, copy nothing
                self._hold(chunk, events)
                return events
            search = self._held_bytes - 1  # held bytes have no blank line, so any is new
            chunk = self._take_held(chunk)
        found = chunk.rfind(b"\n\n", search)
        if found >= 0:
            cut = found + 2
            if start == 0 and cut == len(chunk):
                self._feed_region(chunk, events)
            else:
                with memoryview(chunk) as view:
                    self._feed_region(view[start:cut], events)
            start = cut
        if start < len(chunk):
            self._hold(chunk[start:] if start else chunk, events)
        return events

    def finish(self) -> SseEvent | None:
        """End of stream: unparsed lines and a final unterminated line are processed, then
        any pending event is dispatched."""
        events: list[SseEvent] = []
        if self._held:
            self._feed_lines(self._take_held(b"\n"), events)
        return events[0] if events else self._dispatch()


def iter_sse_batches(
    chunks: Iterable[bytes], max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
) -> Iterator[list[SseEvent]]:
    """The events of raw byte chunks split anywhere (``ChunkedStreamResponse.chunks``), as
    one non-empty list per chunk that completes any, so consumers loop over plain lists.

    An unterminated final event is still dispatched when ``chunks`` ends.
    """
    decoder = SseDecoder(max_event_bytes)
    feed = decoder.feed
    for chunk in chunks:
        events = feed(chunk)
        if events:
            yield events
    last = decoder.finish()
    if last is not None:
        yield [last]
