"""A strict, loopback-only HTTP server that replays one of the project's own cassettes.

``zigai demo`` uses it so the complete HTTP stack (``HttpTransport`` on urllib3, SSE decoding,
the provider adapter) runs offline.  The cassette format is the project's version-1 YAML
(``interactions`` of ``request{method, uri, body{type, content}}`` and
``response{status, headers, body}``).  Replay is strict and in order: the method, the URI
*path and query* (the host is the loopback server's own) and the request body must match the
next interaction — JSON bodies by value with types significant (``1``, ``1.0`` and ``true``
differ).  A mismatch is answered with HTTP 599 and recorded; :meth:`ReplayServer.check`
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
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from zigai._strict_yaml import bounded_loader
from zigai.cli.errors import CassetteReplayError
from zigai.http_gate import DeploymentPolicy, fold_headers
from zigai.http_server import HttpServer, Request, Response

__all__ = ["MAX_BODY", "Exchange", "ReplayServer", "load_exchanges"]

MAX_BODY = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Exchange:
    """One recorded request and the response to serve for it."""

    method: str
    target: str  # path and query
    body_type: str | None
    body: Any
    status: int
    headers: tuple[tuple[str, str], ...]
    response: bytes


def _target(uri: str) -> str:
    parts = urlsplit(uri)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _exact(raw: Any, keys: set[str], optional: set[str], where: str) -> dict[str, Any]:
    if not isinstance(raw, dict) or not keys <= set(raw) or set(raw) - keys - optional:
        raise CassetteReplayError(f"{where}: expected keys {sorted(keys)} (+{sorted(optional)})")
    return raw


def _body(raw: Any, where: str) -> tuple[str | None, Any]:
    if raw is None:
        return None, None
    body = _exact(raw, {"type", "content"}, set(), where)
    if body["type"] == "json":
        return "json", body["content"]
    if body["type"] == "text" and isinstance(body["content"], str):
        return "text", body["content"]
    raise CassetteReplayError(f"{where}: body type must be json or text")


def load_exchanges(text: str, source: str = "<cassette>") -> tuple[Exchange, ...]:
    """Parse a version-1 cassette (YAML, safe loader) into exchanges."""
    import yaml  # runtime dependency, imported only by the demo

    try:
        document = yaml.load(text, Loader=bounded_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise CassetteReplayError(f"{source}: not a readable YAML cassette: {exc}") from None
    document = _exact(document, {"version", "interactions"}, set(), source)
    if document["version"] != 1 or not isinstance(document["interactions"], list):
        raise CassetteReplayError(f"{source}: expected version 1 and a list of interactions")
    exchanges = []
    for index, item in enumerate(document["interactions"]):
        where = f"{source} interaction #{index}"
        item = _exact(item, {"request", "response"}, set(), where)
        request = _exact(item["request"], {"method", "uri"}, {"headers", "body"}, where)
        response = _exact(item["response"], {"status"}, {"headers", "body"}, where)
        body_type, body = _body(request.get("body"), where)
        out_type, out = _body(response.get("body"), where)
        if out_type == "json":
            payload = json.dumps(out, separators=(",", ":"), ensure_ascii=False).encode()
        else:
            payload = (out or "").encode()
        headers = []
        for name, values in (response.get("headers") or {}).items():
            for value in values if isinstance(values, list) else [values]:
                headers.append((str(name), str(value)))
        exchanges.append(Exchange(
            method=str(request["method"]).upper(), target=_target(str(request["uri"])),
            body_type=body_type, body=body, status=int(response["status"]),
            headers=tuple(headers), response=payload,
        ))
    return tuple(exchanges)


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)

_GATE = DeploymentPolicy()


class ReplayServer:
    """Serves ``exchanges`` strictly in order on ``http://127.0.0.1:<port>``."""

    def __init__(self, exchanges: tuple[Exchange, ...]) -> None:
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
            if expected.body_type == "json":
                try:
                    actual = json.loads(raw)
                except ValueError:
                    return self._miss("request body is not JSON")
                if not _same(actual, expected.body):
                    return self._miss(f"request #{self._next} body differs from the cassette")
            elif expected.body_type == "text" and raw.decode("utf-8", "replace") != expected.body:
                return self._miss(f"request #{self._next} text body differs from the cassette")
            self._next += 1
            return expected.status, expected.headers, expected.response

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
