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

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from zigai.errors import ProviderError

__all__ = ["SseEvent", "SseDecoder", "SseEventTooLarge", "iter_sse_events"]

DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024


class SseEventTooLarge(ProviderError):
    """One server-sent event carried more data than the configured bound."""


class SseEvent(NamedTuple):
    """One dispatched event (a tuple: cheap to build on the hot path)."""

    event: str  # "message" when the stream named none
    data: str


# The common event shape (optional ``event:`` line, one ``data:`` line, blank line),
# matched in C; anything else goes through the general line path.
_SIMPLE_EVENT = re.compile(rb"(?:event: ?([^\n:]*+)\n)?data: ?([^\n]*+)\n\n")


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

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Process a raw chunk split at any byte; return the events it completed."""
        buffer = self._tail + chunk if self._tail else chunk
        if self._pending_cr:
            self._pending_cr = False
            if buffer[:1] == b"\n":
                buffer = buffer[1:]  # the LF of a CRLF split across chunks
        if b"\r" in buffer:
            if buffer.endswith(b"\r"):
                # A final CR ends a line now, but may be the first half of a CRLF.
                self._pending_cr = True
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        cut = buffer.rfind(b"\n")
        if cut < 0:
            if len(buffer) > self._max + 64:
                raise SseEventTooLarge(f"server-sent event line exceeds {self._max} bytes")
            self._tail = buffer
            return []
        self._tail = buffer[cut + 1:]
        if len(self._tail) > self._max + 64:
            raise SseEventTooLarge(f"server-sent event line exceeds {self._max} bytes")
        events: list[SseEvent] = []
        limit = self._max
        pos = 0
        stop = cut + 1
        if not self._data and not self._event:
            # Fast path: consecutive simple events from the start of a clean buffer.  At the
            # first gap (comment, multi-line data, other fields) the general path takes over,
            # so a later match can never be mistaken for the tail of an unfinished event.
            for found in _SIMPLE_EVENT.finditer(buffer, 0, stop):
                if found.start() != pos:
                    break
                name, data = found.groups()
                if len(data) > limit:
                    raise SseEventTooLarge(f"server-sent event exceeds {limit} bytes")
                events.append(SseEvent(name.decode("utf-8", "replace") if name else "message",
                                       data.decode("utf-8", "replace")))
                pos = found.end()
        feed_line = self.feed_line
        while pos < stop:
            end = buffer.index(b"\n", pos)
            event = feed_line(buffer[pos:end])
            if event is not None:
                events.append(event)
            pos = end + 1
        return events

    def finish(self) -> SseEvent | None:
        """End of stream: a final unterminated line is processed, then any pending event."""
        if self._tail:
            tail, self._tail = self._tail, b""
            self.feed_line(tail)
        return self._dispatch()


def iter_sse_events(
    lines: Iterable[bytes], max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
) -> Iterator[SseEvent]:
    """Events from an iterable of complete lines (as ``Transport.stream_lines`` yields).

    This is the adapters' hot path, so it keeps its state in locals instead of calling
    :meth:`SseDecoder.feed_line` per line; the rules (and the tests) are the same.  A
    trailing ``\r`` left on a line by a CRLF terminator is removed.
    """
    if max_event_bytes <= 0:
        raise ValueError("max_event_bytes must be positive")
    name = ""
    data: list[bytes] = []
    size = 0
    new_event = tuple.__new__  # NamedTuple construction without its Python-level __new__
    for line in lines:
        if line[-1:] == b"\r":
            line = line[:-1]
        if not line:
            if data:
                yield new_event(SseEvent, (
                    name or "message",
                    (data[0] if len(data) == 1 else b"\n".join(data)).decode("utf-8", "replace"),
                ))
                data = []
                size = 0
            name = ""
            continue
        head = line[:5]
        if head == b"data:":
            value = line[6:] if line[5:6] == b" " else line[5:]
            size += len(value) + (1 if data else 0)
            if size > max_event_bytes:
                raise SseEventTooLarge(f"server-sent event exceeds {max_event_bytes} bytes")
            data.append(value)
        elif head == b"event" and line[5:6] == b":":
            name = (line[7:] if line[6:7] == b" " else line[6:]).decode("utf-8", "replace")
        elif line == b"data":  # a field without a colon has an empty value
            size += 1 if data else 0
            if size > max_event_bytes:
                raise SseEventTooLarge(f"server-sent event exceeds {max_event_bytes} bytes")
            data.append(b"")
        # comments (":...") and the id/retry/unknown fields are ignored
    if data:
        yield new_event(SseEvent, (
            name or "message",
            (data[0] if len(data) == 1 else b"\n".join(data)).decode("utf-8", "replace"),
        ))
