"""Server-sent events framing shared by every streaming provider adapter.

The decoder accepts either whole lines (what ``Transport.stream_lines``
yields, newline already removed) or raw byte chunks split anywhere (it keeps
the unfinished tail).  It implements the WHATWG event-stream rules adapters
need: ``event:`` and ``data:`` fields (several ``data:`` lines join with
``\\n``), one optional space after the colon, comment lines starting with
``:``, dispatch on a blank line, CR / LF / CRLF line ends.  ``id`` and
``retry`` are accepted and ignored (adapters never resume streams).

Invariants: one event's data never exceeds ``max_event_bytes`` (the next byte
raises ``SseEventTooLarge``); an unterminated tail line is bounded the same
way; splitting the same bytes at any boundary yields the same events.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from zigai.errors import ProviderError

__all__ = ["SseEvent", "SseDecoder", "SseEventTooLarge", "iter_sse_events"]

DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024


class SseEventTooLarge(ProviderError):
    """One server-sent event carried more data than the configured bound."""


@dataclass(frozen=True, slots=True)
class SseEvent:
    event: str  # "message" when the stream named none
    data: str


class SseDecoder:
    """Incremental event-stream decoder; feed lines or chunks, collect events."""

    __slots__ = ("_max", "_event", "_data", "_size", "_tail", "_pending_cr")

    def __init__(self, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        if max_event_bytes <= 0:
            raise ValueError("max_event_bytes must be positive")
        self._max = max_event_bytes
        self._event = ""
        self._data: list[bytes] = []
        self._size = 0
        self._tail = b""
        self._pending_cr = False

    def feed_line(self, line: bytes) -> SseEvent | None:
        """Process one complete line (without its terminator); return a dispatched event."""
        if not line:
            return self._dispatch()
        if line[:1] == b":":
            return None
        name, sep, value = line.partition(b":")
        if sep and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            added = len(value) + (1 if self._data else 0)
            if self._size + added > self._max:
                raise SseEventTooLarge(f"server-sent event exceeds {self._max} bytes")
            self._size += added
            self._data.append(value)
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        return None

    def _dispatch(self) -> SseEvent | None:
        if not self._data:
            self._event = ""
            return None
        event = SseEvent(
            event=self._event or "message",
            data=b"\n".join(self._data).decode("utf-8", "replace"),
        )
        self._event = ""
        self._data = []
        self._size = 0
        return event

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Process a raw chunk split at any byte; return the events it completed."""
        events: list[SseEvent] = []
        buffer = self._tail + chunk
        start = 0
        if self._pending_cr and buffer[:1] == b"\n":
            start = 1  # the LF of a CRLF split across chunks
        self._pending_cr = False
        length = len(buffer)
        while True:
            cr = buffer.find(b"\r", start)
            lf = buffer.find(b"\n", start)
            if cr < 0 and lf < 0:
                break
            end = lf if cr < 0 else cr if lf < 0 else min(cr, lf)
            event = self.feed_line(buffer[start:end])
            if event is not None:
                events.append(event)
            if buffer[end:end + 1] == b"\r":
                if end + 1 < length:
                    start = end + 2 if buffer[end + 1:end + 2] == b"\n" else end + 1
                else:
                    self._pending_cr = True
                    start = end + 1
            else:
                start = end + 1
        self._tail = buffer[start:]
        if len(self._tail) > self._max + 64:
            raise SseEventTooLarge(f"server-sent event line exceeds {self._max} bytes")
        return events

    def finish(self) -> SseEvent | None:
        """End of stream: a final unterminated line is processed, then any pending event."""
        if self._tail:
            tail, self._tail = self._tail, b""
            self.feed_line(tail)
        return self._dispatch()


def iter_sse_events(lines: Iterable[bytes], max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> Iterator[SseEvent]:
    """Events from an iterable of complete lines (as ``Transport.stream_lines`` yields)."""
    decoder = SseDecoder(max_event_bytes)
    for line in lines:
        if line.endswith(b"\r"):
            line = line[:-1]
        event = decoder.feed_line(line)
        if event is not None:
            yield event
    last = decoder.finish()
    if last is not None:
        yield last
