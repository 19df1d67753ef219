"""A WSGI adapter for :class:`zigai.http_server.HttpServer` (used by :class:`zigai.ui.LocalServer`).

Job
    Turn one framed :class:`~zigai.http_server.Request` into a PEP 3333 ``environ``, call the
    application, and hand its status, headers and body iterable back to the server core.

Invariants
    * ``wsgi.input`` reads only the request's own body, bounded by the core's body deadline
      (a slow or vanished client raises :class:`~zigai.http_server.ClientTimedOut` /
      :class:`~zigai.http_server.ClientGone` into the application).
    * Header names containing ``_`` are dropped: in the ``environ`` they would be
      indistinguishable from the dashed name.  Repeated headers are joined with ``,``.
    * The ``write()`` callable of ``start_response`` is not supported (it raises); return an
      iterable.  The iterable's ``close()`` is always called.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import unquote

from zigai.http_server import HttpServerError, Request, Response, close_body

__all__ = ["wsgi_handler"]


class _WsgiInput:
    """``wsgi.input``: reads only the request's own body, bounded by its deadline."""

    def __init__(self, request: Request) -> None:
        self._request = request

    def read(self, size: int | None = -1) -> bytes:
        return self._request.read_body(-1 if size is None else size)

    def readline(self, size: int | None = -1) -> bytes:
        line = bytearray()
        while (size is None or size < 0 or len(line) < size) and (byte := self._request.read_body(1)):
            line += byte
            if byte == b"\n":
                break
        return bytes(line)

    def readlines(self, hint: int = -1) -> list[bytes]:
        return list(iter(self.readline, b""))

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.readline, b"")


def wsgi_handler(app: Callable[..., Iterable[bytes]]) -> Callable[[Request], Response]:
    """Adapt a WSGI application to :class:`~zigai.http_server.HttpServer`."""
    def handle(request: Request) -> Response:
        path, _, query = request.target.partition("?")
        host, port = request.server_address
        environ: dict[str, Any] = {
            "REQUEST_METHOD": request.method, "SCRIPT_NAME": "", "PATH_INFO": unquote(path, "latin-1"),
            "QUERY_STRING": query, "SERVER_NAME": str(host), "SERVER_PORT": str(port),
            "SERVER_PROTOCOL": request.version, "REMOTE_ADDR": request.client_address[0],
            "wsgi.version": (1, 0), "wsgi.url_scheme": "https" if request.tls else "http",
            "wsgi.input": _WsgiInput(request), "wsgi.errors": sys.stderr, "wsgi.multithread": True,
            "wsgi.multiprocess": False, "wsgi.run_once": False,
        }
        for name, value in request.headers:
            if "_" in name:
                continue  # would be indistinguishable from a dash once in the environ
            key = name.upper().replace("-", "_")
            if key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                environ[key] = value
                continue
            key = "HTTP_" + key
            environ[key] = f"{environ[key]},{value}" if key in environ else value
        started: list[Response] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
            if exc_info is not None and started:
                raise exc_info[1].with_traceback(exc_info[2])
            started[:] = [Response(int(status.split(" ", 1)[0]), list(headers))]
            return _no_write

        result = app(environ, start_response)
        if not started:  # a lazy app calls start_response on its first piece
            iterator = iter(result)
            first = next(iterator, b"")
            response = started[0]
            response.body = _chain(first, iterator, result)
            return response
        started[0].body = result
        return started[0]

    return handle


def _no_write(data: bytes) -> None:
    raise HttpServerError("the WSGI write() callable is not supported; return an iterable")


def _chain(first: bytes, rest: Iterator[bytes], owner: Iterable[bytes]) -> Iterator[bytes]:
    try:
        yield first
        yield from rest
    finally:
        close_body(owner)
