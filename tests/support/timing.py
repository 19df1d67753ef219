"""Bounds for tests that prove a deadline or a cancel ends a blocked call, on a loaded machine.

A bound is measured from the event it is about -- the deadline itself, or the moment the
cancel really happened (a timer thread can start late under load) -- never from when the
test started a timer.  The slack covers what is not the code under test: on a 2-core machine
running several test suites at once, the watchdog thread and the blocked thread each wait for
a CPU before they run, and coverage tracing slows both.  Every misbehaving peer in these
tests stalls for seconds (see each test's ``MISBEHAVE_S``), so a deadline or cancel that is
ignored, or honoured only at the next socket timeout, still overshoots these bounds by a
wide margin and fails.
"""

from __future__ import annotations

import threading
import time

from zigai.control import CancellationToken

__all__ = ["CANCEL_SLACK_S", "DEADLINE_SLACK_S", "CancelLater"]

DEADLINE_SLACK_S = 0.6
"""How late past its deadline a stopped call may return (scheduling on a loaded machine)."""

CANCEL_SLACK_S = 0.6
"""How long after the cancel a stopped call may return: the transport polls tokens every
50 ms, the rest is scheduling.  Still "well under a second", as issue 11 asks."""


class CancelLater:
    """Cancel ``token`` after ``delay`` s on a timer thread; ``cancelled_at`` is the monotonic
    time read just *before* the cancel, so a latency measured from it is never too small."""

    def __init__(self, token: CancellationToken, delay: float, reason: str = "cancelled") -> None:
        self.token = token
        self.reason = reason
        self.cancelled_at: float | None = None
        self.fired = threading.Event()
        self._timer = threading.Timer(delay, self._cancel)
        self._timer.daemon = True

    def _cancel(self) -> None:
        self.cancelled_at = time.monotonic()
        self.token.cancel(self.reason)
        self.fired.set()

    def start(self) -> CancelLater:
        self._timer.start()
        return self

    def stop(self) -> None:
        self._timer.cancel()

    def __enter__(self) -> CancelLater:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def latency(self) -> float:
        """Seconds from the cancel to now (the call under test has just returned)."""
        assert self.cancelled_at is not None, "the call ended before the cancel was sent"
        return time.monotonic() - self.cancelled_at
