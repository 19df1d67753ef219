"""Incremental server-sent-events framing for request-scoped MCP response streams.

Job
    Turn the bytes of a ``text/event-stream`` body, split anywhere, into complete events.  No
    JSON-RPC meaning lives here: the transport parses and correlates each event's data.

Rules (WHATWG event-stream)
    Lines end with CRLF, LF or a lone CR (also when CR and LF arrive in different pieces).
    ``field: value`` drops one space after the colon; a line without a colon is a field with an
    empty value; lines starting with ``:`` are comments (keep-alives).  ``data`` lines join with
    ``\\n``; ``event`` names the event type (``message`` when absent).  ``id`` and ``retry`` are
    session-era resumption fields: the parser only remembers the last ``id`` (at most 256
    bytes, no NUL; :attr:`SseParser.last_event_id`), which a 2025-revision client may send back
    as ``Last-Event-ID``, and the last ``retry`` (digits only, capped at 60 s;
    :attr:`SseParser.retry_ms`), how long it waits first; 2026-07-28 streams never resume.  A blank line
    dispatches; an event with no data line dispatches nothing.  An event still open when the
    stream ends is dispatched by :meth:`SseParser.finish`.

Invariants
    * One event's data is at most ``max_event_bytes``: the byte that would exceed it raises
      :class:`SseEventTooLarge` before anything is parsed as JSON.
    * An unterminated line is bounded by ``max_event_bytes`` + 64 bytes, so the parser never
      holds more than about two events' worth of memory whatever the peer sends.
    * Feeding the same bytes split at any boundaries yields the same events.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from zigai.mcp.errors import SseEventTooLarge

__all__ = ["SseEvent", "SseParser", "LINE_OVERHEAD_BYTES"]

LINE_OVERHEAD_BYTES = 64
_MAX_EVENT_ID = 256
_MAX_RETRY_MS = 60_000
_TERMINATOR = re.compile(rb"\r\n|\r|\n")


class SseEvent(NamedTuple):
    """One dispatched event: its type and its joined data (bytes, UTF-8 checked by the JSON layer)."""

    event: str
    data: bytes


class SseParser:
    """A bounded incremental parser; one instance per response stream (no state crosses streams)."""

    __slots__ = ("max_event_bytes", "_line", "_skip_lf", "_data", "_has_data", "_event", "last_event_id",
                 "retry_ms")

    def __init__(self, max_event_bytes: int) -> None:
        if isinstance(max_event_bytes, bool) or not isinstance(max_event_bytes, int) or max_event_bytes < 0:
            raise ValueError("max_event_bytes must be an int >= 0")
        self.max_event_bytes = max_event_bytes
        self._line = bytearray()
        self._skip_lf = False
        self._data = bytearray()
        self._has_data = False
        self._event = ""
        self.last_event_id: str | None = None
        self.retry_ms: int | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Parse ``chunk``; return the events it completed (possibly none)."""
        events: list[SseEvent] = []
        start = 0
        if self._skip_lf and chunk[:1] == b"\n":
            start = 1
        self._skip_lf = False
        for match in _TERMINATOR.finditer(chunk, start):
            self._line += chunk[start:match.start()]
            self._check_line()
            self._take_line(bytes(self._line), events)
            self._line.clear()
            start = match.end()
            if match.group() == b"\r" and start == len(chunk):
                self._skip_lf = True  # a CRLF may be split across pieces
        self._line += chunk[start:]
        self._check_line()
        return events

    def finish(self) -> list[SseEvent]:
        """End of stream: take a last unterminated line and dispatch an open event."""
        events: list[SseEvent] = []
        if self._line:
            self._take_line(bytes(self._line), events)
            self._line.clear()
        self._dispatch(events)
        return events

    def _check_line(self) -> None:
        limit = self.max_event_bytes + LINE_OVERHEAD_BYTES
        if len(self._line) > limit:
            raise SseEventTooLarge(
                f"an SSE line exceeds {limit} bytes (event data limit {self.max_event_bytes})",
                limit=self.max_event_bytes,
            )

    def _take_line(self, line: bytes, events: list[SseEvent]) -> None:
        if not line:
            self._dispatch(events)
            return
        if line[:1] == b":":
            return
        name, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            extra = len(value) + (1 if self._has_data else 0)
            if len(self._data) + extra > self.max_event_bytes:
                raise SseEventTooLarge(
                    f"an SSE event carries more than {self.max_event_bytes} bytes of data",
                    limit=self.max_event_bytes,
                )
            if self._has_data:
                self._data += b"\n"
            self._data += value
            self._has_data = True
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"id" and len(value) <= _MAX_EVENT_ID and b"\0" not in value:
            self.last_event_id = value.decode("utf-8", "replace") or None
        elif name == b"retry" and value.isdigit() and len(value) <= 9:
            self.retry_ms = min(int(value), _MAX_RETRY_MS)
        # unknown fields are ignored on purpose (see module docstring)

    def _dispatch(self, events: list[SseEvent]) -> None:
        if self._has_data:
            events.append(SseEvent(self._event or "message", bytes(self._data)))
        self._data.clear()
        self._has_data = False
        self._event = ""
