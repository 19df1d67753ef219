"""IoGuard: one request's deadline and cancellation token, enforced on its socket.

Job
    Bound every blocking socket operation of one request -- connect, request write, status
    line, headers, body, stream -- by the request's absolute deadline and its cancellation
    token, whatever the HTTP client is doing inside the call.

How
    * A guard holds its own duplicate of the request's socket (``os.dup`` underneath).
      ``shutdown(2)`` acts on the socket, not on one descriptor, so shutting the duplicate
      down wakes any thread blocked in ``recv``/``send`` on the original (plain or TLS) at
      once; owning a duplicate means the descriptor can never be closed and reused under the
      guard's feet.
    * One process-wide watchdog thread (daemon, started on first use) sleeps until the
      earliest registered deadline, and wakes every :data:`CANCEL_POLL_S` while some guard
      has a token (tokens are polled, not signalled).  A due guard is *tripped*: its socket is
      shut down and the request's next step raises :class:`TransportTimedOut` or
      :class:`~zigai.control.Cancelled`.
    * Work that is not a blocking socket call (connect, name resolution, decompression) calls
      :meth:`IoGuard.check` between bounded slices of at most :data:`CANCEL_POLL_S`.

Invariants
    * A tripped guard's connection is never reused: the transport closes it.
    * :meth:`IoGuard.failure` prefers cancellation over the deadline, so an explicit cancel is
      never reported as a timeout.
    * A request with neither a deadline nor a token never touches the watchdog.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Literal

from zigai.control import CancellationToken, Cancelled
from zigai.transport.base import TransportTimedOut

__all__ = ["CANCEL_POLL_S", "IoGuard", "current_guard", "guarding"]

CANCEL_POLL_S = 0.05

Trip = Literal["deadline", "cancelled"]


class IoGuard:
    """The deadline and token of one request, and a duplicate of its current socket."""

    __slots__ = ("deadline", "token", "target", "_lock", "_sock", "_tripped", "_closed")

    def __init__(
        self, deadline: float | None, token: CancellationToken | None, target: str
    ) -> None:
        self.deadline = deadline
        self.token = token
        self.target = target
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._tripped: Trip | None = None
        self._closed = False
        if deadline is not None or token is not None:
            _WATCHDOG.add(self)

    @property
    def watched(self) -> bool:
        """True when something can stop this request early (a deadline or a token)."""
        return self.deadline is not None or self.token is not None

    @property
    def tripped(self) -> Trip | None:
        return self._tripped

    # -- the socket ---------------------------------------------------------------------

    def attach(self, sock: socket.socket) -> None:
        """Watch ``sock`` from now on (the guard keeps a duplicate of it until closed)."""
        if not self.watched:
            return
        try:
            duplicate = socket.socket(fileno=os.dup(sock.fileno()))
        except OSError:  # pragma: no cover - the socket closed under us; its I/O will fail
            return
        with self._lock:
            previous, self._sock = self._sock, duplicate
            tripped = self._tripped is not None or self._closed
        if previous is not None:
            previous.close()
        if tripped:
            _shutdown(duplicate)

    def trip(self, why: Trip) -> None:
        """Stop the request: mark it and shut its socket down (idempotent)."""
        with self._lock:
            if self._tripped is not None or self._closed:
                return
            self._tripped = why
            sock = self._sock
        if sock is not None:
            _shutdown(sock)

    def close(self) -> bool:
        """Stop watching; True when the guard tripped (the connection must not be reused)."""
        with self._lock:
            self._closed = True
            sock, self._sock = self._sock, None
        if self.watched:
            _WATCHDOG.remove(self)
        if sock is not None:
            sock.close()
        return self._tripped is not None

    # -- decisions ----------------------------------------------------------------------

    def due(self, now: float) -> Trip | None:
        if self.token is not None and self.token.cancelled:
            return "cancelled"
        if self.deadline is not None and now >= self.deadline:
            return "deadline"
        return None

    def failure(self) -> Exception | None:
        """The error that explains a failed socket operation, when the guard is the cause."""
        why = self._tripped or self.due(time.monotonic())
        if why == "cancelled":
            assert self.token is not None
            return Cancelled(self.token.reason or f"{self.target}: request cancelled")
        if why == "deadline":
            return TransportTimedOut(f"{self.target}: deadline expired")
        return None

    def check(self) -> None:
        """Raise the cancellation or deadline error when the request must stop now."""
        error = self.failure()
        if error is not None:
            raise error

    def slice(self, limit: float | None = None) -> float | None:
        """How long one bounded wait may last: up to ``limit``, the deadline, and
        :data:`CANCEL_POLL_S` while a token is watched (None: no bound at all)."""
        bounds = [] if limit is None else [limit]
        if self.deadline is not None:
            bounds.append(max(0.0, self.deadline - time.monotonic()))
        if self.token is not None:
            bounds.append(CANCEL_POLL_S)
        return min(bounds) if bounds else None


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already disconnected: the blocked call fails on its own


class _Watchdog:
    """One daemon thread tripping due guards; idle (no wake-ups) when nothing is watched."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._guards: set[IoGuard] = set()
        self._thread: threading.Thread | None = None

    def add(self, guard: IoGuard) -> None:
        with self._cond:
            self._guards.add(guard)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="zigai-transport-watchdog", daemon=True
                )
                self._thread.start()
            self._cond.notify()

    def remove(self, guard: IoGuard) -> None:
        with self._cond:
            self._guards.discard(guard)

    def watched(self) -> int:
        with self._cond:
            return len(self._guards)

    def _run(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                due: list[tuple[IoGuard, Trip]] = []
                wait: float | None = None
                for guard in self._guards:
                    why = guard.due(now)
                    if why is not None:
                        due.append((guard, why))
                        continue
                    bound = guard.slice()
                    if bound is not None:
                        wait = bound if wait is None else min(wait, bound)
                for guard, _ in due:
                    self._guards.discard(guard)
                if not due:
                    self._cond.wait(wait)
            for guard, why in due:
                guard.trip(why)

    def _after_fork(self) -> None:  # pragma: no cover - runs in a forked child
        self._cond = threading.Condition()
        self._guards = set()
        self._thread = None


_WATCHDOG = _Watchdog()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_WATCHDOG._after_fork)

_active = threading.local()


def current_guard() -> IoGuard | None:
    """The guard of the request this thread is opening (set only inside :func:`guarding`)."""
    return getattr(_active, "guard", None)


class guarding:
    """``with guarding(guard):`` makes ``guard`` the current one for connection hooks."""

    __slots__ = ("_guard", "_previous")

    def __init__(self, guard: IoGuard) -> None:
        self._guard = guard
        self._previous: IoGuard | None = None

    def __enter__(self) -> IoGuard:
        self._previous = current_guard()
        _active.guard = self._guard
        return self._guard

    def __exit__(self, *exc: object) -> None:
        _active.guard = self._previous
