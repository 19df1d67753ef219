"""A bounded log of encoded events for browser reconnects, independent of agent state.

The run's producer appends each encoded wire frame once; any number of readers follow the
log from a sequence number (SSE ``Last-Event-ID``).  Reconnecting is a delivery retry: it
never re-runs a model request or a tool.

Invariants:

* sequence numbers start at 1 and increase by one per frame;
* the log keeps at most ``max_events`` frames and ``max_bytes`` bytes (the newest frame is
  always kept); older frames are evicted, so a slow or absent client cannot make the run
  retain its whole output;
* a reader that asks for (or falls behind to) an evicted frame gets :class:`ReplayGap`
  instead of a silently incomplete stream;
* reads wait on a condition, bounded by ``timeout`` per wait; :meth:`close` wakes readers.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator

from zigai.errors import UiError

__all__ = ["ReplayLog", "ReplayGap", "ReplayTimedOut"]


class ReplayGap(UiError):
    """The frames after the requested sequence number were evicted; start a new run."""


class ReplayTimedOut(UiError):
    """No new frame arrived within the reader's wait bound."""


class ReplayLog:
    """Encoded frames of one run (see module docs)."""

    def __init__(self, max_events: int = 4096, max_bytes: int = 8 * 1024 * 1024) -> None:
        for name, value in (("max_events", max_events), ("max_bytes", max_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ReplayLog {name} must be a positive int")
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._frames: deque[tuple[int, bytes]] = deque()
        self._bytes = 0
        self._last = 0
        self._closed = False
        self._condition = threading.Condition()

    @property
    def last_sequence(self) -> int:
        with self._condition:
            return self._last

    @property
    def first_sequence(self) -> int:
        """The oldest frame still held (``last_sequence + 1`` when empty)."""
        with self._condition:
            return self._frames[0][0] if self._frames else self._last + 1

    @property
    def closed(self) -> bool:
        with self._condition:
            return self._closed

    def append(self, frame: bytes) -> int:
        """Add one encoded frame; returns its sequence number."""
        with self._condition:
            if self._closed:
                raise ValueError("the replay log is closed")
            self._last += 1
            self._frames.append((self._last, frame))
            self._bytes += len(frame)
            while len(self._frames) > 1 and (
                len(self._frames) > self.max_events or self._bytes > self.max_bytes
            ):
                _, dropped = self._frames.popleft()
                self._bytes -= len(dropped)
            self._condition.notify_all()
            return self._last

    def close(self) -> None:
        """The run ended: readers finish after the last frame."""
        with self._condition:
            self._closed = True
            self._condition.notify_all()

    def read(self, after: int = 0, *, timeout: float | None = 30.0) -> Iterator[tuple[int, bytes]]:
        """Frames with sequence > ``after``, following the log until it is closed."""
        position = after
        while True:
            with self._condition:
                while position >= self._last and not self._closed:
                    if not self._condition.wait(timeout):
                        raise ReplayTimedOut(f"no event within {timeout} s")
                first = self._frames[0][0] if self._frames else self._last + 1
                if position + 1 < first:
                    raise ReplayGap(
                        f"events {position + 1}..{first - 1} were evicted from the replay log"
                    )
                ready = [item for item in self._frames if item[0] > position]
                done = self._closed
            for sequence, frame in ready:
                position = sequence
                yield sequence, frame
            if done and position >= self._last:
                return
