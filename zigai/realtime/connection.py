"""The raw-frame connection interface a realtime session talks through.

A :class:`RealtimeConnection` moves whole frames (text or binary) and nothing else: the
WebSocket upgrade, WebRTC negotiation, authentication headers and deployment URLs belong to
the implementation (:mod:`zigai.realtime.websocket` is one).  It also *classifies* how it
ended: :class:`RealtimeConnectionLost` says whether opening a new connection may help
(``reconnectable``), and the session reconnects only for those.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from zigai.errors import RealtimeError

__all__ = ["RealtimeConnection", "RealtimeConnectionError", "RealtimeConnectionLost", "RealtimeSendTimedOut"]


class RealtimeConnectionError(RealtimeError):
    """A realtime connection could not be opened or used."""


class RealtimeConnectionLost(RealtimeConnectionError):
    """The connection ended; ``reconnectable`` is the connection's own classification.

    ``code`` is the transport's close code when it has one (WebSocket close codes)."""

    def __init__(self, message: str, *, reconnectable: bool = False, code: int | None = None) -> None:
        super().__init__(message)
        self.reconnectable = reconnectable
        self.code = code


class RealtimeSendTimedOut(RealtimeConnectionLost):
    """A send did not finish by its deadline (the peer stopped reading); the connection was
    aborted, so a partly written frame can never be mistaken for a whole one."""


@runtime_checkable
class RealtimeConnection(Protocol):
    def send(self, frame: str, timeout: float | None = None) -> None:
        """Send one text frame within ``timeout`` seconds (None: no bound).

        Raises :class:`RealtimeSendTimedOut` when the frame is not written in time (the
        connection is then aborted) and RealtimeConnectionLost when the connection is gone."""
        ...

    def receive(self, timeout: float | None) -> str | bytes:
        """The next frame; TimeoutError when none arrives in time, RealtimeConnectionLost at the end."""
        ...

    def close(self) -> None: ...
