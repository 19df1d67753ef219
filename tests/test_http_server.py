"""The bounded HTTP/1.1 server core under hostile clients, through real loopback sockets.

Smuggling attempts (issue 32, defect 4) and slow clients (defect 5) are checked on the core,
on ``mcp.serve_http`` and on the UI's ``LocalServer``; the connection watch that cancels an
MCP handler whose client went away (issue 33, item 4) on ``serve_http``.
"""

from __future__ import annotations

import json
import logging
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from zigai import mcp
from zigai.http_server import (
    ClientGone,
    HttpServer,
    Request,
    Response,
    ServerLimits,
    wsgi_handler,
)
from zigai.ui import LocalServer

FAST = ServerLimits(idle_timeout_s=0.5, head_timeout_s=0.5, body_timeout_s=0.5, write_timeout_s=0.5,
                    close_grace_s=0.5)
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}


class Recorder:
    """A handler that reads the whole body and records every request it was given."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, bytes]] = []

    def __call__(self, request: Request) -> Response:
        body = request.read_body()
        self.seen.append((request.method, request.target, body))
        return Response(200, [("Content-Type", "text/plain")], b"ok:" + body)


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    return sock


def _read_all(sock: socket.socket, timeout: float = 10.0) -> bytes:
    """Everything the server sends until it closes the connection (bounded by ``timeout``)."""
    sock.settimeout(timeout)
    data = bytearray()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not chunk:
            break
        data += chunk
    return bytes(data)


def _exchange(port: int, raw: bytes) -> bytes:
    with _connect(port) as sock:
        sock.sendall(raw)
        return _read_all(sock)


def _wait(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def core() -> Iterator[tuple[HttpServer, Recorder]]:
    recorder = Recorder()
    with HttpServer(recorder, limits=FAST) as server:
        yield server, recorder


# ----------------------------------------------------------------------------- framing


SMUGGLED = [
    b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 40\r\n\r\nbody",
    b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\nbody",
    b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4, 4\r\n\r\nbody",
    b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +4\r\n\r\nbody",
    b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length : 4\r\n\r\nbody",
    b"POST / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n Content-Length: 4\r\n\r\nbody",
]


@pytest.mark.parametrize("raw", SMUGGLED)
def test_ambiguous_framing_is_400_and_closes_before_the_handler(core: tuple[HttpServer, Recorder], raw: bytes) -> None:
    server, recorder = core
    second = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
    answer = _exchange(server.port, raw + second)
    assert answer.startswith(b"HTTP/1.1 400 ") and answer.count(b"HTTP/1.1") == 1
    assert b"Connection: close" in answer
    assert recorder.seen == []


@pytest.mark.parametrize(("raw", "status"), [
    (b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", b"505"),
    (b"GET /\r\n\r\n", b"400"),
    (b"GET / HTTP/1.1\r\nHost: x\r\nExpect: magic\r\n\r\n", b"417"),
    (b"GET / HTTP/1.1\r\n" + b"X-A: b\r\n" * 101 + b"\r\n", b"431"),
])
def test_malformed_requests_get_their_status(core: tuple[HttpServer, Recorder], raw: bytes, status: bytes) -> None:
    server, recorder = core
    assert _exchange(server.port, raw).startswith(b"HTTP/1.1 " + status)
    assert recorder.seen == []


def test_the_head_size_limit_is_exact() -> None:
    recorder = Recorder()
    with HttpServer(recorder, limits=ServerLimits(max_head_bytes=200)) as server:
        start = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: "
        exact = start + b"p" * (200 - len(start) - 4) + b"\r\n\r\n"
        assert len(exact) == 200
        assert _exchange(server.port, exact).startswith(b"HTTP/1.1 200 ")
        assert _exchange(server.port, exact.replace(b"X-Pad: ", b"X-Pad: p")).startswith(b"HTTP/1.1 431 ")
        assert _exchange(server.port, b"GET / HTTP/1.1\r\nX-Pad: " + b"p" * 300).startswith(b"HTTP/1.1 431 ")


def test_keep_alive_serves_exactly_the_framed_requests_in_order(core: tuple[HttpServer, Recorder]) -> None:
    server, recorder = core
    raw = (b"\r\nPOST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
           b"POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
           b"GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    answer = _exchange(server.port, raw)
    assert answer.count(b"HTTP/1.1 200 OK") == 3
    assert recorder.seen == [("POST", "/a", b"abc"), ("POST", "/b", b""), ("GET", "/c", b"")]


def test_an_unread_body_closes_the_connection_instead_of_becoming_a_request() -> None:
    seen: list[str] = []

    def lazy(request: Request) -> Response:
        seen.append(request.target)
        return Response(200, [], b"not reading your body")

    with HttpServer(lazy, limits=FAST) as server:
        smuggled = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
        raw = b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(smuggled) + smuggled
        answer = _exchange(server.port, raw)
    assert answer.count(b"HTTP/1.1 200") == 1 and b"Connection: close" in answer
    assert seen == ["/a"]


def test_expect_100_continue_is_answered_before_the_body_is_read(core: tuple[HttpServer, Recorder]) -> None:
    server, recorder = core
    with _connect(server.port) as sock:
        sock.sendall(b"POST /up HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n"
                     b"Connection: close\r\n\r\n")
        assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(b"hi")
        assert _read_all(sock).endswith(b"ok:hi")


def test_a_failing_handler_is_500_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    def broken(request: Request) -> Response:
        raise RuntimeError("boom")

    with HttpServer(broken, limits=FAST) as server, caplog.at_level(logging.ERROR, "zigai.http_server"):
        assert _exchange(server.port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 500 ")
    assert "HTTP handler failed" in caplog.text


# ----------------------------------------------------------------------------- slow clients and bounds


def _closed_within(sock: socket.socket, bound: float) -> tuple[bytes, float]:
    started = time.monotonic()
    answer = _read_all(sock, timeout=bound + 5)
    return answer, time.monotonic() - started


@pytest.mark.parametrize(("partial", "expected"), [
    (b"", b""),                                                   # connected, never spoke
    (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Le", b"HTTP/1.1 408 "),  # half a head
    (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc", b""),  # half a body
    (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"HTTP/1.1 200 "),    # one request, then idle keep-alive
])
def test_slow_or_idle_clients_are_dropped_at_their_timeout(core: tuple[HttpServer, Recorder],
                                                            partial: bytes, expected: bytes) -> None:
    server, _recorder = core
    with _connect(server.port) as sock:
        sock.sendall(partial)
        answer, took = _closed_within(sock, 0.5)
    assert answer.startswith(expected) and answer.count(b"HTTP/1.1") == (1 if expected else 0)
    assert took < 5.0, f"the connection stayed open {took:.1f} s past a 0.5 s limit"
    assert _wait(lambda: server.active_connections == 0)


def test_excess_connections_are_refused_not_queued() -> None:
    recorder = Recorder()
    limits = ServerLimits(max_connections=2, idle_timeout_s=30)
    with HttpServer(recorder, limits=limits) as server:
        held = [_connect(server.port) for _ in range(2)]
        try:
            assert _wait(lambda: server.active_connections == 2)
            with _connect(server.port) as third:
                answer = _read_all(third, timeout=5)
            assert answer.startswith(b"HTTP/1.1 503 ") and b"Connection: close" in answer
            assert server.refused_connections == 1
        finally:
            for sock in held:
                sock.close()
        assert _wait(lambda: server.active_connections == 0)
        answer = _exchange(server.port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200 ")  # exactly the limit again once they left


def test_a_client_that_stops_reading_is_dropped_at_the_write_timeout() -> None:
    ended = threading.Event()

    def endless(request: Request) -> Response:
        def pieces() -> Iterator[bytes]:
            try:
                while True:
                    yield b"x" * 65536
            finally:
                ended.set()

        return Response(200, [("Content-Type", "application/octet-stream")], pieces())

    with HttpServer(endless, limits=FAST) as server:
        with _connect(server.port) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert ended.wait(15), "the server kept writing to a client that never reads"
            assert _wait(lambda: server.active_connections == 0)


def test_close_ends_idle_and_busy_connections_and_their_threads() -> None:
    release = threading.Event()

    def busy(request: Request) -> Response:
        if request.target == "/busy":
            release.wait(10)
        return Response(200, [], b"done")

    server = HttpServer(busy, limits=ServerLimits(close_grace_s=0.2))
    idle = _connect(server.port)
    stuck = _connect(server.port)
    stuck.sendall(b"GET /busy HTTP/1.1\r\nHost: x\r\n\r\n")
    assert _wait(lambda: server.active_connections == 2)
    started = time.monotonic()
    closer = threading.Thread(target=server.close)
    closer.start()
    assert _read_all(idle, timeout=5) == b""
    release.set()
    closer.join(10)
    assert not closer.is_alive() and time.monotonic() - started < 8
    assert server.active_connections == 0
    idle.close()
    stuck.close()
    server.close()  # a second close is a no-op


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="max_connections"):
        ServerLimits(max_connections=0)
    with pytest.raises(ValueError, match="idle_timeout_s"):
        ServerLimits(idle_timeout_s=0)


def test_the_port_is_released_when_binding_fails() -> None:
    with HttpServer(Recorder()) as taken, pytest.raises(OSError):
        HttpServer(Recorder(), port=taken.port)


# ----------------------------------------------------------------------------- TLS


def _tls_context(tmp_path: Path) -> ssl.SSLContext | None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                           "-out", str(cert), "-days", "1", "-subj", "/CN=localhost"], capture_output=True)
    if made.returncode:  # pragma: no cover - openssl is part of the test image
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


def test_tls_connections_are_served_and_watched(tmp_path: Path) -> None:
    context = _tls_context(tmp_path)
    if context is None:  # pragma: no cover
        pytest.skip("openssl is needed to make a test certificate: apt-get install openssl")
    gone: list[bool] = []

    def handler(request: Request) -> Response:
        gone.append(request.client_gone())
        if request.target == "/wait":
            gone.append(_wait(request.client_gone))
        return Response(200, [], b"secure" if request.tls else b"plain")

    client = ssl.create_default_context()
    client.check_hostname = False
    client.verify_mode = ssl.CERT_NONE
    with HttpServer(handler, ssl_context=context, limits=FAST) as server:
        with client.wrap_socket(_connect(server.port)) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert _read_all(sock).endswith(b"secure")
        with _connect(server.port) as silent:  # a TLS handshake that never starts is dropped too
            assert _closed_within(silent, 0.5)[1] < 5
        # a TLS client that says goodbye properly (close_notify, then FIN) is noticed as gone
        sock = client.wrap_socket(_connect(server.port))
        sock.sendall(b"GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _wait(lambda: len(gone) == 2)
        sock.setblocking(False)
        with pytest.raises(ssl.SSLError):
            sock.unwrap()  # sends close_notify; the answer to it never comes
        sock.close()
        assert _wait(lambda: len(gone) == 3)
    assert gone == [False, False, True]


# ----------------------------------------------------------------------------- WSGI adapter


def test_wsgi_handler_builds_the_environ_and_streams_lazy_bodies() -> None:
    seen: dict[str, Any] = {}

    def app(environ: dict[str, Any], start_response: Any) -> Iterator[bytes]:
        seen.update({k: environ[k] for k in ("PATH_INFO", "QUERY_STRING", "HTTP_X_TWICE", "CONTENT_LENGTH")})
        seen["under"] = "HTTP_X_UNDER_SCORE" in environ
        seen["lines"] = environ["wsgi.input"].readlines()
        start_response("201 Created", [("Content-Type", "text/plain")])
        yield b"made"

    with HttpServer(wsgi_handler(app), limits=FAST) as server:
        raw = (b"POST /a%20b?q=1 HTTP/1.1\r\nHost: x\r\nX-Twice: 1\r\nX-Twice: 2\r\nX_Under_Score: no\r\n"
               b"Content-Length: 4\r\n\r\na\nbc")
        answer = _exchange(server.port, raw)
    assert answer.startswith(b"HTTP/1.1 201 Created") and answer.endswith(b"made")
    assert seen == {"PATH_INFO": "/a b", "QUERY_STRING": "q=1", "HTTP_X_TWICE": "1,2", "CONTENT_LENGTH": "4",
                    "under": False, "lines": [b"a\n", b"bc"]}


def test_a_wsgi_app_reading_a_body_that_never_comes_does_not_hold_the_thread() -> None:
    failures: list[BaseException] = []

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        try:
            environ["wsgi.input"].read()
        except ClientGone as exc:  # pragma: no cover - the client here stays connected
            failures.append(exc)
        except Exception as exc:
            failures.append(exc)
        start_response("400 Bad Request", [("Content-Length", "0")])
        return [b""]

    with LocalServer(app, limits=FAST) as local, _connect(local.server.port) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        answer, took = _closed_within(sock, 0.5)
    assert answer.startswith(b"HTTP/1.1 400") and took < 5
    assert [type(f).__name__ for f in failures] == ["ClientTimedOut"]


# ----------------------------------------------------------------------------- MCP serve_http


def _mcp_request(body: bytes, *extra: bytes, method: str = "tools/list") -> bytes:
    return (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            b"Mcp-Method: " + method.encode() + b"\r\n" + b"".join(extra) + b"Content-Length: %d\r\n\r\n" % len(body)
            + body)


def _rpc(method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": ENVELOPE}}
    return json.dumps(message).encode()


@contextmanager
def _mcp_server(server: mcp.Server | None = None) -> Iterator[mcp.HttpServerHandle]:
    with mcp.serve_http(server or mcp.Server("s", "1"), limits=FAST) as running:
        yield running


def test_serve_http_refuses_smuggling_with_400_and_serves_nothing_after_it() -> None:
    handled: list[str] = []
    server = mcp.Server("s", "1")
    server.add_tool(mcp.ToolInfo("t", {"type": "object"}), lambda args, request: handled.append("t") or "x")
    with _mcp_server(server) as running:
        port = running.httpd.port
        body = _rpc("tools/call", {"name": "t", "arguments": {}})
        follow = _mcp_request(body, b"Mcp-Name: t\r\n", method="tools/call")
        for extra in (b"Content-Length: 9999\r\n", b"Transfer-Encoding: chunked\r\n"):
            answer = _exchange(port, _mcp_request(body, extra, b"Mcp-Name: t\r\n", method="tools/call") + follow)
            assert answer.startswith(b"HTTP/1.1 400 ") and answer.count(b"HTTP/1.1 ") == 1
        assert handled == []
        answer = _exchange(port, _mcp_request(_rpc("tools/list"), b"Connection: close\r\n"))
        assert answer.startswith(b"HTTP/1.1 200 ") and b'"tools"' in answer


def test_serve_http_drops_slow_and_idle_clients() -> None:
    with _mcp_server() as running:
        port = running.httpd.port
        for partial in (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                        _mcp_request(_rpc("tools/list"))[:-5], b""):
            with _connect(port) as sock:
                sock.sendall(partial)
                _answer, took = _closed_within(sock, 0.5)
            assert took < 5.0
        assert _wait(lambda: running.httpd.active_connections == 0)


def test_local_server_drops_slow_clients_and_refuses_excess_connections() -> None:
    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"hello"]

    with LocalServer(app, limits=ServerLimits(max_connections=1, idle_timeout_s=0.5, head_timeout_s=0.5)) as local:
        port = local.server.port
        with _connect(port) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x")
            assert _wait(lambda: local.server.active_connections == 1)
            with _connect(port) as extra:
                assert _read_all(extra, timeout=5).startswith(b"HTTP/1.1 503 ")
            answer, took = _closed_within(sock, 0.5)
        assert answer.startswith(b"HTTP/1.1 408 ") and took < 5.0
        assert _wait(lambda: local.server.active_connections == 0)
        assert _exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").endswith(b"hello")


def test_answers_go_out_without_waiting_for_a_delayed_ack() -> None:
    options: list[int] = []

    def handler(request: Request) -> Response:
        options.append(request._conn.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        return Response(200, [], b"fast")

    with HttpServer(handler, limits=FAST) as server:
        answer = _exchange(server.port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert answer.endswith(b"fast") and options and options[0] != 0


@pytest.mark.parametrize("reset", [False, True], ids=["closed", "reset"])
def test_a_client_leaving_mid_body_ends_the_request_without_an_answer(reset: bool) -> None:
    failures: list[str] = []

    def handler(request: Request) -> Response:
        try:
            request.read_body()
        except ClientGone as exc:
            failures.append(type(exc).__name__)
            assert request.client_gone()
            raise
        return Response(200, [], b"unexpected")  # pragma: no cover - the body never completes

    with HttpServer(handler, limits=ServerLimits(body_timeout_s=10)) as server:
        sock = _connect(server.port)
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        time.sleep(0.2)
        sock.close()
        assert _wait(lambda: failures == ["ClientGone"] and server.active_connections == 0)


def test_streams_skip_empty_pieces_and_failing_bodies_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    def handler(request: Request) -> Response:
        def pieces() -> Iterator[bytes]:
            yield b""
            yield b"part"
            if request.target == "/broken":
                raise RuntimeError("the body generator failed")

        headers = [] if request.target == "/broken" else [("Content-Length", "4")]
        return Response(599, headers, pieces())

    with HttpServer(handler, limits=FAST) as server, caplog.at_level(logging.ERROR, "zigai.http_server"):
        answer = _exchange(server.port, b"GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 599 Status\r\n") and answer.endswith(b"\r\n\r\npart")
        answer = _exchange(server.port, b"HEAD /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 599 Status\r\n") and answer.endswith(b"\r\n\r\n")
        assert b"Content-Length: 4" in answer
        answer = _exchange(server.port, b"GET /broken HTTP/1.1\r\nHost: x\r\n\r\n")
        assert answer.endswith(b"part")
    assert "HTTP response body failed" in caplog.text


def test_wsgi_apps_that_misuse_the_interface_fail_loudly(caplog: pytest.LogCaptureFixture) -> None:
    def writer(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [])(b"legacy write")
        return []  # pragma: no cover - write() raised

    def restarter(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [])
        try:
            raise ValueError("late failure")
        except ValueError:
            import sys

            start_response("500 Internal Server Error", [], sys.exc_info())
        return []  # pragma: no cover - start_response re-raised

    def iterating(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        lines = list(environ["wsgi.input"])
        start_response("200 OK", [])
        return [b"%d" % len(lines)]

    request = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nConnection: close\r\n\r\na\nb\n"
    with caplog.at_level(logging.ERROR, "zigai.http_server"):
        for app in (writer, restarter):
            with HttpServer(wsgi_handler(app), limits=FAST) as server:
                assert _exchange(server.port, request).startswith(b"HTTP/1.1 500 ")
        with HttpServer(wsgi_handler(iterating), limits=FAST) as server:
            assert _exchange(server.port, request).endswith(b"2")
    assert "write() callable is not supported" in caplog.text and "late failure" in caplog.text


def test_a_request_asked_about_its_client_after_the_connection_ended_says_gone() -> None:
    kept: list[Request] = []

    def handler(request: Request) -> Response:
        kept.append(request)
        return Response(200, [], b"bye")

    with HttpServer(handler, limits=FAST) as server:
        with _connect(server.port) as sock:
            sock.sendall(b"\r\n")  # an empty line before a request is allowed and ignored
            time.sleep(0.1)
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert _read_all(sock).endswith(b"bye")
        assert _wait(lambda: server.active_connections == 0)
    assert kept[0].client_gone()
