"""A bounded threaded server on loopback for development, demos and tests.

``LocalServer(app)`` binds ``127.0.0.1`` on an ephemeral port (or the one given), serves a
WSGI application on :class:`zigai.http_server.HttpServer` and stops when the ``with`` block
exits.  The core bounds what a slow or idle client can hold: at most ``max_connections``
connections (one more is answered 503 and closed), idle keep-alive connections close after
``idle_timeout_s``, a request head must arrive within ``head_timeout_s``, a body within
``body_timeout_s``, each write within ``write_timeout_s`` (see :class:`ServerLimits`).
Use a production WSGI server to deploy.
"""

from __future__ import annotations

from typing import Any

from zigai.http_server import HttpServer, ServerLimits, wsgi_handler

__all__ = ["LocalServer"]


class LocalServer:
    """Serve a WSGI app on 127.0.0.1 in background threads (a context manager; serving starts at once)."""

    def __init__(self, app: Any, port: int = 0, *, limits: ServerLimits | None = None) -> None:
        self.server = HttpServer(wsgi_handler(app), "127.0.0.1", port, limits=limits, name="zigai-ui-http")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.close()
