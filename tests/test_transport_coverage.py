"""HttpTransport edges the phase tests do not reach: error mapping, redirect locations, URL
checks, metadata parsing and the optional brotli binding.

Real 127.0.0.1 sockets where a peer is involved; the urllib3 error mapping is checked on the
error values themselves, since provoking each from a socket would need a broken urllib3.
"""

from __future__ import annotations

import socket
import sys
import threading
import types
from collections.abc import Iterator

import pytest
from support.raw_server import RawServer

from zigai.control import CancellationToken, Cancelled
from zigai.security import UrlPolicy
from zigai.transport import (
    HttpTransport,
    InvalidTransportRequest,
    RedirectRejected,
    TransportConnectionFailed,
    TransportDecodeFailed,
    TransportRequest,
    TransportTimedOut,
    extract_request_id,
    parse_http_date,
)
from zigai.transport import decoding as decoding_module
from zigai.transport._connect import _MAX_PARALLEL_LOOKUPS, resolve
from zigai.transport._guard import _WATCHDOG, IoGuard
from zigai.transport.http import _map_error

LOCAL = UrlPolicy.local_development()


@pytest.fixture
def transport() -> Iterator[HttpTransport]:
    with HttpTransport(url_policy=LOCAL, default_timeout_s=5) as made:
        yield made


def test_a_rejected_redirect_reports_its_location_without_userinfo_or_query(
    transport: HttpTransport,
) -> None:
    def redirect(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(
            b"HTTP/1.1 302 Found\r\n"
            b"Location: https://user:hunter2@evil.example/next?token=sk-123#frag\r\n"
            b"Content-Length: 0\r\n\r\n"
        )

    with RawServer(redirect) as server:
        with pytest.raises(RedirectRejected) as caught:
            transport.send(TransportRequest("GET", server.url("/start")))
    assert caught.value.status == 302
    assert caught.value.location == "https://evil.example/next"
    assert "hunter2" not in str(caught.value) and "sk-123" not in str(caught.value)


def test_a_streamed_response_can_be_consumed_only_once(transport: HttpTransport) -> None:
    def lines(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\na\nb\n")

    with RawServer(lines) as server:
        with transport.stream_lines(TransportRequest("GET", server.url("/"))) as response:
            assert list(response.lines()) == [b"a", b"b"]
            with pytest.raises(ValueError, match="only once"):
                list(response.chunks())


def test_urllib3_failures_map_to_the_stable_transport_errors() -> None:
    from urllib3 import exceptions as u3

    target = "GET http://127.0.0.1:1/x"
    assert isinstance(_map_error(u3.DecodeError("bad gzip"), target), TransportDecodeFailed)
    assert isinstance(_map_error(u3.LocationParseError("::"), target), InvalidTransportRequest)
    timed_out = _map_error(u3.ProtocolError("aborted", TimeoutError("read")), target)
    assert isinstance(timed_out, TransportTimedOut) and "TimeoutError" in str(timed_out)
    bad_status = _map_error(u3.ProtocolError("aborted", OSError("x")), target)
    assert isinstance(bad_status, TransportConnectionFailed)
    # MaxRetryError is unwrapped to its reason; anything else is a connection failure
    wrapped = u3.MaxRetryError(None, "/x", reason=u3.ReadTimeoutError(None, "/x", "slow"))  # type: ignore[arg-type]
    assert isinstance(_map_error(wrapped, target), TransportTimedOut)
    other = _map_error(u3.HTTPError("strange"), target)
    assert isinstance(other, TransportConnectionFailed) and str(other).startswith(target)


def test_an_ipv6_literal_url_reaches_a_loopback_server(transport: HttpTransport) -> None:
    if not socket.has_ipv6:
        pytest.skip("this machine has no IPv6 stack: the [::1] case needs one")
    listener = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    try:
        listener.bind(("::1", 0))
    except OSError:
        listener.close()
        pytest.skip("::1 is not configured on this machine: the [::1] case needs it")
    listener.listen(1)
    listener.settimeout(5)
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(5)
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nv6")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        # the long spelling is normalised before it is compared with the policy's host
        url = f"http://[0:0:0:0:0:0:0:1]:{port}/"
        assert transport.send(TransportRequest("GET", url)).body == b"v6"
    finally:
        thread.join(5)
        listener.close()


def test_http_dates_that_do_not_exist_are_ignored() -> None:
    assert parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT") is not None
    assert parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT") is None  # no such month
    assert parse_http_date("Sun, 31 Feb 1994 08:49:37 GMT") is None  # no such day
    assert parse_http_date("Sun, 06 Nov 1994 25:49:37 GMT") is None  # no such hour


def test_a_request_id_with_spaces_or_controls_is_skipped_for_the_next_header() -> None:
    headers = (("x-request-id", "has space"), ("request-id", "req_ok"))
    from zigai.transport import Headers

    assert extract_request_id(Headers.of(headers)) == "req_ok"
    assert extract_request_id(Headers.of((("x-request-id", "bell\x07"),))) is None


def test_request_headers_must_be_pairs() -> None:
    with pytest.raises(InvalidTransportRequest, match="pairs"):
        TransportRequest("GET", "https://api.example.com/", headers=(("a", "b", "c"),))  # type: ignore[arg-type]


def test_brotli_is_advertised_only_with_an_output_bounded_binding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = types.ModuleType("brotli")
    old.Decompressor = type("Decompressor", (), {})  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "brotli", old)
    assert decoding_module._bounded_brotli() is None
    assert "br" not in decoding_module.accept_encoding()
    with pytest.raises(TransportDecodeFailed, match="unsupported content-encoding 'br'"):
        decoding_module.BodyDecoder("br")
    bare = types.ModuleType("brotli")
    monkeypatch.setitem(sys.modules, "brotli", bare)
    assert decoding_module._bounded_brotli() is None


def test_a_watched_lookup_waits_for_a_free_resolver_slot_and_honours_a_cancel() -> None:
    release = threading.Event()
    started = threading.Semaphore(0)

    def stuck(host: str) -> list[str]:
        started.release()
        release.wait(10)
        return ["127.0.0.1"]

    token = CancellationToken()
    # every guard is closed again: a guard left registered would stay watched forever
    guards = [IoGuard(None, CancellationToken(), "t") for _ in range(_MAX_PARALLEL_LOOKUPS)]
    queued = IoGuard(None, token, "t")
    busy = [
        threading.Thread(target=resolve, args=("busy.test", 80, guard, stuck), daemon=True)
        for guard in guards
    ]
    try:
        for thread in busy:
            thread.start()
        for _ in busy:
            assert started.acquire(timeout=5)  # every lookup slot is now taken
        token.cancel("stop waiting")
        with pytest.raises(Cancelled, match="stop waiting"):
            resolve("queued.test", 80, queued, stuck)
    finally:
        release.set()
        for thread in busy:
            thread.join(5)
        for guard in [*guards, queued]:
            guard.close()
    assert _WATCHDOG.watched() == 0
