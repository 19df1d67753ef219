"""Anthropic Messages stream decoding: every out-of-order or malformed block event is a named
decode error at ``$event``; skipped block types and future delta kinds are ignored; usage
details keep unknown counters."""

from __future__ import annotations

import json
from typing import Any

import pytest

from zigai.messages import TextPart
from zigai.providers import anthropic as A
from zigai.providers.anthropic._decode import decode_usage
from zigai.providers.sse import SseDecoder

START = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
TEXT = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}
STOP = {"type": "content_block_stop", "index": 0}


def _feed(*events: dict[str, Any]) -> tuple[A.StreamDecoder, list[Any]]:
    sse = SseDecoder()
    decoder = A.StreamDecoder("claude-x")
    out: list[Any] = []
    for event in events:
        for parsed in sse.feed(b"data: " + json.dumps(event).encode() + b"\n\n"):
            out.extend(decoder.feed(parsed))
    return decoder, out


@pytest.mark.parametrize(
    ("events", "message"),
    [
        ([{"type": "content_block_start", "content_block": {"type": "text", "text": ""}}], "missing content block index"),
        ([START, START], "content block 0 started twice"),
        ([START, STOP, TEXT], "delta for closed content block 0"),
        ([START, STOP, STOP], "content block 0 stopped twice"),
        ([START, {"type": "content_block_delta", "index": 0,
                  "delta": {"type": "input_json_delta", "partial_json": "{"}}], "delta"),
    ],
)
def test_out_of_order_block_events_are_named_decode_errors(events: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(A.AnthropicDecodeError, match=message) as caught:
        _feed(*events)
    assert caught.value.path.startswith("$event")


def test_a_citation_for_a_block_that_is_not_text_is_refused() -> None:
    tool = {"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "c1", "name": "f", "input": {}}}
    citation = {"type": "content_block_delta", "index": 0,
                "delta": {"type": "citations_delta", "citation": {"type": "char_location", "cited_text": "x"}}}
    with pytest.raises(A.AnthropicDecodeError, match="citations for a block that is not text"):
        _feed(tool, citation, STOP)


def test_skipped_blocks_and_future_deltas_are_ignored() -> None:
    future_block = {"type": "content_block_start", "index": 1, "content_block": {"type": "hologram"}}
    future_delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "sparkle_delta", "x": 1}}
    decoder, events = _feed(
        {"type": "message_start", "message": {"id": "m1", "usage": {"input_tokens": 2}}},
        START, TEXT, future_delta,
        future_block, {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "?"}},
        {"type": "content_block_stop", "index": 1}, STOP,
        {"type": "ping"},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    )
    assert [e.part for e in events if type(e).__name__ == "PartEndEvent"] == [TextPart("Hi")]
    assert decoder.finish() == []
    assert decoder.usage.output_tokens == 3


def test_a_stream_that_never_stops_is_a_decode_error() -> None:
    decoder, _ = _feed(START, TEXT, STOP)
    with pytest.raises(A.AnthropicDecodeError, match="before message_stop"):
        decoder.finish()


def test_usage_details_keep_unknown_counters_and_thinking_tokens_are_capped() -> None:
    usage = decode_usage({
        "input_tokens": 5, "output_tokens": 4, "cache_read_input_tokens": 1,
        "server_tool_use": {"web_search_requests": 2, "bad": True},
        "output_tokens_details": {"thinking_tokens": 9},
        "service_units": 7, "label": "x",
    })
    assert usage.input_tokens == 6 and usage.reasoning_tokens == 4
    assert dict(usage.details) == {"server_tool_use.web_search_requests": 2, "service_units": 7}
    assert decode_usage(None).input_tokens == 0
