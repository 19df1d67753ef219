"""SSE framing: fields, comments, multi-line data, bounds, and byte-boundary independence."""

from __future__ import annotations

import pytest

from zigai.providers.sse import SseDecoder, SseEvent, SseEventTooLarge, iter_sse_events

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


def _all_chunked(data: bytes, cut: int) -> list[SseEvent]:
    decoder = SseDecoder()
    events = decoder.feed(data[:cut]) + decoder.feed(data[cut:])
    last = decoder.finish()
    return events + ([last] if last else [])


def test_events_from_whole_stream() -> None:
    assert _all_chunked(STREAM, len(STREAM)) == EXPECTED


@pytest.mark.parametrize("cut", range(len(STREAM) + 1))
def test_every_byte_boundary_yields_the_same_events(cut: int) -> None:
    assert _all_chunked(STREAM, cut) == EXPECTED


def test_one_byte_at_a_time() -> None:
    decoder = SseDecoder()
    events = []
    for i in range(len(STREAM)):
        events += decoder.feed(STREAM[i:i + 1])
    last = decoder.finish()
    assert events + ([last] if last else []) == EXPECTED


def test_lines_interface_matches_chunk_interface() -> None:
    lines = STREAM.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    assert list(iter_sse_events(lines)) == EXPECTED


def test_unterminated_final_event_is_dispatched_at_finish() -> None:
    assert list(iter_sse_events([b"event: x", b"data: y"])) == [SseEvent("x", "y")]


def test_event_data_bound_exact_and_one_past() -> None:
    decoder = SseDecoder(max_event_bytes=5)
    decoder.feed_line(b"data: ab")
    decoder.feed_line(b"data: cd")  # "ab\ncd" is exactly 5 bytes
    assert decoder.feed_line(b"") == SseEvent("message", "ab\ncd")
    decoder.feed_line(b"data: ab")
    with pytest.raises(SseEventTooLarge):
        decoder.feed_line(b"data: cde")


def test_blank_line_without_data_dispatches_nothing() -> None:
    assert list(iter_sse_events([b"event: ping", b"", b"data: z", b""])) == [SseEvent("message", "z")]


def test_field_without_colon_is_an_empty_value_in_both_interfaces() -> None:
    lines = [b"data", b"data: x", b"", b"event", b"data: y", b""]
    expected = [SseEvent("message", "\nx"), SseEvent("message", "y")]
    assert list(iter_sse_events(lines)) == expected
    decoder = SseDecoder()
    events = decoder.feed(b"\n".join(lines) + b"\n")
    assert events == expected


def test_line_interface_bounds_events_exactly() -> None:
    assert list(iter_sse_events([b"data: abcde", b""], max_event_bytes=5)) == [SseEvent("message", "abcde")]
    with pytest.raises(SseEventTooLarge):
        list(iter_sse_events([b"data: abc", b"data: de", b""], max_event_bytes=5))


def test_crlf_leftovers_are_stripped_from_lines() -> None:
    assert list(iter_sse_events([b"event: a\r", b"data: b\r", b"\r"])) == [SseEvent("a", "b")]
