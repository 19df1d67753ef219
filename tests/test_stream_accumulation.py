"""Streamed parts grow in linear time: no decoder copies a part per delta (issue 11 item 8).

Copying a growing part on every delta makes a stream of N deltas cost O(N^2) bytes copied
(16,000 deltas of 1 KB took a minute).  These tests count the part copies (``replace``
calls) each decoder makes while N deltas arrive: it must not grow with N.  The wall-clock
numbers live in ``scripts/bench.py`` (``stream_16k_deltas_per_s``), not here.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest

from zigai.messages import TextPart, ThinkingPart, ToolCallPart
from zigai.model import PartDeltaEvent, PartEndEvent, PartStartEvent, TextPartDelta
from zigai.model.stream import GrowingParts, InvalidStreamEvent, PartAccumulator
from zigai.providers.sse import SseEvent

DELTAS = 3000
MODULES = (
    "zigai.model.stream",
    "zigai.providers._native",
    "zigai.providers.google._decode",
    "zigai.providers.openai.stream",
    "zigai.providers.openai_compatible.stream",
)


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts every ``dataclasses.replace`` the stream modules make."""
    import importlib

    count = [0]

    def counting(obj: Any, /, **changes: Any) -> Any:
        count[0] += 1
        return dataclasses.replace(obj, **changes)

    for name in MODULES:
        module = importlib.import_module(name)
        if hasattr(module, "replace"):
            monkeypatch.setattr(module, "replace", counting)
    yield count


def _data(payload: Any) -> SseEvent:
    return SseEvent("message", json.dumps(payload))


def _final(events: list[Any], index: int) -> Any:
    ends = [e.part for e in events if isinstance(e, PartEndEvent) and e.index == index]
    assert len(ends) == 1
    return ends[0]


def test_chat_completions_text_thinking_and_arguments(copies: list[int]) -> None:
    from zigai.providers.openai_compatible import StreamDecoder

    decoder = StreamDecoder("gw")
    events: list[Any] = []
    first = {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "f", "arguments": ""}}]}
    events += decoder.feed(_data({"choices": [{"index": 0, "delta": first}]}))
    for n in range(DELTAS):
        delta = {"reasoning_content": "r", "content": f"t{n},",
                 "tool_calls": [{"index": 0, "function": {"arguments": "a"}}]}
        events += decoder.feed(_data({"choices": [{"index": 0, "delta": delta}]}))
    events += decoder.feed(_data({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    events += decoder.feed(SseEvent("message", "[DONE]"))
    assert copies[0] <= 3  # one join per part when it ends, never one copy per delta
    assert _final(events, 0).args == "a" * DELTAS
    assert _final(events, 1).content == "r" * DELTAS
    assert _final(events, 2).content == "".join(f"t{n}," for n in range(DELTAS))


def test_responses_text_deltas(copies: list[int]) -> None:
    from zigai.providers.openai.stream import StreamDecoder

    decoder = StreamDecoder()
    events: list[Any] = []
    for n in range(DELTAS):
        events += decoder.feed(_data({"type": "response.output_text.delta", "item_id": "m1",
                                      "content_index": 0, "delta": f"{n} "}))
    assert copies[0] == 0
    assert decoder._parts[0].content == "".join(f"{n} " for n in range(DELTAS))


def test_google_text_chunks(copies: list[int]) -> None:
    from zigai.providers.google._decode import StreamDecoder

    decoder = StreamDecoder()
    events: list[Any] = []
    for n in range(DELTAS):
        events += decoder.feed(_data(
            {"candidates": [{"content": {"role": "model", "parts": [{"text": f"{n} "}]}}]}
        ))
    events += decoder.finish()
    assert copies[0] <= 1
    assert _final(events, 0).content == "".join(f"{n} " for n in range(DELTAS))


def test_native_part_bookkeeping(copies: list[int]) -> None:
    from zigai.providers.mistral._decode import StreamDecoder

    decoder = StreamDecoder("m", "mistral")
    out: list[Any] = []
    text = decoder._start(TextPart(""), out)
    call = decoder._start(ToolCallPart("f", "", "c1"), out)
    for _ in range(DELTAS):
        decoder._grow(text, "x", out)
        decoder._grow(call, "y", out)
    assert copies[0] == 0
    decoder._end(text, out)
    decoder._end(call, out)
    assert _final(out, text).content == "x" * DELTAS
    assert _final(out, call).args == "y" * DELTAS


def test_the_accumulator_folds_on_read(copies: list[int]) -> None:
    accumulator = PartAccumulator()
    accumulator.apply(PartStartEvent(0, TextPart("")))
    for _ in range(DELTAS):
        accumulator.apply(PartDeltaEvent(0, TextPartDelta("z")))
    assert copies[0] == 0
    assert accumulator.parts() == (TextPart("z" * DELTAS),)


# ------------------------------------------------------------------ GrowingParts itself


def test_growing_parts_reads_join_pending_pieces_once() -> None:
    parts = GrowingParts()
    text = parts.append(TextPart("a"))
    thinking = parts.append(ThinkingPart("", signature="s"))
    call = parts.append(ToolCallPart("f", "", "c1"))
    assert (text, thinking, call) == (0, 1, 2) and len(parts) == 3 and 1 in parts
    for piece in ("b", "c", ""):
        parts.grow(text, piece)
        parts.grow(thinking, piece)
        parts.grow(call, piece)
    assert parts.base(text) == TextPart("a")  # pending pieces are not in the stored part
    assert parts[text] == TextPart("abc")
    assert parts[text] is parts[text]  # folded once, then stored
    assert parts[thinking] == ThinkingPart("bc", signature="s")
    parts.grow(call, "{}")
    parts[call] = ToolCallPart("g", "", "c2")  # storing drops the pending pieces
    assert parts[call] == ToolCallPart("g", "", "c2")
    parts.grow(text, "d")
    assert list(parts.values()) == [
        TextPart("abcd"), ThinkingPart("bc", signature="s"), ToolCallPart("g", "", "c2"),
    ]
    assert list(parts) == [0, 1, 2]


def test_a_part_without_text_cannot_grow() -> None:
    from zigai.messages import BytesSource, FilePart

    parts = GrowingParts()
    index = parts.append(FilePart(BytesSource(b"x", "image/png")))
    with pytest.raises(InvalidStreamEvent, match="cannot grow"):
        parts.grow(index, "x")




def test_the_accumulator_refuses_events_that_do_not_fit() -> None:
    from zigai.model import ThinkingPartDelta, ToolCallPartDelta
    from zigai.model.stream import StreamedResponse

    accumulator = PartAccumulator()
    accumulator.apply(PartStartEvent(0, TextPart("a")))
    bad: list[tuple[Any, str]] = [
        (PartStartEvent(0, TextPart("b")), "started twice"),
        (PartStartEvent(-1, TextPart("b")), "non-negative"),
        (PartEndEvent(5, TextPart("b")), "before its start"),
        (PartDeltaEvent(0, ThinkingPartDelta("x")), "thinking delta"),
        (PartDeltaEvent(0, ToolCallPartDelta(args_delta="x")), "tool-call delta"),
        (PartDeltaEvent(0, "not a delta"), "unknown delta"),
        ("not an event", "unknown event"),
    ]
    for event, message in bad:
        with pytest.raises(InvalidStreamEvent, match=message):
            accumulator.apply(event)
    accumulator.apply(PartEndEvent(0, TextPart("ab")))
    with pytest.raises(InvalidStreamEvent, match="after its end"):
        accumulator.apply(PartEndEvent(0, TextPart("ab")))
    with pytest.raises(InvalidStreamEvent, match="after its end"):
        accumulator.apply(PartDeltaEvent(0, TextPartDelta("c")))

    class Empty(StreamedResponse):
        pass

    with Empty() as stream:
        assert stream.current_part(0) is None
        with pytest.raises(NotImplementedError):
            list(stream)
