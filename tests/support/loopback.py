"""A scripted HTTP/1.1 server on 127.0.0.1 for tests that need the real other side of a socket.

``LoopbackServer(handler)`` binds an ephemeral port, serves each request on its own thread and
calls ``handler(request) -> Reply`` with the method, target (path + query), headers and body.
A :class:`Reply` is a status, headers and either one body or a list of body pieces written
one by one; ``abort_after`` closes the connection after that many pieces (no terminating
chunk), which a client reads as a connection failure in the middle of the body.

The server stops when the ``with`` block exits; every socket has a timeout, so a test can
never hang on it.  Requests are recorded in :attr:`LoopbackServer.requests` in arrival order.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LoopbackServer", "Received", "Reply"]

SOCKET_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Received:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Reply:
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    pieces: tuple[bytes, ...] | None = None
    abort_after: int | None = None

    @classmethod
    def of_json(cls, value: Any, status: int = 200, headers: tuple[tuple[str, str], ...] = ()) -> Reply:
        return cls(status, (("Content-Type", "application/json"), *headers), json.dumps(value).encode())

    @classmethod
    def sse(cls, events: list[str], *, abort_after: int | None = None) -> Reply:
        pieces = tuple(f"data: {event}\n\n".encode() for event in events)
        return cls(200, (("Content-Type", "text/event-stream"),), pieces=pieces, abort_after=abort_after)


@dataclass
class LoopbackServer:
    handler: Callable[[Received], Reply]
    requests: list[Received] = field(default_factory=list)

    def __post_init__(self) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = SOCKET_TIMEOUT_S

            def log_message(self, *args: object) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                received = Received(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                with outer._lock:
                    outer.requests.append(received)
                reply = outer.handler(received)
                self.send_response(reply.status)
                for name, value in reply.headers:
                    self.send_header(name, value)
                if reply.pieces is None:
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    return
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Connection", "close")
                self.end_headers()
                for count, piece in enumerate(reply.pieces):
                    if reply.abort_after is not None and count >= reply.abort_after:
                        self.wfile.flush()
                        self.close_connection = True
                        return
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

            do_GET = do_POST = do_DELETE = do_PUT = _serve

        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=SOCKET_TIMEOUT_S)
