"""HttpTransport and a keep-alive connection the server closed: real 127.0.0.1 sockets.

The classic race: a server finishes a streamed (chunked SSE) response on a keep-alive
connection, the client pools it, and the server drops it exactly as the client's next request
arrives.  The next request must not fail: a *reused* connection that died before any response
byte is sent again, once, on a new connection.  What must never be resent: a request whose
*new* connection failed, and one that already received response bytes.
"""

from __future__ import annotations

import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.raw_server import RawServer
from support.tls_certs import self_signed

from zigai.security import UrlPolicy
from zigai.transport import (
    HttpTransport,
    TransportConnectionFailed,
    TransportDecodeFailed,
    TransportRequest,
)
from zigai.transport._guard import _WATCHDOG

LOCAL = UrlPolicy.local_development()
SECRET = "sk-stale-canary-0123456789"

_SSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    + b"".join(b"%x\r\n%s\r\n" % (len(event), event) for event in (b"data: one\n\n", b"data: two\n\n"))
    + b"0\r\n\r\n"
)


def _ok(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


def _read_head(conn: socket.socket) -> bytes:
    """The next request head on ``conn`` (b"" when the client closed it)."""
    head = b""
    while b"\r\n\r\n" not in head:
        data = conn.recv(4096)
        if not data:
            return b""
        head += data
    return head


def _reset(conn: socket.socket) -> None:
    """Close with RST (SO_LINGER 0), the way a server drops a connection with unread data."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


class _StaleAfterStream:
    """Connection 1: one SSE response, then read the next request and drop the connection
    (``how``: "close" or "reset") without a byte.  Any later connection: answer normally."""

    def __init__(self, how: str) -> None:
        self.how = how
        self.served = 0
        self.second_requests: list[bytes] = []
        self._lock = threading.Lock()

    def __call__(self, conn: socket.socket, stop: threading.Event) -> None:
        with self._lock:
            self.served += 1
            number = self.served
        if number > 1:
            conn.sendall(_ok(b"fresh"))
            return
        conn.sendall(_SSE)
        head = _read_head(conn)
        self.second_requests.append(head)
        if self.how == "reset":
            _reset(conn)
        else:
            conn.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def transport() -> Iterator[HttpTransport]:
    with HttpTransport(url_policy=LOCAL, default_timeout_s=5) as made:
        yield made
    assert _WATCHDOG.watched() == 0


def _stream(transport: HttpTransport, url: str, **extra: object) -> list[bytes]:
    request = TransportRequest("POST", url, body=b'{"stream":true}', **extra)  # type: ignore[arg-type]
    with transport.stream_lines(request) as response:
        return [line for line in response.lines() if line]


@pytest.mark.parametrize("how", ["close", "reset"])
@pytest.mark.parametrize("watched", [False, True], ids=["no-deadline", "deadline"])
def test_a_request_after_a_finished_stream_survives_the_server_dropping_the_connection(
    transport: HttpTransport, how: str, watched: bool
) -> None:
    script = _StaleAfterStream(how)
    extra: dict[str, object] = {"deadline": time.monotonic() + 10} if watched else {}
    with RawServer(script) as server:
        assert _stream(transport, server.url("/v1/chat"), **extra) == [b"data: one", b"data: two"]
        auth = ("Authorization", f"Bearer {SECRET}")
        response = transport.send(
            TransportRequest(
                "POST", server.url("/v1/chat"), headers=(auth,), body=b'{"n":2}', **extra  # type: ignore[arg-type]
            )
        )
        assert (response.status, response.body) == (200, b"fresh")
        # the pooled connection was really reused (the server saw the second request on it),
        # and the resend went out once, on one new connection, with the same request
        assert len(script.second_requests) == 1 and b"POST /v1/chat" in script.second_requests[0]
        assert server.connections == 2
        assert server.requests[1].split(b"\r\n")[0] == b"POST /v1/chat HTTP/1.1"
        assert f"Bearer {SECRET}".encode() in server.requests[1]


def test_a_fresh_connection_closed_before_any_byte_is_not_resent(
    transport: HttpTransport,
) -> None:
    def hang_up(conn: socket.socket, stop: threading.Event) -> None:
        conn.shutdown(socket.SHUT_RDWR)

    with RawServer(hang_up) as server:
        with pytest.raises(TransportConnectionFailed, match="RemoteDisconnected") as caught:
            transport.send(TransportRequest("POST", server.url("/"), body=b"{}"))
        assert server.connections == 1
        assert "StaleConnection" not in str(caught.value)


def test_a_fresh_connection_reset_before_any_byte_is_not_resent(
    transport: HttpTransport,
) -> None:
    with RawServer(lambda conn, stop: _reset(conn)) as server:
        with pytest.raises(TransportConnectionFailed):
            transport.send(TransportRequest("POST", server.url("/"), body=b"{}"))
        assert server.connections == 1


def _second_reply(reply: Callable[[socket.socket], None]) -> Callable[..., None]:
    served = {"n": 0}

    def script(conn: socket.socket, stop: threading.Event) -> None:
        served["n"] += 1
        if served["n"] > 1:
            conn.sendall(_ok(b"fresh"))
            return
        conn.sendall(_ok(b"first"))
        if _read_head(conn):
            reply(conn)

    return script


def test_a_reused_connection_that_sent_part_of_a_status_line_is_not_resent(
    transport: HttpTransport,
) -> None:
    def partial(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 2")
        conn.shutdown(socket.SHUT_RDWR)

    with RawServer(_second_reply(partial)) as server:
        assert transport.send(TransportRequest("GET", server.url("/"))).body == b"first"
        with pytest.raises(TransportDecodeFailed, match="BadStatusLine"):
            transport.send(TransportRequest("GET", server.url("/")))
        assert server.connections == 1


def test_a_reused_connection_that_sent_a_head_then_closed_is_not_resent(
    transport: HttpTransport,
) -> None:
    def head_only(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        conn.shutdown(socket.SHUT_RDWR)

    with RawServer(_second_reply(head_only)) as server:
        assert transport.send(TransportRequest("GET", server.url("/"))).body == b"first"
        with pytest.raises(TransportConnectionFailed):
            transport.send(TransportRequest("GET", server.url("/")))
        assert server.connections == 1


def test_the_resend_happens_once_when_the_new_connection_fails_too(
    transport: HttpTransport,
) -> None:
    served = {"n": 0}

    def script(conn: socket.socket, stop: threading.Event) -> None:
        served["n"] += 1
        if served["n"] == 1:
            conn.sendall(_ok(b"first"))
            if _read_head(conn):
                conn.shutdown(socket.SHUT_RDWR)
            return
        conn.shutdown(socket.SHUT_RDWR)  # every new connection hangs up too

    with RawServer(script) as server:
        assert transport.send(TransportRequest("GET", server.url("/"))).body == b"first"
        with pytest.raises(TransportConnectionFailed, match="RemoteDisconnected"):
            transport.send(TransportRequest("GET", server.url("/")))
        assert server.connections == 2  # the stale one and exactly one resend


@pytest.fixture
def tls_pair(tmp_path: Path) -> tuple[ssl.SSLContext, Path]:
    cert_path, key_path = self_signed(tmp_path, "127.0.0.1", "the TLS case")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    return context, cert_path


@pytest.mark.parametrize("how", ["close", "reset"])
def test_over_tls_a_dropped_keep_alive_connection_is_resent_once_too(
    tls_pair: tuple[ssl.SSLContext, Path], how: str
) -> None:
    context, ca = tls_pair
    script = _StaleAfterStream(how)
    with RawServer(script, tls=context) as server, HttpTransport(
        url_policy=LOCAL, default_timeout_s=5, ca_certs=str(ca)
    ) as http:
        url = server.url("/v1/chat", scheme="https")
        assert _stream(http, url, deadline=time.monotonic() + 10) == [b"data: one", b"data: two"]
        response = http.send(TransportRequest("POST", url, body=b"{}"))
        assert (response.status, response.body) == (200, b"fresh")
        assert len(script.second_requests) == 1 and server.connections == 2


def test_the_resend_skips_other_idle_pooled_connections(transport: HttpTransport) -> None:
    """Two pooled connections, both dropped by the server: the resend opens a new one instead
    of trying the second stale socket."""
    both_streaming = threading.Barrier(2, timeout=5)
    served = {"n": 0}
    lock = threading.Lock()

    def script(conn: socket.socket, stop: threading.Event) -> None:
        with lock:
            served["n"] += 1
            number = served["n"]
        if number > 2:
            conn.sendall(_ok(b"fresh"))
            return
        both_streaming.wait()  # both connections are open at once, so both get pooled
        conn.sendall(_SSE)
        if _read_head(conn):
            conn.shutdown(socket.SHUT_RDWR)

    with RawServer(script) as server:
        url = server.url("/v1/chat")
        results: list[list[bytes]] = []
        threads = [threading.Thread(target=lambda: results.append(_stream(transport, url)))
                   for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert results == [[b"data: one", b"data: two"]] * 2
        assert transport.send(TransportRequest("GET", url)).body == b"fresh"
        assert server.connections == 3  # two streams, one resend; the other idle one unused


def test_over_tls_a_reused_connection_reset_while_the_body_is_written_is_resent(
    tls_pair: tuple[ssl.SSLContext, Path],
) -> None:
    context, ca = tls_pair
    script = _StaleAfterStream("reset")
    body = b"x" * (4 * 1024 * 1024)  # far more than the socket buffers: the write meets the reset
    with RawServer(script, tls=context) as server, HttpTransport(
        url_policy=LOCAL, default_timeout_s=5, ca_certs=str(ca)
    ) as http:
        url = server.url("/v1/chat", scheme="https")
        assert _stream(http, url) == [b"data: one", b"data: two"]
        response = http.send(TransportRequest("POST", url, body=body))
        assert (response.status, response.body) == (200, b"fresh")
        assert server.connections == 2


def test_over_tls_a_fresh_connection_reset_while_the_body_is_written_is_not_resent(
    tls_pair: tuple[ssl.SSLContext, Path],
) -> None:
    context, ca = tls_pair

    def reset_after_head(conn: socket.socket, stop: threading.Event) -> None:
        _reset(conn)

    with RawServer(reset_after_head, tls=context, read_body=False) as server, HttpTransport(
        url_policy=LOCAL, default_timeout_s=5, ca_certs=str(ca)
    ) as http:
        with pytest.raises(TransportConnectionFailed):
            http.send(TransportRequest("POST", server.url("/", scheme="https"),
                                       body=b"x" * (4 * 1024 * 1024)))
        assert server.connections == 1


def test_inside_fresh_connections_an_idle_pooled_socket_is_not_reused(
    transport: HttpTransport,
) -> None:
    from zigai.transport._connect import fresh_connections

    def keep_alive(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(_ok(b"a"))
        while _read_head(conn):  # answer every request on this connection
            conn.sendall(_ok(b"b"))

    with RawServer(keep_alive) as server:
        url = server.url("/")
        assert transport.send(TransportRequest("GET", url)).body == b"a"
        assert transport.send(TransportRequest("GET", url)).body == b"b"  # pooled and reused
        assert server.connections == 1
        with fresh_connections():
            assert transport.send(TransportRequest("GET", url)).body == b"a"
        assert server.connections == 2
