"""Bounded content decoding and line splitting shared by every transport.

Job
    Incrementally undo ``Content-Encoding`` (identity, gzip, deflate, and br when a bounded
    brotli decoder is importable), accumulate bounded bodies, and split a byte stream into
    bounded lines.  An in-memory :class:`MemoryStreamResponse` lets test doubles and custom
    transports serve the exact same line semantics as :class:`~zigai.transport.HttpTransport`.

Invariants
    * A decoder never produces more than ``max_piece`` bytes per step, and the caller lowers
      ``max_piece`` to ``remaining + 1`` while buffering, so a compression bomb inflates at most
      limit + 1 bytes before :class:`ResponseTooLarge` is raised.
    * A line is released as soon as its terminator is seen; the buffer never holds more than
      ``max_stream_line_bytes`` + one input piece.  ``\\r\\n`` and ``\\n`` both end a line; the
      terminator is not counted or returned.  A bare ``\\r`` is not a terminator.
    * gzip bodies may hold several members back to back (RFC 1952 2.2); they decode to the
      members' concatenation.  Bytes after the last member that do not start another member
      are corrupt data, as is anything after the end of a deflate stream.
    * A decoder given a ``checkpoint`` calls it before every output piece, so one small
      compressed input that inflates to a lot of output still observes the request's
      deadline and cancellation inside the decode loop.
    * Truncated or corrupt compressed data raises :class:`TransportDecodeFailed`.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any

from zigai.transport.base import (
    Headers,
    Limits,
    ResponseTooLarge,
    StreamLineTooLarge,
    TransportDecodeFailed,
)
from zigai.transport.retry_after import response_metadata

__all__ = [
    "BodyDecoder",
    "LineSplitter",
    "MemoryStreamResponse",
    "StreamLineGuard",
    "accept_encoding",
    "guarded_pieces",
    "read_bounded",
]

PIECE_BYTES = 64 * 1024


def _bounded_brotli() -> Any | None:
    """The ``brotli`` module if it offers the output-bounded decompressor API, else None."""
    try:
        module = importlib.import_module("brotli")
    except ImportError:
        return None
    decompressor = getattr(module, "Decompressor", None)
    if decompressor is None or not hasattr(decompressor, "can_accept_more_data"):
        return None  # an old binding cannot cap output per call: never advertise br
    return module


def accept_encoding() -> str:
    """The Accept-Encoding value: only encodings this module can decode within a bound."""
    return "gzip, deflate, br" if _bounded_brotli() is not None else "gzip, deflate"


class BodyDecoder:
    """Incremental, output-bounded decoder for one response's Content-Encoding."""

    def __init__(
        self, content_encoding: str | None, *, checkpoint: Callable[[], None] | None = None
    ) -> None:
        coding = (content_encoding or "identity").strip().lower()
        self.max_piece = PIECE_BYTES
        self._checkpoint = checkpoint
        self._coding = coding
        self._zlib: Any = None
        self._brotli: Any = None
        self._head = b""  # deflate: bytes held until the zlib-vs-raw sniff is possible
        self._finished = False
        if coding in ("identity", ""):
            self._coding = "identity"
        elif coding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(wbits=31)
        elif coding == "deflate":
            pass  # created after sniffing the first two bytes
        elif coding == "br" and (brotli := _bounded_brotli()) is not None:
            self._brotli = brotli.Decompressor()
        else:
            raise TransportDecodeFailed(f"unsupported content-encoding {coding!r}")

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decode ``data``; yields pieces of at most ``self.max_piece`` bytes (read per step)."""
        if self._coding == "identity":
            for start in range(0, len(data), max(1, self.max_piece)):
                yield data[start:start + max(1, self.max_piece)]
            return
        if self._brotli is not None:
            yield from self._feed_brotli(data)
            return
        if self._coding == "deflate" and self._zlib is None:
            self._head += data
            if len(self._head) < 2:
                return
            data, self._head = self._head, b""
            first, second = data[0], data[1]
            is_zlib = first & 0x0F == 8 and (first << 8 | second) % 31 == 0
            self._zlib = zlib.decompressobj(wbits=15 if is_zlib else -15)
        yield from self._feed_zlib(data)

    def _feed_zlib(self, data: bytes) -> Iterator[bytes]:
        pending = data
        checkpoint = self._checkpoint
        while True:
            if self._zlib.eof:
                # unused_data is everything after this member's end that the finished
                # decompressor was given; pending is input it never saw
                pending = self._zlib.unused_data + pending
                if not pending:
                    return
                if self._coding == "deflate" or not pending.startswith(b"\x1f\x8b"[: len(pending)]):
                    raise TransportDecodeFailed("unexpected data after the end of the compressed body")
                self._zlib = zlib.decompressobj(wbits=31)  # next gzip member
            if checkpoint is not None:
                checkpoint()
            limit = max(1, self.max_piece)
            try:
                out = self._zlib.decompress(pending, limit)
            except zlib.error as exc:
                raise TransportDecodeFailed(f"corrupt {self._coding} body: {exc}") from None
            # at the end of a member zlib reports the rest in unused_data *and* (when output
            # was capped) in unconsumed_tail: take it from one place only
            pending = b"" if self._zlib.eof else self._zlib.unconsumed_tail
            if out:
                yield out
            if self._zlib.eof:
                continue
            if not pending and len(out) < limit:
                return

    def _feed_brotli(self, data: bytes) -> Iterator[bytes]:  # pragma: no cover - optional dep
        pending = data
        while True:
            if self._checkpoint is not None:
                self._checkpoint()
            limit = max(1, self.max_piece)
            try:
                out = self._brotli.process(pending, output_buffer_limit=limit)
            except Exception as exc:  # the binding raises its own error type
                raise TransportDecodeFailed(f"corrupt br body: {exc}") from None
            pending = b""
            if out:
                yield out
            if self._brotli.can_accept_more_data():
                return

    def finish(self) -> None:
        """Check the compressed stream ended cleanly (call once the input is exhausted)."""
        if self._coding == "identity":
            return
        if self._brotli is not None:  # pragma: no cover - optional dep
            if not self._brotli.is_finished():
                raise TransportDecodeFailed("truncated br body")
            return
        if self._zlib is None:
            if self._head:
                raise TransportDecodeFailed("truncated deflate body")
            return  # empty body
        if not self._zlib.eof:
            raise TransportDecodeFailed(f"truncated {self._coding} body")


def read_bounded(raw_chunks: Iterable[bytes], decoder: BodyDecoder, limit: int) -> bytes:
    """Decode and buffer a whole body; the first decoded byte past ``limit`` raises."""
    body = bytearray()
    for chunk in raw_chunks:
        decoder.max_piece = min(PIECE_BYTES, limit - len(body) + 1)
        for piece in decoder.feed(chunk):
            body += piece
            if len(body) > limit:
                raise ResponseTooLarge(
                    f"response body exceeds the {limit}-byte limit", limit=limit
                )
            decoder.max_piece = min(PIECE_BYTES, limit - len(body) + 1)
    decoder.finish()
    return bytes(body)


class StreamLineGuard:
    """Enforce the stream line limit over decoded pieces without splitting them into lines.

    It only remembers how long the line currently being received is (and whether its last
    byte was ``\\r``), so checking a piece costs a ``find`` and an ``rfind`` unless the piece
    itself is longer than the limit.  Lines are counted exactly as :class:`LineSplitter`
    returns them: without the ``\\n`` or ``\\r\\n`` terminator.
    """

    __slots__ = ("_limit", "_run", "_cr", "failed")

    def __init__(self, max_line_bytes: int) -> None:
        self._limit = max_line_bytes
        self._run = 0  # bytes of the unterminated line received so far
        self._cr = False  # that line's last byte is "\r" (maybe half of a CRLF)
        self.failed = False

    def error(self) -> StreamLineTooLarge:
        return StreamLineTooLarge(
            f"stream line exceeds the {self._limit}-byte limit", limit=self._limit
        )

    def check(self, piece: bytes) -> bytes:
        """The part of ``piece`` that precedes any line over the limit (all of it if none).

        After a violation :attr:`failed` is set and the returned prefix ends at the start of
        the offending line (or is empty when that line began in an earlier piece), so a
        consumer sees exactly the complete lines before it and then raises :meth:`error`.
        """
        if self.failed:
            return b""
        limit = self._limit
        first = piece.find(b"\n")
        if first < 0:
            if piece:
                self._run += len(piece)
                self._cr = piece[-1] == 13
            if self._run > limit + self._cr:
                self.failed = True
                return b""
            return piece
        ends_cr = piece[first - 1] == 13 if first else self._cr
        if self._run + first - ends_cr > limit:
            self.failed = True
            return b""
        last = piece.rfind(b"\n")
        if last - first - 1 > limit:  # a whole line between them could be too long
            start = first + 1
            for line in piece[start:last].split(b"\n"):
                if len(line) - line.endswith(b"\r") > limit:
                    self.failed = True
                    return piece[:start]
                start += len(line) + 1
        self._run = len(piece) - last - 1
        self._cr = self._run > 0 and piece[-1] == 13
        if self._run > limit + self._cr:
            self.failed = True
            return piece[:last + 1]
        return piece

    def finish(self) -> None:
        """End of stream: the final unterminated line (a trailing ``\\r`` included) must fit."""
        if self.failed or self._run > self._limit:
            self.failed = True
            raise self.error()


def guarded_pieces(pieces: Iterable[bytes], max_line_bytes: int) -> Iterator[bytes]:
    """Decoded ``pieces`` passed through unchanged until a line breaks the limit.

    The bytes before the offending line are yielded, then :class:`StreamLineTooLarge`
    is raised; a final unterminated line is checked when ``pieces`` ends.
    """
    guard = StreamLineGuard(max_line_bytes)
    for piece in pieces:
        good = guard.check(piece)
        if good:
            yield good
        if guard.failed:
            raise guard.error()
    guard.finish()


class LineSplitter:
    """Split decoded bytes into lines, releasing each one as soon as it is complete."""

    def __init__(self, max_line_bytes: int) -> None:
        self._guard = StreamLineGuard(max_line_bytes)
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        """The lines ``data`` completes (terminators removed), checked against the limit.

        Splitting happens in C over the completed region; only the unterminated tail is
        kept, and the guard bounds it too, so a line that never ends cannot grow past the
        limit.  Lines before an oversized one are returned first; the error surfaces on the
        next call, so a consumer sees exactly what preceded the violation.
        """
        guard = self._guard
        if guard.failed:
            raise guard.error()
        good = guard.check(data)
        buffer = self._buffer
        buffer += good
        if guard.failed:
            if not good:
                raise guard.error()
            # ``good`` ends at the start of the offending line: everything buffered is whole
            cut = len(buffer) - 1
        else:
            cut = buffer.rfind(b"\n")
        if cut == -1:
            return []
        complete = bytes(buffer[:cut])
        del buffer[:cut + 1]
        lines = complete.split(b"\n")
        if b"\r" in complete:
            lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
        return lines

    def finish(self) -> Iterator[bytes]:
        """The final unterminated line, if any."""
        self._guard.finish()
        if self._buffer:
            line = bytes(self._buffer)
            self._buffer.clear()
            yield line


class MemoryStreamResponse:
    """A :class:`~zigai.transport.StreamResponse` over an in-memory (already decoded) body."""

    def __init__(self, status: int, headers: Headers, body: bytes, limits: Limits) -> None:
        self.status = status
        self.headers = headers
        self.request_id: str | None
        self.retry_after_s: float | None
        self.date: datetime | None
        self.request_id, self.retry_after_s, self.date = response_metadata(headers)
        self._body = body
        self._limits = limits
        self._consumed = False

    def _take(self) -> bytes:
        if self._consumed:
            raise ValueError("a stream response can be consumed only once")
        self._consumed = True
        return self._body

    def _pieces(self) -> Iterator[bytes]:
        """The body in transport-sized pieces, as a socket would deliver it."""
        body = self._take()
        for start in range(0, len(body), PIECE_BYTES):
            yield body[start:start + PIECE_BYTES]

    def lines(self) -> Iterator[bytes]:
        splitter = LineSplitter(self._limits.max_stream_line_bytes)
        for piece in self._pieces():
            yield from splitter.feed(piece)
        yield from splitter.finish()

    def chunks(self) -> Iterator[bytes]:
        yield from guarded_pieces(self._pieces(), self._limits.max_stream_line_bytes)

    def read_body(self) -> bytes:
        body = self._take()
        limit = self._limits.max_response_body_bytes
        if len(body) > limit:
            raise ResponseTooLarge(f"response body exceeds the {limit}-byte limit", limit=limit)
        return body
