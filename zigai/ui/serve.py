"""A threaded ``wsgiref`` server on loopback for development, demos and tests.

``LocalServer(app)`` binds ``127.0.0.1`` on an ephemeral port (or the one given), serves
each connection on its own daemon thread and stops when the ``with`` block exits.  It is
the standard library's reference server: use a production WSGI server to deploy.
"""

from __future__ import annotations

import threading
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

__all__ = ["LocalServer"]


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - wsgiref's name
        pass


class LocalServer:
    """Serve a WSGI app on 127.0.0.1 in a background thread (a context manager)."""

    def __init__(self, app: Any, port: int = 0) -> None:
        self._server = make_server("127.0.0.1", port, app, server_class=_ThreadingServer,
                                   handler_class=_QuietHandler)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def __enter__(self) -> LocalServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
