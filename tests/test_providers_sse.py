"""SSE framing: fields, comments, multi-line data, bounds, and byte-boundary independence."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zigai.providers import sse
from zigai.providers.sse import SseDecoder, SseEvent, SseEventTooLarge, iter_sse_batches

STREAM = (
    b": keep-alive comment\r\n"
    b"event: response.created\n"
    b"data: {\"a\":1}\n"
    b"\n"
    b"data:first\r\n"
    b"data: second\r\n"
    b"id: 7\r\n"
    b"retry: 100\r\n"
    b"\r\n"
    b"data: [DONE]\r"
    b"\r"
)
EXPECTED = [
    SseEvent("response.created", '{"a":1}'),
    SseEvent("message", "first\nsecond"),
    SseEvent("message", "[DONE]"),
]


def _decode(chunks: list[bytes], max_event_bytes: int = 16 << 20) -> list[SseEvent]:
    batches = list(iter_sse_batches(chunks, max_event_bytes))
    assert all(batches), "no empty batches"
    return [event for batch in batches for event in batch]


def _reference(stream: bytes) -> list[SseEvent]:
    """A deliberately naive line-at-a-time reading of the same rules, for comparison."""
    text = stream.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    lines = text.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    events, name, data = [], "", None
    for line in [*lines, b""]:
        if line == b"":
            if data is not None:
                events.append(SseEvent(name or "message", b"\n".join(data).decode("utf-8", "replace")))
            name, data = "", None
            continue
        if line.startswith(b":"):
            continue
        field, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if field == b"event":
            name = value.decode("utf-8", "replace")
        elif field == b"data":
            data = [*(data or []), value]
    return events


def test_events_from_whole_stream() -> None:
    assert _decode([STREAM]) == EXPECTED == _reference(STREAM)


@pytest.mark.parametrize("cut", range(len(STREAM) + 1))
def test_every_byte_boundary_yields_the_same_events(cut: int) -> None:
    assert _decode([STREAM[:cut], STREAM[cut:]]) == EXPECTED


def test_one_byte_at_a_time() -> None:
    assert _decode([STREAM[i:i + 1] for i in range(len(STREAM))]) == EXPECTED


def test_feed_line_and_feed_agree() -> None:
    decoder = SseDecoder()
    lines = STREAM.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    events = [event for line in lines if (event := decoder.feed_line(line)) is not None]
    assert events == EXPECTED


def test_unterminated_final_event_is_dispatched_at_finish() -> None:
    assert _decode([b"event: x\ndata: y"]) == [SseEvent("x", "y")]
    assert _decode([b"event: x\ndata: y\n"]) == [SseEvent("x", "y")]
    assert _decode([b"data: a\n\ndata: b\n"]) == [SseEvent("message", "a"), SseEvent("message", "b")]


def test_blank_line_without_data_dispatches_nothing_and_resets_the_name() -> None:
    assert _decode([b"event: ping\n\ndata: z\n\n"]) == [SseEvent("message", "z")]


def test_field_without_colon_is_an_empty_value() -> None:
    stream = b"data\ndata: x\n\nevent\ndata: y\n\n"
    expected = [SseEvent("message", "\nx"), SseEvent("message", "y")]
    assert _decode([stream]) == expected == _reference(stream)


def test_an_empty_event_line_resets_a_name_set_earlier_in_the_same_event() -> None:
    stream = b"event: a\n: note\nevent:\ndata: x\n\n"
    assert _decode([stream]) == [SseEvent("message", "x")]
    assert _decode([stream[:9], stream[9:]]) == [SseEvent("message", "x")]


def test_only_one_space_after_the_colon_is_removed() -> None:
    assert _decode([b"event:  e\ndata:  two\n\n"]) == [SseEvent(" e", " two")]


def test_invalid_utf8_is_replaced_per_event_like_the_line_path() -> None:
    stream = b"data: ok\n\ndata: bad \xff\xfe end\n\nevent: \xc3\ndata: x\n\n"
    expected = [SseEvent("message", "ok"), SseEvent("message", "bad \ufffd\ufffd end"),
                SseEvent("\ufffd", "x")]
    assert _decode([stream]) == expected == _reference(stream)


def test_event_data_bound_exact_and_one_past_in_the_line_path() -> None:
    decoder = SseDecoder(max_event_bytes=5)
    decoder.feed_line(b"data: ab")
    decoder.feed_line(b"data: cd")  # "ab\ncd" is exactly 5 bytes
    assert decoder.feed_line(b"") == SseEvent("message", "ab\ncd")
    decoder.feed_line(b"data: ab")
    with pytest.raises(SseEventTooLarge):
        decoder.feed_line(b"data: cde")


@pytest.mark.parametrize("piece", [1, 3, 1 << 20])
def test_event_data_bound_exact_and_one_past_through_chunks(piece: int) -> None:
    def split(data: bytes) -> list[bytes]:
        return [data[i:i + piece] for i in range(0, len(data), piece)]

    assert _decode(split(b"data: abcde\n\n"), 5) == [SseEvent("message", "abcde")]
    assert _decode(split(b"data: abc\ndata: d\n\n"), 5) == [SseEvent("message", "abc\nd")]
    with pytest.raises(SseEventTooLarge):
        _decode(split(b"data: abcdef\n\n"), 5)
    with pytest.raises(SseEventTooLarge):
        _decode(split(b"data: abc\ndata: de\n\n"), 5)


def test_big_events_pass_exactly_at_the_bound() -> None:
    body = b"x" * 200_000
    assert _decode([b"data: " + body + b"\n\n"], len(body)) == [SseEvent("message", body.decode())]
    with pytest.raises(SseEventTooLarge):
        _decode([b"data: " + body + b"x\n\n"], len(body))


def test_unterminated_line_is_bounded_at_the_bound_plus_64() -> None:
    decoder = SseDecoder(max_event_bytes=10)
    assert decoder.feed(b":" + b"c" * 73) == []  # a 74-byte comment line still in progress
    with pytest.raises(SseEventTooLarge):
        decoder.feed(b"c")
    one_piece = SseDecoder(max_event_bytes=10)
    with pytest.raises(SseEventTooLarge):
        one_piece.feed(b"data: ab\n:" + b"c" * 74)


def test_whole_lines_of_an_unfinished_event_are_not_hoarded() -> None:
    decoder = SseDecoder()
    comment = b": keep-alive\n"
    for _ in range(20_000):  # 260 KB of comments with no blank line
        assert decoder.feed(comment) == []
        assert decoder.buffered_bytes <= 64 * 1024
    decoder.feed(b"data: one\n")
    for _ in range(10_000):  # a long multi-line event is parsed into the event as it arrives
        decoder.feed(b"data: more\n")
        assert decoder.buffered_bytes <= 64 * 1024
    events = decoder.feed(b"\n")
    assert len(events) == 1 and events[0].data.count("\n") == 10_000


@pytest.mark.parametrize("hold", [1, 8, 64 * 1024])
def test_an_event_parsed_early_continues_across_chunks(hold: int) -> None:
    """Chunks that end mid-line, right after a line, or right before a terminator, while an
    event that outgrew the hold size is still open."""
    stream = b"data: a\ndata: b\ndata: c\n\nevent: e\ndata: d\n\n"
    expected = [SseEvent("message", "a\nb\nc"), SseEvent("e", "d")]
    with mock.patch.object(sse, "_HOLD_BYTES", hold):
        for first in range(len(stream) + 1):
            for second in range(first, len(stream) + 1):
                chunks = [stream[:first], stream[first:second], stream[second:]]
                assert _decode(chunks) == expected, (first, second)


def test_a_long_line_arriving_in_small_pieces_is_joined_once() -> None:
    decoder = SseDecoder()
    events: list[SseEvent] = []
    events += decoder.feed(b"data: ")
    for _ in range(4096):
        events += decoder.feed(b"y" * 256)
    events += decoder.feed(b"\n\n")
    assert events == [SseEvent("message", "y" * (4096 * 256))]
    assert decoder.buffered_bytes == 0


def test_a_non_positive_event_bound_is_refused() -> None:
    with pytest.raises(ValueError):
        SseDecoder(0)


_LINES = st.sampled_from([
    b"event: response.output_text.delta", b"event:", b"event", b"event: a:b",
    b"data: {\"k\": 1}", b"data:", b"data", b"data:  two spaces", b"data: \xc3\xa9", b"data: \xff",
    b": comment", b":", b"id: 9", b"retry: 5", b"other: x", b"", b"", b"",
])
_ENDS = st.sampled_from([b"\n", b"\n", b"\n", b"\r\n", b"\r"])


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(st.tuples(_LINES, _ENDS), max_size=30),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6),
    terminated=st.booleans(),
    hold=st.sampled_from([None, 1, 12, 40]),
)
def test_any_stream_split_anywhere_matches_the_reference(
    lines: list[tuple[bytes, bytes]], cuts: list[int], terminated: bool, hold: int | None
) -> None:
    """``hold`` shrinks how many whole lines of an unfinished event are kept unparsed, so
    events that straddle chunks also take the early-parse path at these sizes."""
    stream = b"".join(line + end for line, end in lines)
    if not terminated and stream:
        stream = stream.rstrip(b"\r\n")
    points = sorted({min(cut, len(stream)) for cut in cuts})
    chunks = [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]
    with mock.patch.object(sse, "_HOLD_BYTES", hold or sse._HOLD_BYTES):
        assert _decode(chunks) == _reference(stream)
