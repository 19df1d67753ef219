"""Every loopback HTTP server zigai ships runs on the bounded core and its gate (issue 32, 4 and 5).

Real sockets against :class:`zigai.mcp.auth.testing.LoopbackAuthorizationServer`: request
smuggling is refused, a slow client cannot pin a thread, and a foreign ``Host`` (DNS rebinding)
or browser ``Origin`` is refused before the body is read.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest

from zigai.http_server import ServerLimits
from zigai.mcp.auth.testing import LoopbackAuthorizationServer


@pytest.fixture()
def auth() -> Iterator[LoopbackAuthorizationServer]:
    limits = ServerLimits(head_timeout_s=0.5, idle_timeout_s=0.5, body_timeout_s=0.5, max_connections=4)
    with LoopbackAuthorizationServer(limits=limits) as server:
        yield server


def _exchange(server: LoopbackAuthorizationServer, raw: bytes, timeout: float = 10.0) -> bytes:
    """Send ``raw``, then read until the server closes the connection (or ``timeout``)."""
    with socket.create_connection(("127.0.0.1", int(server.origin.rsplit(":", 1)[1])), timeout=timeout) as sock:
        sock.sendall(raw)
        received = b""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            chunk = sock.recv(65536)
            if not chunk:
                return received
            received += chunk
        pytest.fail(f"the server kept the connection open past {timeout} s; got {received[:200]!r}")


def _register(host: str = "127.0.0.1", extra: str = "") -> bytes:
    body = json.dumps({"redirect_uris": ["http://127.0.0.1:9/cb"], "token_endpoint_auth_method": "none"})
    return (f"POST /register HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{extra}"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}").encode()


def test_a_plain_registration_over_a_raw_socket_is_served(auth: LoopbackAuthorizationServer) -> None:
    answer = _exchange(auth, _register())
    assert answer.startswith(b"HTTP/1.1 201") and b'"client_id"' in answer


def test_conflicting_content_lengths_are_refused_and_nothing_is_smuggled(auth: LoopbackAuthorizationServer) -> None:
    smuggled = b"GET /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    raw = (b"POST /register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n"
           b"Content-Length: %d\r\n\r\n{}" % (2 + len(smuggled))) + smuggled
    answer = _exchange(auth, raw)
    assert answer.startswith(b"HTTP/1.1 400")
    assert answer.count(b"HTTP/1.1") == 1, "bytes after the body were served as a second request"
    assert auth.kinds() == []


def test_transfer_encoding_is_refused(auth: LoopbackAuthorizationServer) -> None:
    raw = (b"POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
           b"Content-Length: 5\r\n\r\n0\r\n\r\n")
    assert _exchange(auth, raw).startswith(b"HTTP/1.1 400")
    assert auth.kinds() == []


def test_a_half_sent_head_is_dropped_at_the_head_timeout(auth: LoopbackAuthorizationServer) -> None:
    started = time.monotonic()
    answer = _exchange(auth, b"GET /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: 127", timeout=15)
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408")
    assert time.monotonic() - started < 15


def test_a_half_sent_body_is_dropped_at_the_body_timeout(auth: LoopbackAuthorizationServer) -> None:
    raw = b"POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\ngrant_type="
    started = time.monotonic()
    _exchange(auth, raw, timeout=15)
    assert time.monotonic() - started < 15
    assert auth.kinds() == []


def test_a_foreign_host_dns_rebinding_is_refused_before_the_body(auth: LoopbackAuthorizationServer) -> None:
    answer = _exchange(auth, _register(host="attacker.example"))
    assert answer.startswith(b"HTTP/1.1 421")
    assert auth.kinds() == []


@pytest.mark.parametrize("origin, status", [("http://attacker.example", b"403"), ("null", b"403"),
                                            ("http://127.0.0.1:8000", b"201")])
def test_browser_origins_must_be_loopback(auth: LoopbackAuthorizationServer, origin: str, status: bytes) -> None:
    answer = _exchange(auth, _register(extra=f"Origin: {origin}\r\n"))
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:100]
    assert auth.kinds() == ([] if status == b"403" else ["register"])


# -- the demo's replay server and the conformance kit ---------------------------------------------

def _raw(port: int, raw: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def _post(host: str, origin: str | None = None, path: str = "/v1/chat/completions") -> bytes:
    origin_line = f"Origin: {origin}\r\n" if origin else ""
    return (f"POST {path} HTTP/1.1\r\nHost: {host}\r\n{origin_line}Content-Type: text/plain\r\n"
            f"Content-Length: 2\r\nConnection: close\r\n\r\n{{}}").encode()


@pytest.mark.parametrize("host, origin, status", [("attacker.example", None, b"421"),
                                                  ("127.0.0.1", "https://attacker.example", b"403")])
def test_the_replay_server_refuses_web_pages_without_consuming_an_interaction(
        host: str, origin: str | None, status: bytes) -> None:
    from zigai.cli.demo import cassette_text
    from zigai.cli.replay import ReplayServer, load_exchanges

    with ReplayServer(load_exchanges(cassette_text())) as server:
        port = int(server.base_url.rsplit(":", 1)[1])
        assert _raw(port, _post(host, origin)).startswith(b"HTTP/1.1 " + status)
        assert server.mismatches == [] and server._next == 0


@pytest.mark.parametrize("host, origin, status", [("attacker.example", None, b"421"),
                                                  ("127.0.0.1", "http://attacker.example", b"403"),
                                                  ("localhost", None, b"200")])
def test_the_conformance_server_on_loopback_refuses_web_pages(host: str, origin: str | None, status: bytes) -> None:
    from zigai.conformance import ConformanceServer

    with ConformanceServer([]) as server:
        port = int(server.base_url.rsplit(":", 1)[1])
        origin_line = f"Origin: {origin}\r\n" if origin else ""
        raw = f"GET /_status HTTP/1.1\r\nHost: {host}\r\n{origin_line}Connection: close\r\n\r\n".encode()
        assert _raw(port, raw).startswith(b"HTTP/1.1 " + status)
        assert server.status()["unrouted"] == []


def test_the_conformance_server_takes_an_explicit_policy() -> None:
    from zigai.conformance import ConformanceServer
    from zigai.http_gate import DeploymentPolicy

    with ConformanceServer([], policy=DeploymentPolicy(allowed_hosts=("kit.internal:*",), require_tls=False)) as server:
        port = int(server.base_url.rsplit(":", 1)[1])
        ok = _raw(port, f"GET /_status HTTP/1.1\r\nHost: kit.internal:{port}\r\nConnection: close\r\n\r\n".encode())
        assert ok.startswith(b"HTTP/1.1 200")
        refused = _raw(port, b"GET /_status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert refused.startswith(b"HTTP/1.1 421")
