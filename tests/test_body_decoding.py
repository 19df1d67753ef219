"""BodyDecoder on multi-member gzip (RFC 1952 2.2), trailing garbage and decode-loop checkpoints.

The decoder must yield exactly the members' concatenation at any input split and any output
piece size, refuse bytes after the end that do not begin a member, and call its checkpoint
inside the decode loop so a small input that inflates a lot still observes a deadline.
"""

from __future__ import annotations

import gzip
import socket
import threading
import time
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.raw_server import RawServer

from zigai.security import UrlPolicy
from zigai.transport import (
    HttpTransport,
    Limits,
    ResponseTooLarge,
    TransportDecodeFailed,
    TransportRequest,
    TransportTimedOut,
)
from zigai.transport.decoding import BodyDecoder


def _decode(coding: str, body: bytes, split: int, piece: int) -> bytes:
    decoder = BodyDecoder(coding)
    decoder.max_piece = piece
    out = bytearray()
    for start in range(0, len(body), split):
        for chunk in decoder.feed(body[start:start + split]):
            assert 0 < len(chunk) <= piece
            out += chunk
    decoder.finish()
    return bytes(out)


@settings(max_examples=150, deadline=None)
@given(
    members=st.lists(st.binary(max_size=3000), min_size=1, max_size=5),
    split=st.integers(1, 700),
    piece=st.integers(1, 4096),
)
def test_members_decode_to_their_concatenation_at_any_split(
    members: list[bytes], split: int, piece: int
) -> None:
    body = b"".join(gzip.compress(member, compresslevel=1) for member in members)
    assert _decode("gzip", body, split, piece) == b"".join(members)


def test_a_member_that_ends_exactly_when_output_is_capped_is_not_replayed() -> None:
    # the first member's output is exactly one capped piece, so zlib reports the rest of the
    # input both as unused data and as unconsumed tail; it must be fed once
    first, second = b"a" * 64, b"b" * 64
    body = gzip.compress(first) + gzip.compress(second)
    for piece in (1, 63, 64, 65, 128):
        assert _decode("gzip", body, len(body), piece) == first + second


def test_many_empty_members_are_bounded_by_their_input() -> None:
    body = gzip.compress(b"") * 2000 + gzip.compress(b"end")
    assert _decode("gzip", body, 4096, 16) == b"end"


@pytest.mark.parametrize(
    "trailer", [b"\x00", b"garbage", b"\x1f\x8bnot a member"], ids=["nul", "text", "bad member"]
)
def test_bytes_after_the_last_member_that_are_not_a_member_fail(trailer: bytes) -> None:
    with pytest.raises(TransportDecodeFailed):
        _decode("gzip", gzip.compress(b"data") + trailer, 3, 2)


def test_a_truncated_second_member_fails() -> None:
    body = gzip.compress(b"one") + gzip.compress(b"two")[:-4]
    with pytest.raises(TransportDecodeFailed, match="truncated"):
        _decode("gzip", body, 5, 8)


@pytest.mark.parametrize("wbits", [15, -15], ids=["zlib", "raw"])
def test_deflate_has_one_stream_and_refuses_a_second(wbits: int) -> None:
    def deflate(data: bytes) -> bytes:
        packer = zlib.compressobj(wbits=wbits)
        return packer.compress(data) + packer.flush()

    assert _decode("deflate", deflate(b"only"), 1, 3) == b"only"
    with pytest.raises(TransportDecodeFailed, match="after the end"):
        _decode("deflate", deflate(b"one") + deflate(b"two"), 4, 3)


def test_the_checkpoint_runs_inside_the_decode_loop() -> None:
    bomb = gzip.compress(b"\0" * (4 * 1024 * 1024))  # about 4 KB in, 4 MiB out
    calls = {"n": 0}

    def checkpoint() -> None:
        calls["n"] += 1
        if calls["n"] > 10:
            raise TransportTimedOut("stop")

    decoder = BodyDecoder("gzip", checkpoint=checkpoint)
    decoder.max_piece = 1024
    produced = 0
    with pytest.raises(TransportTimedOut):
        for piece in decoder.feed(bomb):  # one feed call: the whole bomb
            produced += len(piece)
    assert produced == 10 * 1024


# ------------------------------------------------------------------- over a real socket


def _serve_gzip(body: bytes, *, chunked_pieces: int = 0):  # type: ignore[no-untyped-def]
    def script(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)
        )
        step = max(1, len(body) // max(1, chunked_pieces)) if chunked_pieces else len(body)
        for start in range(0, len(body), step):
            conn.sendall(body[start:start + step])
            if stop.wait(0.001):
                return
        stop.wait(1.0)

    return RawServer(script)


LOCAL = UrlPolicy.local_development()


def test_a_multi_member_stream_yields_each_line_once() -> None:
    lines = [b"data: %d" % index for index in range(300)]
    body = b"".join(gzip.compress(line + b"\n") for line in lines)  # one member per line
    with _serve_gzip(body, chunked_pieces=37) as server, HttpTransport(url_policy=LOCAL) as http:
        request = TransportRequest("GET", server.url("/s"), deadline=time.monotonic() + 10)
        with http.stream_lines(request) as response:
            assert list(response.lines()) == lines
        assert http.send(request).body == b"".join(line + b"\n" for line in lines)


def test_a_small_multi_member_body_cannot_expand_past_the_limit() -> None:
    member = gzip.compress(b"x" * 100_000)
    body = member * 40  # 4 MB decoded from a few KB
    limits = Limits(max_response_body_bytes=1_000_000)
    with _serve_gzip(body) as server, HttpTransport(url_policy=LOCAL, limits=limits) as http:
        with pytest.raises(ResponseTooLarge):
            http.send(TransportRequest("GET", server.url("/b")))
        # exactly at the limit passes
        exact = gzip.compress(b"x" * 500_000) * 2
    with _serve_gzip(exact) as server, HttpTransport(url_policy=LOCAL, limits=limits) as http:
        assert len(http.send(TransportRequest("GET", server.url("/b"))).body) == 1_000_000
