"""HttpTransport against real 127.0.0.1 servers started (and always stopped) by these tests."""

from __future__ import annotations

import gzip
import pickle
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from zigai.errors import TransportError
from zigai.security import UrlPolicy, UrlPolicyViolation, UrlRejection
from zigai.transport import (
    MAX_REQUEST_ID_BYTES,
    Headers,
    HttpTransport,
    InvalidTransportRequest,
    Limits,
    RedirectPolicy,
    RedirectRejected,
    ResponseHeaderView,
    ResponseTooLarge,
    StreamLineTooLarge,
    Transport,
    TransportConnectionFailed,
    TransportDecodeFailed,
    TransportRequest,
    TransportTimedOut,
    parse_retry_after,
)

LOCAL = UrlPolicy.local_development()
LIMIT = 1000
LINE_LIMIT = 100

Route = Callable[[BaseHTTPRequestHandler], None]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def _dispatch(self) -> None:
        self.server.seen.append((self.command, self.path, dict(self.headers.items())))
        length = int(self.headers.get("Content-Length") or 0)
        self.request_body = self.rfile.read(length) if length else b""
        route = self.server.routes.get(self.path.split("?")[0])
        if route is None:
            reply(self, 404, b"no route")
            return
        try:
            route(self)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = do_POST = _dispatch

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.routes: dict[str, Route] = {}
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.stop = threading.Event()
        self.connections = 0

    def get_request(self) -> tuple[socket.socket, object]:
        self.connections += 1
        return super().get_request()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"


def reply(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    headers: tuple[tuple[str, str], ...] = (),
    date: str | None = None,
) -> None:
    handler.send_response_only(status)
    handler.send_header("Date", date or handler.date_time_string())
    for name, value in headers:
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def reply_streaming(
    handler: BaseHTTPRequestHandler, chunks: Iterator[bytes], headers: tuple[tuple[str, str], ...] = ()
) -> None:
    """A body without Content-Length, delimited by closing the connection."""
    handler.send_response_only(200)
    for name, value in headers:
        handler.send_header(name, value)
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True
    for chunk in chunks:
        handler.wfile.write(chunk)
        handler.wfile.flush()


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.stop.set()
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)


@pytest.fixture
def transport() -> Iterator[HttpTransport]:
    with HttpTransport(
        url_policy=LOCAL, limits=Limits(max_response_body_bytes=LIMIT, max_stream_line_bytes=LINE_LIMIT)
    ) as t:
        yield t


def get(url: str, **kwargs: object) -> TransportRequest:
    return TransportRequest("GET", url, **kwargs)  # type: ignore[arg-type]


def serve(server: _Server, path: str, status: int, body: bytes, *headers: tuple[str, str]) -> str:
    server.routes[path] = lambda h: reply(h, status, body, headers)
    return server.url(path)


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


# ------------------------------------------------------------------------------ basics


def test_http_transport_is_a_transport() -> None:
    with HttpTransport() as t:
        assert isinstance(t, Transport)


def test_buffered_send_returns_status_headers_body_and_metadata(
    server: _Server, transport: HttpTransport
) -> None:
    url = serve(server, "/ok", 201, b'{"ok":true}', ("Content-Type", "application/json"), ("x-request-id", "req_42"))
    response = transport.send(
        TransportRequest("POST", url + "?q=1", headers=(("x-trace", "t1"),), body=b"{}")
    )
    assert response.status == 201
    assert response.body == b'{"ok":true}'
    assert response.headers.get("CONTENT-TYPE") == "application/json"
    assert response.request_id == "req_42"
    assert response.retry_after_s is None
    assert response.date is not None
    method, path, sent = server.seen[-1]
    assert (method, path, sent["x-trace"]) == ("POST", "/ok?q=1", "t1")
    assert sent["Accept-Encoding"] == "gzip, deflate"


def test_transport_owns_accept_encoding(server: _Server, transport: HttpTransport) -> None:
    url = serve(server, "/ae", 200, b"x")
    transport.send(get(url, headers=(("Accept-Encoding", "zstd, br"),)))
    assert server.seen[-1][2]["Accept-Encoding"] == "gzip, deflate"


def test_default_policy_refuses_plain_http_to_loopback_before_connecting(server: _Server) -> None:
    url = serve(server, "/never", 200, b"x")
    with HttpTransport() as strict:
        with pytest.raises(UrlPolicyViolation) as caught:
            strict.send(get(url))
    assert caught.value.reason is UrlRejection.scheme_not_allowed
    with HttpTransport(url_policy=UrlPolicy(allow_http=True)) as http_only:
        with pytest.raises(UrlPolicyViolation) as caught:
            http_only.send(get(url))
    assert caught.value.reason is UrlRejection.non_public_address
    assert server.seen == []


# ------------------------------------------------------------------------------ limits


def test_plain_body_exactly_at_limit_passes_and_one_more_byte_fails(
    server: _Server, transport: HttpTransport
) -> None:
    exact = serve(server, "/exact", 200, b"a" * LIMIT)
    over = serve(server, "/over", 200, b"a" * (LIMIT + 1))
    assert transport.send(get(exact)).body == b"a" * LIMIT
    with pytest.raises(ResponseTooLarge) as caught:
        transport.send(get(over))
    assert caught.value.limit == LIMIT


def test_gzip_limit_counts_decompressed_bytes(server: _Server, transport: HttpTransport) -> None:
    enc = ("Content-Encoding", "gzip")
    exact = serve(server, "/gz-exact", 200, gzip.compress(b"z" * LIMIT), enc)
    over = serve(server, "/gz-over", 200, gzip.compress(b"z" * (LIMIT + 1)), enc)
    assert transport.send(get(exact)).body == b"z" * LIMIT
    with pytest.raises(ResponseTooLarge):
        transport.send(get(over))


def test_deflate_zlib_and_raw_forms_are_decoded_and_bounded(
    server: _Server, transport: HttpTransport
) -> None:
    enc = ("Content-Encoding", "deflate")
    wrapped = serve(server, "/zlib", 200, zlib.compress(b"d" * LIMIT), enc)
    raw = serve(server, "/raw", 200, raw_deflate(b"r" * LIMIT), enc)
    over = serve(server, "/raw-over", 200, raw_deflate(b"r" * (LIMIT + 1)), enc)
    assert transport.send(get(wrapped)).body == b"d" * LIMIT
    assert transport.send(get(raw)).body == b"r" * LIMIT
    with pytest.raises(ResponseTooLarge):
        transport.send(get(over))


def _gzip_bomb(total_zero_bytes: int, stop: threading.Event) -> Iterator[bytes]:
    """A gzip stream of ``total_zero_bytes`` zeros, generated block by block (never in memory).

    With a full flush every MiB, each compressed block of zeros is byte-identical, so one block
    is computed and repeated.  The CRC is only computed if a client ever reads that far.
    """
    mib = bytes(1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    compressor.compress(mib)
    block = compressor.flush(zlib.Z_FULL_FLUSH)
    yield b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    for _ in range(total_zero_bytes >> 20):
        if stop.is_set():
            return
        yield block
    yield compressor.flush()
    crc = 0
    for _ in range(total_zero_bytes >> 20):
        crc = zlib.crc32(mib, crc)
    yield crc.to_bytes(4, "little") + (total_zero_bytes & 0xFFFFFFFF).to_bytes(4, "little")


def test_gzip_bomb_stops_at_the_limit(server: _Server) -> None:
    one_gib = 1 << 30
    server.routes["/bomb"] = lambda h: reply_streaming(
        h, _gzip_bomb(one_gib, server.stop), (("Content-Encoding", "gzip"),)
    )
    limit = 4 * 1024 * 1024
    with HttpTransport(url_policy=LOCAL, limits=Limits(max_response_body_bytes=limit)) as t:
        with pytest.raises(ResponseTooLarge) as caught:
            t.send(get(server.url("/bomb")))
        assert caught.value.limit == limit
        # the same bomb through the line reader: one endless line of zeros
        with pytest.raises(StreamLineTooLarge):
            with t.stream_lines(get(server.url("/bomb"))) as stream:
                for _ in stream.lines():
                    pass


def test_gzip_bomb_decoder_inflates_at_most_limit_plus_one() -> None:
    from zigai.transport.decoding import BodyDecoder, read_bounded

    produced: list[int] = []
    decoder = BodyDecoder("gzip")
    original_feed = decoder.feed

    def counting_feed(data: bytes) -> Iterator[bytes]:
        for piece in original_feed(data):
            produced.append(len(piece))
            yield piece

    decoder.feed = counting_feed  # type: ignore[method-assign]
    with pytest.raises(ResponseTooLarge):
        read_bounded(_gzip_bomb(1 << 30, threading.Event()), decoder, 5000)
    assert sum(produced) == 5001


def test_corrupt_and_truncated_gzip_are_decode_failures(server: _Server, transport: HttpTransport) -> None:
    enc = ("Content-Encoding", "gzip")
    corrupt = serve(server, "/corrupt", 200, b"\x1f\x8b\x08\x00garbage-garbage", enc)
    truncated = serve(server, "/trunc", 200, gzip.compress(b"hello" * 50)[:-12], enc)
    with pytest.raises(TransportDecodeFailed):
        transport.send(get(corrupt))
    with pytest.raises(TransportDecodeFailed):
        transport.send(get(truncated))


def test_unadvertised_encoding_is_a_decode_failure(server: _Server, transport: HttpTransport) -> None:
    url = serve(server, "/zstd", 200, b"\x28\xb5\x2f\xfd", ("Content-Encoding", "zstd"))
    with pytest.raises(TransportDecodeFailed):
        transport.send(get(url))


def test_concatenated_gzip_members_are_one_body(server: _Server, transport: HttpTransport) -> None:
    body = gzip.compress(b"first,") + gzip.compress(b"second")
    url = serve(server, "/members", 200, body, ("Content-Encoding", "gzip"))
    assert transport.send(get(url)).body == b"first,second"


# ------------------------------------------------------------------------------ streaming


def test_stream_lines_exact_line_limit_passes_and_one_more_byte_fails(
    server: _Server, transport: HttpTransport
) -> None:
    exact = b"e" * LINE_LIMIT
    ok = serve(server, "/lines", 200, b"data: 1\n" + exact + b"\r\n" + exact + b"\n\nlast")
    with transport.stream_lines(get(ok)) as stream:
        assert stream.status == 200
        assert list(stream.lines()) == [b"data: 1", exact, exact, b"", b"last"]
    over = serve(server, "/long", 200, b"ok\n" + b"e" * (LINE_LIMIT + 1) + b"\n")
    seen = []
    with pytest.raises(StreamLineTooLarge) as caught:
        with transport.stream_lines(get(over)) as stream:
            for line in stream.lines():
                seen.append(line)
    assert seen == [b"ok"]
    assert caught.value.limit == LINE_LIMIT


def test_stream_chunks_exact_line_limit_passes_and_one_more_byte_fails(
    server: _Server, transport: HttpTransport
) -> None:
    exact = b"e" * LINE_LIMIT
    body = b"data: 1\n" + exact + b"\r\n" + exact + b"\n\nlast"
    ok = serve(server, "/chunks", 200, body)
    with transport.stream_lines(get(ok)) as stream:
        assert b"".join(stream.chunks()) == body
    over = serve(server, "/chunks-long", 200, b"ok\n" + b"e" * (LINE_LIMIT + 1) + b"\n")
    delivered = bytearray()
    with pytest.raises(StreamLineTooLarge) as caught:
        with transport.stream_lines(get(over)) as stream:
            for piece in stream.chunks():
                delivered += piece
    assert bytes(delivered) == b"ok\n"
    assert caught.value.limit == LINE_LIMIT


def test_stream_chunks_deliver_an_event_before_the_server_sends_the_next(
    server: _Server, transport: HttpTransport
) -> None:
    first_seen = threading.Event()
    waited: list[bool] = []

    def body() -> Iterator[bytes]:
        yield b"data: 1\n\n"
        waited.append(first_seen.wait(timeout=5.0))  # bounded: never hangs the suite
        yield b"data: 2\n\n"

    server.routes["/trickle"] = lambda h: reply_streaming(h, body())
    received = bytearray()
    with transport.stream_lines(get(server.url("/trickle"))) as stream:
        for piece in stream.chunks():
            received += piece
            if b"data: 1\n\n" in received:
                first_seen.set()
    assert bytes(received) == b"data: 1\n\ndata: 2\n\n"
    assert waited == [True]  # the first event reached us while the server was still waiting


def test_gzip_bomb_through_stream_chunks_stops_at_the_line_limit(server: _Server) -> None:
    server.routes["/bomb-chunks"] = lambda h: reply_streaming(
        h, _gzip_bomb(1 << 30, server.stop), (("Content-Encoding", "gzip"),)
    )
    line_limit = 1 << 20
    delivered = 0
    with HttpTransport(url_policy=LOCAL, limits=Limits(max_stream_line_bytes=line_limit)) as t:
        with pytest.raises(StreamLineTooLarge):
            with t.stream_lines(get(server.url("/bomb-chunks"))) as stream:
                for piece in stream.chunks():
                    delivered += len(piece)
    assert delivered <= line_limit + 1


def test_gzip_stream_line_limit_counts_decompressed_bytes(
    server: _Server, transport: HttpTransport
) -> None:
    enc = ("Content-Encoding", "gzip")
    exact = b"g" * LINE_LIMIT
    ok = serve(server, "/gz-lines", 200, gzip.compress(exact + b"\n" + exact), enc)
    over = serve(server, "/gz-long", 200, gzip.compress(b"g" * (LINE_LIMIT + 1) + b"\n"), enc)
    with transport.stream_lines(get(ok)) as stream:
        assert list(stream.lines()) == [exact, exact]
    with pytest.raises(StreamLineTooLarge):
        with transport.stream_lines(get(over)) as stream:
            list(stream.lines())


def test_stopping_a_stream_early_releases_the_connection(server: _Server) -> None:
    body = b"".join(b"line %d\n" % i for i in range(30_000))  # several read pieces
    url = serve(server, "/many", 200, body)
    big = Limits(max_response_body_bytes=len(body), max_stream_line_bytes=LINE_LIMIT)
    with HttpTransport(url_policy=LOCAL, limits=big) as transport:
        assert transport.send(get(url)).body == body
        assert transport.send(get(url)).body == body
        assert server.connections == 1  # fully read responses keep the connection pooled
        with transport.stream_lines(get(url)) as stream:
            first = next(iter(stream.lines()))
        assert first == b"line 0"
        # the abandoned connection is closed, not pooled with unread bytes: the next call is clean
        assert transport.send(get(url)).body == body
        assert server.connections == 2
        with transport.stream_lines(get(url)) as stream:
            assert len(list(stream.lines())) == 30_000
        assert transport.send(get(url)).body == body


def test_non_2xx_stream_is_readable_as_a_bounded_body(
    server: _Server, transport: HttpTransport
) -> None:
    error = serve(server, "/err", 429, b'{"error":"slow down"}', ("Retry-After", "7"))
    with transport.stream_lines(get(error)) as stream:
        assert (stream.status, stream.retry_after_s) == (429, 7.0)
        assert stream.read_body() == b'{"error":"slow down"}'
    huge = serve(server, "/huge-err", 500, b"x" * (LIMIT + 1))
    with pytest.raises(ResponseTooLarge):
        with transport.stream_lines(get(huge)) as stream:
            stream.read_body()


def test_slow_drip_stream_is_bounded_by_the_deadline(server: _Server, transport: HttpTransport) -> None:
    def drip(h: BaseHTTPRequestHandler) -> None:
        def chunks() -> Iterator[bytes]:
            for i in range(400):  # bounded: at most ~20 s even if nobody stops it
                if server.stop.wait(0.05):
                    return
                yield b"data: %d\n" % i

        reply_streaming(h, chunks())

    server.routes["/drip"] = drip
    budget = 0.6
    started = time.monotonic()
    received = []
    with pytest.raises(TransportTimedOut):
        with transport.stream_lines(get(server.url("/drip"), deadline=started + budget)) as stream:
            for line in stream.lines():
                received.append(line)
    assert time.monotonic() - started < budget + 1.0
    assert received[:2] == [b"data: 0", b"data: 1"]


# ------------------------------------------------------------------------------ time


def test_timeout_fires_within_the_budget(server: _Server, transport: HttpTransport) -> None:
    def sleepy(h: BaseHTTPRequestHandler) -> None:
        server.stop.wait(10)
        reply(h, 200, b"late")

    server.routes["/sleep"] = sleepy
    budget = 0.5
    started = time.monotonic()
    with pytest.raises(TransportTimedOut):
        transport.send(get(server.url("/sleep"), deadline=started + budget))
    assert time.monotonic() - started < budget + 1.0


def test_expired_deadline_fails_before_connecting(server: _Server, transport: HttpTransport) -> None:
    url = serve(server, "/x", 200, b"x")
    with pytest.raises(TransportTimedOut):
        transport.send(get(url, deadline=time.monotonic() - 1))
    assert server.seen == []


def test_retry_after_seconds_and_http_date_relative_to_the_date_header(
    server: _Server, transport: HttpTransport
) -> None:
    serve(server, "/ra-seconds", 429, b"", ("Retry-After", "12"))
    # The server clock is deliberately one day off: only the difference to its Date counts.
    server_now = datetime(2001, 2, 3, 4, 5, 6, tzinfo=UTC)
    retry_at = format_datetime(server_now + timedelta(seconds=30), usegmt=True)
    server.routes["/ra-date"] = lambda h: reply(
        h, 503, b"", (("Retry-After", retry_at),), date=format_datetime(server_now, usegmt=True)
    )
    assert transport.send(get(server.url("/ra-seconds"))).retry_after_s == 12.0
    dated = transport.send(get(server.url("/ra-date")))
    assert dated.retry_after_s == 30.0
    assert dated.date == server_now


def test_retry_after_parsing_rules() -> None:
    date = "Sun, 06 Nov 1994 08:49:37 GMT"
    assert parse_retry_after("0") == 0.0
    assert parse_retry_after(" 120 ") == 120.0
    assert parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", date) == 10.0
    assert parse_retry_after("Sun, 06 Nov 1994 08:49:27 GMT", date) == 0.0
    for bad in ("-1", "1.5", "soon", "Sunday, 06-Nov-94 08:49:37 GMT", "", None):
        assert parse_retry_after(bad, date) is None


# ------------------------------------------------------------------------------ redirects


def test_redirect_is_rejected_by_default_and_never_followed(
    server: _Server, transport: HttpTransport
) -> None:
    target = serve(server, "/target", 200, b"followed")
    url = serve(server, "/moved", 302, b"", ("Location", target + "?token=secret"))
    with pytest.raises(RedirectRejected) as caught:
        transport.send(get(url))
    assert caught.value.status == 302
    assert caught.value.location == target
    assert "secret" not in str(caught.value)
    assert [path for _, path, _ in server.seen] == ["/moved"]


def test_redirect_can_be_returned_instead(server: _Server) -> None:
    url = serve(server, "/perm", 308, b"moved", ("Location", "https://example.com/new"))
    with HttpTransport(url_policy=LOCAL, redirect_policy=RedirectPolicy.return_response) as t:
        response = t.send(get(url))
        with t.stream_lines(get(url)) as stream:
            assert stream.status == 308
    assert (response.status, response.body) == (308, b"moved")
    assert response.headers.get("location") == "https://example.com/new"
    assert len(server.seen) == 2


# ------------------------------------------------------------------------------ errors


def test_connection_refused_maps_to_connection_failed(transport: HttpTransport) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(TransportConnectionFailed) as caught:
        transport.send(get(f"http://127.0.0.1:{port}/v1?key=sk-secret", deadline=time.monotonic() + 5))
    assert "sk-secret" not in str(caught.value)
    assert f"127.0.0.1:{port}/v1" in str(caught.value)


def test_server_closing_mid_body_is_a_connection_failure(server: _Server, transport: HttpTransport) -> None:
    def short(h: BaseHTTPRequestHandler) -> None:
        h.send_response_only(200)
        h.send_header("Content-Length", "100")
        h.end_headers()
        h.wfile.write(b"only ten!!")
        h.close_connection = True

    server.routes["/short"] = short
    with pytest.raises(TransportConnectionFailed):
        transport.send(get(server.url("/short")))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"method": "GE T"},
        {"url": ""},
        {"headers": (("x-bad", "a\r\nInjected: 1"),)},
        {"headers": (("bad name", "v"),)},
        {"headers": [("x", "y")]},
        {"body": "text"},
        {"deadline": float("inf")},
        {"response_header_sink": 5},
    ],
)
def test_invalid_requests_are_refused_on_construction(kwargs: dict[str, object]) -> None:
    values: dict[str, object] = {"method": "GET", "url": "https://example.com/"}
    values.update(kwargs)
    with pytest.raises(InvalidTransportRequest) as caught:
        TransportRequest(**values)  # type: ignore[arg-type]
    assert "Injected" not in str(caught.value)


def test_transport_errors_pickle_with_their_attributes() -> None:
    errors: list[TransportError] = [
        ResponseTooLarge("big", limit=5),
        StreamLineTooLarge("long", limit=6),
        RedirectRejected("moved", status=301, location="https://a.example/"),
        TransportTimedOut("slow"),
        TransportConnectionFailed("down"),
        TransportDecodeFailed("bad"),
        InvalidTransportRequest("nope"),
    ]
    for error in errors:
        clone = pickle.loads(pickle.dumps(error))
        assert type(clone) is type(error)
        assert clone.__dict__ == error.__dict__
        assert str(clone) == str(error)


# ------------------------------------------------------------------------------ metadata


def test_request_id_is_bounded_to_256_bytes(server: _Server, transport: HttpTransport) -> None:
    exact = "r" * MAX_REQUEST_ID_BYTES
    serve(server, "/id-exact", 200, b"", ("x-request-id", exact))
    serve(server, "/id-long", 200, b"", ("request-id", "q" * (MAX_REQUEST_ID_BYTES + 44)))
    assert transport.send(get(server.url("/id-exact"))).request_id == exact
    assert transport.send(get(server.url("/id-long"))).request_id == "q" * MAX_REQUEST_ID_BYTES
    assert transport.send(get(serve(server, "/no-id", 200, b""))).request_id is None


def test_header_sink_sees_headers_only_while_the_response_is_open(
    server: _Server, transport: HttpTransport
) -> None:
    url = serve(server, "/sink", 200, b"a\nb\n", ("x-ratelimit-remaining-requests", "41"))
    captured: list[ResponseHeaderView] = []
    during: list[tuple[int, str | None]] = []

    def sink(view: ResponseHeaderView) -> None:
        captured.append(view)
        during.append((view.status, view.get("X-RateLimit-Remaining-Requests")))

    transport.send(get(url, response_header_sink=sink))
    assert during == [(200, "41")]
    with pytest.raises(ValueError):
        captured[0].get("x-ratelimit-remaining-requests")
    with transport.stream_lines(get(url, response_header_sink=sink)) as stream:
        assert captured[1].is_open and captured[1].items()
        assert list(stream.lines()) == [b"a", b"b"]
    assert not captured[1].is_open
    with pytest.raises(ValueError):
        _ = captured[1].status


def test_header_sink_errors_propagate_and_release_the_response(
    server: _Server, transport: HttpTransport
) -> None:
    url = serve(server, "/sink-err", 200, b"body")

    def sink(view: ResponseHeaderView) -> None:
        raise KeyError("application bug")

    with pytest.raises(KeyError):
        transport.send(get(url, response_header_sink=sink))
    assert transport.send(get(url)).body == b"body"


def test_headers_lookup_is_case_insensitive_and_keeps_duplicates() -> None:
    headers = Headers.of([("Set-Thing", "a"), ("set-thing", "b"), ("X", "1")])
    assert headers.get("SET-THING") == "a"
    assert headers.get_all("set-thing") == ("a", "b")
    assert "x" in headers and "y" not in headers
    assert len(headers) == 3 and list(headers)[2] == ("X", "1")


def test_limits_reject_negative_values() -> None:
    with pytest.raises(ValueError):
        Limits(max_response_body_bytes=-1)
    assert Limits() == Limits(16 * 1024 * 1024, 1024 * 1024)


def test_importing_the_transport_package_does_not_import_urllib3() -> None:
    import subprocess
    import sys

    probe = "import sys, zigai.transport, zigai.security; print('urllib3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
