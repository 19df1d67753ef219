"""zigai.providers.eventstream: AWS EventStream framing with CRC checks and bounded messages."""

from __future__ import annotations

import struct
import uuid
import zlib
from datetime import UTC, datetime

import pytest

from zigai.providers.eventstream import (
    EventStreamChecksumMismatch,
    EventStreamDecoder,
    EventStreamMessage,
    EventStreamMessageTooLarge,
    MalformedEventStream,
    encode_message,
    iter_messages,
)

WHEN = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
ID = uuid.UUID("12345678-1234-5678-1234-567812345678")
HEADERS = {":event-type": "contentBlockDelta", ":message-type": "event", "flag": True, "off": False,
           "count": 7, "blob": b"\x00\x01", "when": WHEN, "id": ID}


def _frames() -> bytes:
    return (encode_message(HEADERS, b'{"contentBlockIndex":0,"delta":{"text":"hi"}}')
            + encode_message({":event-type": "messageStop"}, b"")
            + encode_message({}, b"x" * 300))


def test_messages_decode_the_same_at_every_split() -> None:
    data = _frames()
    whole = list(iter_messages([data]))
    assert [m.header(":event-type") for m in whole] == ["contentBlockDelta", "messageStop", None]
    first = whole[0]
    assert dict(first.headers) == HEADERS and first.header("count") is None
    assert first.payload == b'{"contentBlockIndex":0,"delta":{"text":"hi"}}'
    assert whole[2].payload == b"x" * 300
    for cut in range(1, len(data)):
        assert list(iter_messages([data[:cut], data[cut:]])) == whole, cut
    assert list(iter_messages([data[i:i + 1] for i in range(len(data))])) == whole


def test_all_fixed_width_header_types_decode() -> None:
    def header(name: bytes, kind: int, value: bytes) -> bytes:
        return bytes([len(name)]) + name + bytes([kind]) + value

    section = (header(b"b", 2, struct.pack(">b", -3)) + header(b"s", 3, struct.pack(">h", -300))
               + header(b"i", 4, struct.pack(">i", 70000)) + header(b"l", 5, struct.pack(">q", -1)))
    prelude = struct.pack(">II", 16 + len(section), len(section))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + section
    frame = body + struct.pack(">I", zlib.crc32(body))
    (message,) = EventStreamDecoder().feed(frame)
    assert dict(message.headers) == {"b": -3, "s": -300, "i": 70000, "l": -1}


def test_corrupted_crcs_are_refused() -> None:
    frame = bytearray(encode_message({":event-type": "x"}, b"payload"))
    prelude_bad = bytes(frame[:8]) + b"\x00\x00\x00\x00" + bytes(frame[12:])
    with pytest.raises(EventStreamChecksumMismatch, match="prelude"):
        EventStreamDecoder().feed(prelude_bad)
    frame[-5] ^= 0x01  # one payload bit
    with pytest.raises(EventStreamChecksumMismatch, match="message CRC"):
        EventStreamDecoder().feed(bytes(frame))


def test_oversized_messages_are_refused_from_the_prelude_alone() -> None:
    frame = encode_message({}, b"y" * 84)  # 100 bytes in all
    assert len(frame) == 100
    assert len(EventStreamDecoder(max_message_bytes=100).feed(frame)) == 1
    decoder = EventStreamDecoder(max_message_bytes=99)
    with pytest.raises(EventStreamMessageTooLarge, match="100 bytes"):
        decoder.feed(frame[:12])  # refused before a single body byte arrives
    headed = encode_message({"name": "v" * 20}, b"")
    header_length = struct.unpack(">I", headed[4:8])[0]
    assert len(EventStreamDecoder(max_header_bytes=header_length).feed(headed)) == 1
    with pytest.raises(EventStreamMessageTooLarge, match="headers"):
        EventStreamDecoder(max_header_bytes=header_length - 1).feed(headed)


def _frame(header_length: int, rest: bytes, total: int | None = None) -> bytes:
    prelude = struct.pack(">II", 16 + len(rest) if total is None else total, header_length)
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + rest
    return body + struct.pack(">I", zlib.crc32(body))


@pytest.mark.parametrize(("frame", "message"), [
    (_frame(4, b""), "inconsistent"),
    (_frame(0, b"", total=15), "inconsistent"),
    (_frame(4, b"\x05abc"), "runs past"),
    (_frame(2, b"\x00\x00"), "empty name"),
    (_frame(4, b"\x01\xff\x00x"), "not UTF-8"),
    (_frame(3, b"\x01a\x0f"), "unknown value type"),
    (_frame(6, b"\x01a\x07\x00\x01\xff"), "not UTF-8"),
    (_frame(6, b"\x01a\x00\x01a\x00"), "twice"),
])
def test_malformed_frames_raise(frame: bytes, message: str) -> None:
    with pytest.raises(MalformedEventStream, match=message):
        EventStreamDecoder().feed(frame)


def test_truncated_streams_and_bad_bounds() -> None:
    frame = encode_message({}, b"abc")
    decoder = EventStreamDecoder()
    assert decoder.feed(frame[:-1]) == [] and decoder.buffered_bytes == len(frame) - 1
    with pytest.raises(MalformedEventStream, match="ended inside"):
        decoder.finish()
    with pytest.raises(MalformedEventStream):
        list(iter_messages([frame[:5]]))
    for bad in (0, True, 15, "16"):
        with pytest.raises(ValueError):
            EventStreamDecoder(max_message_bytes=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        EventStreamDecoder(max_header_bytes=0)


def test_encoder_refuses_what_it_cannot_frame() -> None:
    with pytest.raises(ValueError):
        encode_message({"": "x"}, b"")
    with pytest.raises(TypeError):
        encode_message({"x": 1.5}, b"")
    assert EventStreamMessage({}, b"").header("missing") is None
