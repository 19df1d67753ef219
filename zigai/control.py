"""Run control: one absolute monotonic deadline and one cancellation token per invocation.

Every layer that can block (model requests, transports, retry waits, tools,
validators, hooks) receives the same :class:`RunControl` and asks it how much
time is left.  Deadlines are absolute ``time.monotonic()`` values, so retries
and nested work never restart the budget.

Invariants:

* ``remaining()`` never returns a negative number; ``None`` means unbounded.
* ``check()`` raises :class:`Cancelled` before :class:`RunTimedOut` when both
  hold, so an explicit cancellation is never reported as a timeout.
* ``sleep()`` is interruptible by cancellation and never outlives the deadline.
* Python cannot kill a thread: work that overruns is abandoned, its token is set
  and its late result must be discarded by the caller.  Cancellation is
  cooperative for application code (tools poll ``cancelled`` or use
  ``sleep``).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from zigai.errors import AgentError

__all__ = ["CancellationToken", "RunControl", "RunTimedOut", "Cancelled", "deadline_after_ms"]


class RunTimedOut(AgentError):
    """The invocation's absolute deadline passed."""


class Cancelled(AgentError):
    """The invocation's cancellation token was set."""


class CancellationToken:
    """A thread-safe, set-once cancellation flag (``threading.Event`` underneath)."""

    __slots__ = ("_event", "_reason")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._reason = ""

    def cancel(self, reason: str = "cancelled") -> None:
        if not self._event.is_set():
            self._reason = reason
            self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> str:
        return self._reason

    def wait(self, timeout: float | None) -> bool:
        """Block up to ``timeout`` seconds; True when cancelled."""
        return self._event.wait(timeout)

    def __repr__(self) -> str:
        return f"CancellationToken(cancelled={self.cancelled})"


def deadline_after_ms(timeout_ms: int | None, *, now: float | None = None) -> float | None:
    """Absolute monotonic deadline ``timeout_ms`` from now (None stays unbounded)."""
    if timeout_ms is None:
        return None
    if timeout_ms < 0:
        raise ValueError("timeout_ms must be >= 0")
    return (time.monotonic() if now is None else now) + timeout_ms / 1000.0


@dataclass(frozen=True, slots=True)
class RunControl:
    """The deadline and token shared by everything one invocation does."""

    deadline: float | None = None
    token: CancellationToken = field(default_factory=CancellationToken)
    cancellable: bool = field(default=True, compare=False)
    """False when no one outside the invocation holds ``token`` (``start`` without
    ``token=``): blocking work then has only the deadline to race."""

    @classmethod
    def start(
        cls,
        *timeouts_ms: int | None,
        token: CancellationToken | None = None,
    ) -> RunControl:
        """A fresh control whose deadline is the tightest of the given timeouts."""
        now = time.monotonic()
        candidates = [now + t / 1000.0 for t in timeouts_ms if t is not None]
        if any(t is not None and t < 0 for t in timeouts_ms):
            raise ValueError("timeouts must be >= 0")
        deadline = min(candidates) if candidates else None
        if token is None:
            return cls(deadline=deadline, token=CancellationToken(), cancellable=False)
        return cls(deadline=deadline, token=token)

    def remaining(self) -> float | None:
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    @property
    def cancelled(self) -> bool:
        return self.token.cancelled

    def check(self) -> None:
        """Raise Cancelled or RunTimedOut when the invocation must stop now."""
        if self.token.cancelled:
            raise Cancelled(self.token.reason or "run cancelled")
        if self.expired():
            raise RunTimedOut("run deadline exceeded")

    def attempt_deadline(self, request_timeout_ms: int | None) -> float | None:
        """Deadline for one attempt: the smaller of the per-attempt ceiling and the run's."""
        attempt = deadline_after_ms(request_timeout_ms)
        if attempt is None:
            return self.deadline
        if self.deadline is None:
            return attempt
        return min(attempt, self.deadline)

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` unless cancelled or out of time; then raise the control error."""
        if seconds < 0:
            raise ValueError("seconds must be >= 0")
        remaining = self.remaining()
        budget = seconds if remaining is None else min(seconds, remaining)
        if self.token.wait(budget):
            raise Cancelled(self.token.reason or "run cancelled")
        if remaining is not None and seconds > remaining:
            raise RunTimedOut("run deadline exceeded while waiting")
