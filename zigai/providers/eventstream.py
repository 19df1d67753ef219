"""AWS EventStream framing (``application/vnd.amazon.eventstream``), decoded from raw chunks.

Each message on the wire is::

    total length   uint32, big endian (the whole message, these four bytes included)
    headers length uint32, big endian
    prelude CRC    uint32, CRC-32 of the eight bytes above
    headers        name length (uint8), name (UTF-8), value type (uint8), value
    payload        total - headers - 16 bytes
    message CRC    uint32, CRC-32 of everything before it

Header value types: 0 true, 1 false, 2 int8, 3 int16, 4 int32, 5 int64, 6 bytes (uint16
length), 7 UTF-8 string (uint16 length), 8 timestamp (int64 milliseconds), 9 UUID (16 bytes).

Invariants
    * :class:`EventStreamDecoder` takes chunks split at any byte and yields the same messages
      for every split.
    * The prelude is checked (its CRC, then the declared lengths against the bounds) as soon
      as its twelve bytes arrive, so an oversized message is refused before its body is
      buffered: at most ``max_message_bytes`` are ever held.
    * A message whose CRC does not match, a header that overruns its section, an unknown value
      type, invalid UTF-8 or a repeated header name raise :class:`MalformedEventStream`
      (:class:`EventStreamChecksumMismatch` for CRC failures); a message over the bound raises
      :class:`EventStreamMessageTooLarge`; a stream that ends inside a message raises
      :class:`MalformedEventStream` from :meth:`EventStreamDecoder.finish`.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from zigai.errors import ProviderError

__all__ = [
    "DEFAULT_MAX_HEADER_BYTES",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "EventStreamChecksumMismatch",
    "EventStreamDecoder",
    "EventStreamMessage",
    "EventStreamMessageTooLarge",
    "MalformedEventStream",
    "encode_message",
    "iter_messages",
]

#: The protocol's own ceilings: 16 MiB per message, 128 KiB of headers.
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_HEADER_BYTES = 128 * 1024
_PRELUDE = 12
_MINIMUM = _PRELUDE + 4


class MalformedEventStream(ProviderError):
    """The bytes are not a well-formed AWS EventStream message sequence."""


class EventStreamChecksumMismatch(MalformedEventStream):
    """A prelude or message CRC-32 does not match the bytes it covers."""


class EventStreamMessageTooLarge(MalformedEventStream):
    """A message (or its header section) declares more bytes than the configured bound."""


HeaderValue = bool | int | bytes | str | datetime | uuid.UUID


@dataclass(frozen=True, slots=True)
class EventStreamMessage:
    """One decoded message: its headers by name and its raw payload."""

    headers: Mapping[str, HeaderValue]
    payload: bytes

    def header(self, name: str) -> str | None:
        """A string header (``:event-type``, ``:message-type`` ...) or None."""
        value = self.headers.get(name)
        return value if isinstance(value, str) else None


_FIXED = {2: ">b", 3: ">h", 4: ">i", 5: ">q"}


def _read_headers(data: memoryview) -> dict[str, HeaderValue]:
    headers: dict[str, HeaderValue] = {}
    offset, end = 0, len(data)

    def take(count: int) -> memoryview:
        nonlocal offset
        if offset + count > end:
            raise MalformedEventStream("an event stream header runs past its header section")
        piece = data[offset:offset + count]
        offset += count
        return piece

    while offset < end:
        name_length = take(1)[0]
        if name_length == 0:
            raise MalformedEventStream("an event stream header has an empty name")
        try:
            name = str(take(name_length), "utf-8")
        except UnicodeDecodeError:
            raise MalformedEventStream("an event stream header name is not UTF-8") from None
        kind = take(1)[0]
        value: HeaderValue
        if kind in (0, 1):
            value = kind == 0
        elif kind in _FIXED:
            fmt = _FIXED[kind]
            value = struct.unpack(fmt, take(struct.calcsize(fmt)))[0]
        elif kind in (6, 7):
            length = struct.unpack(">H", take(2))[0]
            raw = bytes(take(length))
            if kind == 6:
                value = raw
            else:
                try:
                    value = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise MalformedEventStream(f"header {name!r} is not UTF-8") from None
        elif kind == 8:
            millis = struct.unpack(">q", take(8))[0]
            value = datetime.fromtimestamp(millis / 1000, tz=UTC)
        elif kind == 9:
            value = uuid.UUID(bytes=bytes(take(16)))
        else:
            raise MalformedEventStream(f"header {name!r} has unknown value type {kind}")
        if name in headers:
            raise MalformedEventStream(f"header {name!r} appears twice in one message")
        headers[name] = value
    return headers


class EventStreamDecoder:
    """Incremental decoder: :meth:`feed` raw chunks, collect complete messages."""

    __slots__ = ("_max", "_max_headers", "_buffer", "_needed")

    def __init__(self, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES) -> None:
        for name, value in (("max_message_bytes", max_message_bytes),
                            ("max_header_bytes", max_header_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int")
        if max_message_bytes < _MINIMUM:
            raise ValueError(f"max_message_bytes must be at least {_MINIMUM}")
        self._max = max_message_bytes
        self._max_headers = max_header_bytes
        self._buffer = bytearray()
        self._needed = 0  # total length of the message being received (0: prelude unread)

    @property
    def buffered_bytes(self) -> int:
        return len(self._buffer)

    def _check_prelude(self) -> int:
        prelude = bytes(self._buffer[:_PRELUDE])
        total, header_length, crc = struct.unpack(">III", prelude)
        if zlib.crc32(prelude[:8]) != crc:
            raise EventStreamChecksumMismatch("event stream prelude CRC does not match")
        if total > self._max:
            raise EventStreamMessageTooLarge(
                f"event stream message of {total} bytes exceeds the {self._max}-byte bound")
        if header_length > self._max_headers:
            raise EventStreamMessageTooLarge(
                f"event stream headers of {header_length} bytes exceed the "
                f"{self._max_headers}-byte bound")
        if total < _MINIMUM or header_length > total - _MINIMUM:
            raise MalformedEventStream(
                f"event stream lengths are inconsistent (total {total}, headers {header_length})")
        return total

    def _message(self, total: int) -> EventStreamMessage:
        frame = memoryview(self._buffer)[:total]
        try:
            expected = struct.unpack(">I", frame[total - 4:])[0]
            if zlib.crc32(frame[:total - 4]) != expected:
                raise EventStreamChecksumMismatch("event stream message CRC does not match")
            header_length = struct.unpack(">I", frame[4:8])[0]
            headers = _read_headers(frame[_PRELUDE:_PRELUDE + header_length])
            payload = bytes(frame[_PRELUDE + header_length:total - 4])
        finally:
            frame.release()
        return EventStreamMessage(headers, payload)

    def feed(self, chunk: bytes) -> list[EventStreamMessage]:
        """The messages ``chunk`` completes (chunks may split messages anywhere)."""
        buffer = self._buffer
        buffer += chunk
        messages: list[EventStreamMessage] = []
        while True:
            if not self._needed:
                if len(buffer) < _PRELUDE:
                    return messages
                self._needed = self._check_prelude()
            if len(buffer) < self._needed:
                return messages
            total, self._needed = self._needed, 0
            messages.append(self._message(total))
            del buffer[:total]

    def finish(self) -> None:
        """End of stream: nothing may be left half received."""
        if self._buffer:
            raise MalformedEventStream(
                f"event stream ended inside a message ({len(self._buffer)} bytes unread)")


def iter_messages(chunks: Iterable[bytes], max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
                  ) -> Iterator[EventStreamMessage]:
    """Every message of a chunked byte stream, then a check that nothing was cut off."""
    decoder = EventStreamDecoder(max_message_bytes)
    for chunk in chunks:
        yield from decoder.feed(chunk)
    decoder.finish()


def _encode_header(name: str, value: Any) -> bytes:
    raw_name = name.encode("utf-8")
    if not 1 <= len(raw_name) <= 255:
        raise ValueError("header names are 1-255 bytes")
    head = bytes([len(raw_name)]) + raw_name
    if isinstance(value, bool):
        return head + bytes([0 if value else 1])
    if isinstance(value, int):
        return head + b"\x05" + struct.pack(">q", value)
    if isinstance(value, bytes):
        return head + b"\x06" + struct.pack(">H", len(value)) + value
    if isinstance(value, str):
        text = value.encode("utf-8")
        return head + b"\x07" + struct.pack(">H", len(text)) + text
    if isinstance(value, datetime):
        return head + b"\x08" + struct.pack(">q", int(value.timestamp() * 1000))
    if isinstance(value, uuid.UUID):
        return head + b"\x09" + value.bytes
    raise TypeError(f"cannot encode a {type(value).__name__} event stream header")


def encode_message(headers: Mapping[str, Any], payload: bytes) -> bytes:
    """One framed message (for tests and local peers; integers are sent as int64)."""
    encoded = b"".join(_encode_header(name, value) for name, value in headers.items())
    total = _MINIMUM + len(encoded) + len(payload)
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + encoded + payload
    return body + struct.pack(">I", zlib.crc32(body))
