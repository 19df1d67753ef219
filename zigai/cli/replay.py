"""A strict, loopback-only HTTP server that replays one of the project's own cassettes.

``zigai demo`` uses it so the complete HTTP stack (``HttpTransport`` on urllib3, SSE decoding,
the provider adapter) runs offline.  The cassette is read by zigai's one cassette parser,
:mod:`zigai.conformance.cassette` (version-1 YAML, bounded safe loader, sensitive headers
refused); any :class:`~zigai.conformance.cassette.InvalidCassette` is raised again as
:class:`~zigai.cli.errors.CassetteReplayError`.  Replay is strict and in order: the method, the
URI *path and query* (the host is the loopback server's own) and the request body must match
the next interaction — JSON bodies by value with types significant (``1``, ``1.0`` and
``true`` differ).  A mismatch is answered with HTTP 599 and recorded; :meth:`ReplayServer.check`
raises :class:`~zigai.cli.errors.CassetteReplayError` for any mismatch or unused interaction.

The server binds ``127.0.0.1`` on an ephemeral port on the bounded server core
(:mod:`zigai.http_server`: strict framing, connection cap and timeouts), never reads a request
body larger than ``MAX_BODY`` bytes, and is stopped by ``close()`` (it is a context manager).
Behind the loopback :class:`~zigai.http_gate.DeploymentPolicy`, a web page cannot consume an
interaction: a foreign ``Host`` (DNS rebinding) is ``421`` and a foreign browser ``Origin``
``403``, answered before the body is read and not counted as a mismatch.  This is demonstration support for our own cassettes, not test tooling.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from zigai.cli.errors import CassetteReplayError
from zigai.conformance.cassette import (
    Interaction,
    InvalidCassette,
    parse_cassette,
    strict_json_equal,
)
from zigai.http_gate import DeploymentPolicy, fold_headers
from zigai.http_server import HttpServer, Request, Response

__all__ = ["MAX_BODY", "ReplayServer", "load_exchanges"]

MAX_BODY = 4 * 1024 * 1024


def load_exchanges(text: str, source: str = "<cassette>") -> tuple[Interaction, ...]:
    """The interactions of a version-1 cassette; an invalid one is a :class:`CassetteReplayError`."""
    try:
        return parse_cassette(text, source)
    except InvalidCassette as exc:
        raise CassetteReplayError(str(exc)) from None

_GATE = DeploymentPolicy()


class ReplayServer:
    """Serves ``exchanges`` strictly in order on ``http://127.0.0.1:<port>``."""

    def __init__(self, exchanges: tuple[Interaction, ...]) -> None:
        self._exchanges = exchanges
        self._next = 0
        self._lock = threading.Lock()
        self.mismatches: list[str] = []
        server = self

        def handle(request: Request) -> Response:
            refused = _GATE.check(fold_headers(request.headers), request.tls)
            if refused is not None:
                return Response(refused.status, [("Connection", "close")], refused.reason.encode())
            if request.content_length > MAX_BODY:
                return Response(413, [("Connection", "close")], b"request body too large")
            status, headers, payload = server._answer(request.method, request.target, request.read_body())
            out = [(name, value) for name, value in headers
                   if name.lower() not in ("content-length", "transfer-encoding", "connection")]
            out += [("Content-Length", str(len(payload))), ("Connection", "close")]
            return Response(status, out, payload)

        self._httpd = HttpServer(handle, "127.0.0.1", 0, name="zigai-replay")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.port}"

    def _answer(self, method: str, target: str, raw: bytes) -> tuple[int, Any, bytes]:
        with self._lock:
            if self._next >= len(self._exchanges):
                return self._miss(f"unexpected extra request {method} {target}")
            expected = self._exchanges[self._next]
            if method != expected.method or target != expected.target:
                return self._miss(f"expected {expected.method} {expected.target}, got {method} {target}")
            recorded = expected.request_body
            if recorded is not None and recorded.type == "json":
                try:
                    actual = json.loads(raw)
                except ValueError:
                    return self._miss("request body is not JSON")
                if not strict_json_equal(actual, recorded.content):
                    return self._miss(f"request #{self._next} body differs from the cassette")
            elif recorded is not None and raw.decode("utf-8", "replace") != recorded.content:
                return self._miss(f"request #{self._next} text body differs from the cassette")
            self._next += 1
            body = b"" if expected.response_body is None else expected.response_body.to_bytes()
            return expected.status, expected.response_headers, body

    def _miss(self, message: str) -> tuple[int, Any, bytes]:
        self.mismatches.append(message)
        return 599, (("Content-Type", "text/plain"),), message.encode()

    def check(self) -> None:
        """Raise unless every interaction was used and nothing mismatched."""
        if self.mismatches:
            raise CassetteReplayError("cassette mismatch: " + "; ".join(self.mismatches))
        if self._next != len(self._exchanges):
            raise CassetteReplayError(
                f"{len(self._exchanges) - self._next} cassette interaction(s) were not requested"
            )

    def close(self) -> None:
        self._httpd.close()

    def __enter__(self) -> ReplayServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
