"""A :class:`~zigai.realtime.RealtimeConnection` over a WebSocket (the ``websockets`` extra).

``pip install 'zigai[websockets]'``.  This is the only module that imports ``websockets``;
it uses the library's synchronous client, so no event loop enters the session.

Close classification (RFC 6455 codes): an abnormal end (no close frame, 1006), a server
error (1011), a restart (1012), "try again later" (1013) and "going away" (1001) are
``reconnectable``; a normal close (1000), a policy or protocol refusal (1002, 1003, 1007,
1008, 1009) and anything else are not — reconnecting would only repeat them.  The URL must
be ``wss://``, or ``ws://`` to a loopback address.

Sends are bounded: ``send(frame, timeout)`` arms a timer that aborts the socket when the
frame is not written in time (a peer that stopped reading fills the socket buffers and
would block ``sendall`` forever) and raises :class:`RealtimeSendTimedOut`.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Mapping
from urllib.parse import urlsplit

from zigai.realtime.connection import (
    RealtimeConnectionError,
    RealtimeConnectionLost,
    RealtimeSendTimedOut,
)
from zigai.realtime.events import RealtimeFrameTooLarge
from zigai.security import is_loopback_host

__all__ = ["WebSocketConnection", "RECONNECTABLE_CLOSE_CODES", "openai_realtime_url",
           "azure_realtime_url", "xai_realtime_url", "gemini_live_url"]

RECONNECTABLE_CLOSE_CODES = frozenset({1001, 1006, 1011, 1012, 1013})


def _import() -> object:
    try:
        import websockets.sync.client as client
    except ImportError:  # pragma: no cover - the extra is part of the dev install
        raise RealtimeConnectionError(
            "WebSocket realtime connections need the websockets extra: pip install 'zigai[websockets]'"
        ) from None
    return client


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme == "wss":
        return
    if parts.scheme == "ws":
        host = parts.hostname or ""
        if is_loopback_host(host):
            return
        raise RealtimeConnectionError(f"refusing cleartext ws:// to {host!r}; use wss:// (ws:// is "
                                      "allowed only for loopback addresses)")
    raise RealtimeConnectionError(f"a realtime WebSocket URL must be wss:// (got {url!r})")


class WebSocketConnection:
    """One WebSocket connection; headers carry the credential and never appear in errors."""

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None,
                 open_timeout_s: float = 10.0, max_frame_bytes: int = 16 * 1024 * 1024,
                 close_timeout_s: float = 10.0) -> None:
        _check_url(url)
        client = _import()
        from websockets.exceptions import InvalidHandshake, WebSocketException

        self.url = url
        self.max_frame_bytes = max_frame_bytes
        try:
            self._socket = client.connect(  # type: ignore[attr-defined]
                url, additional_headers=dict(headers or {}), open_timeout=open_timeout_s,
                max_size=max_frame_bytes, compression=None, legacy=True, close_timeout=close_timeout_s,
            )
        except InvalidHandshake as exc:
            raise RealtimeConnectionError(f"the realtime WebSocket upgrade to {_safe(url)} failed: "
                                          f"{type(exc).__name__}") from None
        except (OSError, TimeoutError, WebSocketException) as exc:
            raise RealtimeConnectionLost(f"cannot connect to {_safe(url)}: {type(exc).__name__}",
                                         reconnectable=True) from None

    def send(self, frame: str, timeout: float | None = None) -> None:
        from websockets.exceptions import ConnectionClosed

        if timeout is not None and timeout <= 0:
            raise RealtimeSendTimedOut("the send deadline had passed before the frame was sent")
        aborted = threading.Event()
        timer = None
        if timeout is not None:
            timer = threading.Timer(timeout, self._abort, args=(aborted,))
            timer.daemon = True
            timer.start()
        try:
            self._socket.send(frame)
        except (ConnectionClosed, OSError) as exc:
            if aborted.is_set():
                raise RealtimeSendTimedOut(f"a {len(frame)}-character frame was not sent within {timeout} s "
                                           "(the peer stopped reading); the connection is aborted",
                                           reconnectable=True) from None
            if not isinstance(exc, ConnectionClosed):  # pragma: no cover - websockets wraps socket errors
                raise
            raise _lost(exc) from None
        finally:
            if timer is not None:
                timer.cancel()

    def _abort(self, aborted: threading.Event) -> None:
        aborted.set()
        try:
            self._socket.socket.shutdown(socket.SHUT_RDWR)  # wakes a blocked sendall
        except OSError:  # already closed
            pass

    def receive(self, timeout: float | None) -> str | bytes:
        from websockets.exceptions import ConnectionClosed

        try:
            return self._socket.recv(timeout=timeout)
        except ConnectionClosed as exc:
            if exc.sent is not None and exc.sent.code == 1009:  # we refused an oversized frame
                raise RealtimeFrameTooLarge(f"a realtime frame exceeded max_frame_bytes "
                                            f"({self.max_frame_bytes}); the connection is closed") from None
            raise _lost(exc) from None

    def close(self) -> None:
        self._socket.close()


def _lost(exc: object) -> RealtimeConnectionLost:
    received = getattr(exc, "rcvd", None)
    code = getattr(received, "code", None) if received is not None else 1006
    reason = getattr(received, "reason", "") if received is not None else ""
    return RealtimeConnectionLost(
        f"the realtime WebSocket closed with code {code}{': ' + reason if reason else ''}",
        reconnectable=code in RECONNECTABLE_CLOSE_CODES, code=code)


def _safe(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}{parts.path}"  # no query: it may carry a key


def openai_realtime_url(model: str) -> str:
    return f"wss://api.openai.com/v1/realtime?model={model}"


def azure_realtime_url(resource: str, deployment: str) -> str:
    """Azure OpenAI's GA endpoint for one deployment (``resource`` is the resource name)."""
    return f"wss://{resource}.openai.azure.com/openai/v1/realtime?model={deployment}"


def xai_realtime_url() -> str:
    return "wss://api.x.ai/v1/realtime"


def gemini_live_url() -> str:
    return ("wss://generativelanguage.googleapis.com/ws/"
            "google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent")
