"""HttpTransport failure classification and guard edge cases over real 127.0.0.1 sockets.

Each case names what a caller relies on: a refused connect is a connection failure, a
per-operation timeout without a deadline is a timeout, a garbled status line is a decode
failure, a peer that hangs up mid-head is a connection failure, and a closed transport
refuses work.  Guard and resolver edges (errors from a lookup thread, a socket attached
after the guard tripped) are checked directly.
"""

from __future__ import annotations

import socket
import threading
import time
import zlib
from collections.abc import Iterator

import pytest
from support.raw_server import RawServer
from support.timing import StallMeter, assert_ended_within

from zigai.control import CancellationToken
from zigai.security import UrlPolicy
from zigai.transport import (
    Headers,
    HttpTransport,
    InvalidTransportRequest,
    Limits,
    MemoryStreamResponse,
    ResponseTooLarge,
    TransportConnectionFailed,
    TransportDecodeFailed,
    TransportRequest,
    TransportTimedOut,
)
from zigai.transport._connect import open_socket
from zigai.transport._guard import _WATCHDOG, IoGuard, _shutdown
from zigai.transport.decoding import BodyDecoder

LOCAL = UrlPolicy.local_development()


@pytest.fixture
def transport() -> Iterator[HttpTransport]:
    with HttpTransport(url_policy=LOCAL, default_timeout_s=0.4) as made:
        yield made
    assert _WATCHDOG.watched() == 0


def _closed_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def test_a_refused_connect_is_a_connection_failure_with_or_without_a_deadline(
    transport: HttpTransport,
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/"
    for deadline in (None, time.monotonic() + 5):
        with pytest.raises(TransportConnectionFailed, match="connection failed"):
            transport.send(TransportRequest("GET", url, deadline=deadline))


def test_a_silent_server_without_a_deadline_hits_the_per_operation_timeout(
    transport: HttpTransport,
) -> None:
    def silent(conn: socket.socket, stop: threading.Event) -> None:
        stop.wait(6)  # longer than the bound below can ever allow

    with RawServer(silent) as server, StallMeter() as meter:
        began = time.monotonic()
        with pytest.raises(TransportTimedOut):
            transport.send(TransportRequest("GET", server.url("/")))
        assert_ended_within(began + 0.4, 0.5, meter)  # the 0.4 s read timeout, not the silence


def test_a_connect_that_never_completes_hits_the_per_operation_timeout(
    transport: HttpTransport,
) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    try:
        for _ in range(4):  # fill the accept queue: further SYNs are dropped
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            fillers.append(filler)
        time.sleep(0.1)
        with pytest.raises(TransportTimedOut):
            transport.send(TransportRequest("GET", f"http://127.0.0.1:{port}/"))
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (b"SPDY/9 200 OK\r\n\r\n", TransportDecodeFailed),  # not an HTTP status line
        (b"", TransportConnectionFailed),  # hangs up before any status line
    ],
    ids=["bad status line", "closed before the status"],
)
def test_a_broken_response_head_is_classified(
    transport: HttpTransport, reply: bytes, error: type[Exception]
) -> None:
    def script(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(reply)

    with RawServer(script) as server:
        with pytest.raises(error):
            transport.send(TransportRequest("GET", server.url("/"), deadline=time.monotonic() + 5))


def test_a_closed_transport_refuses_work_and_errors_hide_the_query() -> None:
    transport = HttpTransport(url_policy=LOCAL)
    with pytest.raises(InvalidTransportRequest, match="expected a TransportRequest"):
        transport.send("GET /")  # type: ignore[arg-type]
    transport.deinit()
    with pytest.raises(InvalidTransportRequest, match="closed"):
        transport.send(TransportRequest("GET", "http://127.0.0.1:9/"))
    with HttpTransport(url_policy=LOCAL) as open_transport:
        url = f"http://127.0.0.1:{_closed_port()}/path?key=sk-secret"
        with pytest.raises(TransportConnectionFailed) as caught:
            open_transport.send(TransportRequest("GET", url, deadline=time.monotonic() + 5))
    message = str(caught.value)
    assert "sk-secret" not in message and "/path" in message  # never the query


def test_a_stream_body_is_read_once_and_bounded() -> None:
    response = MemoryStreamResponse(200, Headers(), b"abcdef", Limits(max_response_body_bytes=6))
    assert response.read_body() == b"abcdef"
    with pytest.raises(ValueError, match="once"):
        response.read_body()
    small = MemoryStreamResponse(200, Headers(), b"abcdefg", Limits(max_response_body_bytes=6))
    with pytest.raises(ResponseTooLarge):
        small.read_body()


def test_deflate_edges_empty_truncated_and_identity_pieces() -> None:
    empty = BodyDecoder("deflate")
    empty.finish()  # an empty deflate body is an empty body
    short = BodyDecoder("deflate")
    assert list(short.feed(b"x")) == []  # one byte: not enough to tell zlib from raw
    with pytest.raises(TransportDecodeFailed, match="truncated deflate"):
        short.finish()
    cut = BodyDecoder("deflate")
    list(cut.feed(zlib.compress(b"hello" * 100)[:-6]))
    with pytest.raises(TransportDecodeFailed, match="truncated"):
        cut.finish()
    identity = BodyDecoder(None)
    identity.max_piece = 4
    assert list(identity.feed(b"0123456789")) == [b"0123", b"4567", b"89"]
    with pytest.raises(TransportDecodeFailed, match="unsupported"):
        BodyDecoder("compress")


# ------------------------------------------------------------------ guard and resolver


def test_a_failing_watched_lookup_raises_in_the_caller() -> None:
    def broken(host: str) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "no such name")

    with HttpTransport(url_policy=LOCAL, resolver=broken) as transport:
        with pytest.raises(TransportConnectionFailed):
            transport.send(TransportRequest("GET", "http://nowhere.test:9/",
                                            deadline=time.monotonic() + 5))


def test_a_socket_attached_after_the_guard_tripped_is_shut_down_at_once() -> None:
    token = CancellationToken()
    guard = IoGuard(None, token, "GET t")
    try:
        assert guard.watched and guard.tripped is None
        guard.trip("cancelled")
        guard.trip("deadline")  # idempotent: the first reason stays
        assert guard.tripped == "cancelled"
        left, right = socket.socketpair()
        with left, right:
            guard.attach(left)
            assert left.recv(1) == b""  # shut down: reads end immediately
    finally:
        assert guard.close() is True
    unwatched = IoGuard(None, None, "GET t")
    left, right = socket.socketpair()
    with left, right:
        unwatched.attach(left)  # nothing can stop it early: nothing is duplicated
        assert unwatched.close() is False
    _shutdown(socket.socket())  # shutting an unconnected socket down is not an error


def test_open_socket_binds_a_source_address() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    with listener:
        guard = IoGuard(time.monotonic() + 5, None, "t")
        try:
            sock = open_socket("127.0.0.1", listener.getsockname()[1], 2.0, guard,
                               source_address=("127.0.0.1", 0))
            with sock:
                assert sock.getsockname()[0] == "127.0.0.1"
        finally:
            guard.close()
