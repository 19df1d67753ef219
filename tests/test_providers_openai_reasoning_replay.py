"""Responses reasoning replay fidelity: a reasoning item decoded (buffered or streamed) and
sent back with ``replay_reasoning=True`` keeps the shape it arrived in — summaries as
``summary``, ``reasoning_text`` entries as ``content``, both when both came, and
``encrypted_content`` unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.cassettes import ReplayTransport
from support.replays import local_cases
from support.sse_replay import feed_chunks

from zigai.messages import (
    ProviderDetails,
    ProviderPart,
    RequestMessage,
    ResponseMessage,
    ThinkingPart,
)
from zigai.model import ModelRequest, PartAccumulator
from zigai.providers.openai import EncodeOptions, StreamDecoder, decode_response, encode_request

_SUMMARIES = [{"type": "summary_text", "text": "Plan the reply."},
              {"type": "summary_text", "text": "Keep it short."}]
_CONTENT = [{"type": "reasoning_text", "text": "The user wants one word."},
            {"type": "reasoning_text", "text": "So: pong."}]

# The item as it is sent back: the documented input fields (id, summary, content,
# encrypted_content); the output-only ``status`` is not part of the replay.
SHAPES = {
    "summary_only": {"type": "reasoning", "id": "rs_1", "summary": _SUMMARIES},
    "content_only": {"type": "reasoning", "id": "rs_1", "summary": [], "content": _CONTENT},
    "both": {"type": "reasoning", "id": "rs_1", "summary": _SUMMARIES, "content": _CONTENT,
             "encrypted_content": "gAAAA-both"},
    "encrypted_only": {"type": "reasoning", "id": "rs_1", "summary": [],
                       "encrypted_content": "gAAAA-opaque=="},
}
_MESSAGE = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "pong", "annotations": []}]}


def _response(item: dict[str, Any]) -> dict[str, Any]:
    return {"id": "resp_1", "model": "gpt-5", "status": "completed",
            "output": [{**item, "status": "completed"}, _MESSAGE],
            "usage": {"input_tokens": 3, "output_tokens": 2}}


def _replayed(response: ResponseMessage) -> list[dict[str, Any]]:
    request = ModelRequest(messages=(RequestMessage.user("q"), response))
    body = encode_request(request, "gpt-5", options=EncodeOptions(replay_reasoning=True))
    return body["input"][1:]


def _sse(events: list[dict[str, Any]]) -> list[bytes]:
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


def _stream_events(item: dict[str, Any], *, item_done: bool = True) -> list[dict[str, Any]]:
    """What OpenAI streams for ``item``: the announced empty item, a delta per text (split in
    two) with its ``.done``, the finished item, then the message and the terminal event."""
    events: list[dict[str, Any]] = [
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "reasoning", "id": "rs_1", "summary": [], "status": "in_progress"}}]
    for field, kind in (("summary", "reasoning_summary_text"), ("content", "reasoning_text")):
        for index, entry in enumerate(item.get(field, [])):
            where = {"item_id": "rs_1", "output_index": 0, f"{field}_index": index}
            half = len(entry["text"]) // 2
            for piece in (entry["text"][:half], entry["text"][half:]):
                events.append({"type": f"response.{kind}.delta", **where, "delta": piece})
            events.append({"type": f"response.{kind}.done", **where, "text": entry["text"]})
    if item_done:
        events.append({"type": "response.output_item.done", "output_index": 0,
                       "item": {**item, "status": "completed"}})
    events.append({"type": "response.output_item.done", "output_index": 1, "item": _MESSAGE})
    events.append({"type": "response.completed", "response": _response(item)})
    return events


def _streamed(events: list[dict[str, Any]]) -> ResponseMessage:
    accumulator = PartAccumulator()
    for event in feed_chunks(StreamDecoder(), _sse(events)):
        accumulator.apply(event)
    return ResponseMessage(parts=tuple(accumulator.parts()))


@pytest.mark.parametrize("shape", SHAPES)
def test_buffered_reasoning_replays_in_the_shape_it_arrived(shape: str) -> None:
    response = decode_response(_response(SHAPES[shape]))
    reasoning, message = _replayed(response)
    assert reasoning == SHAPES[shape]
    assert message["type"] == "message" and message["id"] == "msg_1"


@pytest.mark.parametrize("shape", SHAPES)
def test_streamed_reasoning_equals_the_buffered_decode_and_replays_the_same(shape: str) -> None:
    streamed = _streamed(_stream_events(SHAPES[shape]))
    buffered = decode_response(_response(SHAPES[shape]))
    assert streamed.parts == buffered.parts
    assert _replayed(streamed)[0] == SHAPES[shape]


def test_the_part_text_is_the_summaries_or_else_the_content_and_fields_stay_apart() -> None:
    (both, _) = decode_response(_response(SHAPES["both"])).parts
    assert isinstance(both, ThinkingPart)
    assert both.content == "Plan the reply.\n\nKeep it short."
    assert both.provider is not None and both.provider.details is not None
    assert both.provider.details.to_value() == {
        "summary": ["Plan the reply.", "Keep it short."],
        "content": ["The user wants one word.", "So: pong."]}
    (content, _) = decode_response(_response(SHAPES["content_only"])).parts
    assert content.content == "The user wants one word.\n\nSo: pong."  # type: ignore[union-attr]


@pytest.mark.parametrize("shape", ["summary_only", "content_only"])
def test_a_reasoning_item_that_never_finishes_keeps_its_streamed_fields(shape: str) -> None:
    """No ``output_item.done`` for the reasoning item (the stream was cut short of it): the
    texts the deltas streamed still go back in their own fields."""
    streamed = _streamed(_stream_events(SHAPES[shape], item_done=False))
    part = streamed.parts[0]
    assert isinstance(part, ThinkingPart) and part.signature is None
    texts = [entry["text"] for entry in SHAPES[shape].get("summary") or SHAPES[shape]["content"]]
    assert part.content == "\n\n".join(texts)
    assert _replayed(streamed)[0] == SHAPES[shape]


def test_a_done_event_without_deltas_supplies_the_text_once() -> None:
    events = [
        {"type": "response.reasoning_text.done", "item_id": "rs_1", "content_index": 0,
         "text": "whole thought"},
        {"type": "response.reasoning_text.done", "item_id": "rs_1", "content_index": 0,
         "text": "whole thought"},
        {"type": "response.reasoning_text.delta", "item_id": "rs_1", "content_index": 1,
         "delta": "second"},
        {"type": "response.completed", "response": _response(SHAPES["encrypted_only"])},
    ]
    (part,) = _streamed(events).parts
    assert part.content == "whole thought\n\nsecond"  # type: ignore[union-attr]
    assert _replayed(ResponseMessage(parts=(part,))) == [
        {"type": "reasoning", "id": "rs_1", "summary": [],
         "content": [{"type": "reasoning_text", "text": "whole thought"},
                     {"type": "reasoning_text", "text": "second"}]}]


def test_a_part_with_no_recorded_fields_sends_its_text_as_the_one_summary() -> None:
    bare = ThinkingPart("my own note", id="rs_9", provider=ProviderPart("openai", id="rs_9"))
    empty = ThinkingPart("", id="rs_8", signature="enc",
                         provider=ProviderPart("openai", id="rs_8"))
    content = ThinkingPart("ignored: the details say what came", id="rs_7",
                           provider=ProviderPart("openai", id="rs_7", details=(
                               ProviderDetails.from_value({"content": ["c"]}))))
    assert _replayed(ResponseMessage(parts=(bare, empty, content))) == [
        {"type": "reasoning", "id": "rs_9",
         "summary": [{"type": "summary_text", "text": "my own note"}]},
        {"type": "reasoning", "id": "rs_8", "summary": [], "encrypted_content": "enc"},
        {"type": "reasoning", "id": "rs_7", "summary": [],
         "content": [{"type": "reasoning_text", "text": "c"}]},
    ]


def test_llama_server_accepts_the_replayed_reasoning_item_in_its_own_shape() -> None:
    """Our recording against llama-server (``thinking_replay``): its reasoning items carry
    ``reasoning_text`` content and no summary; the follow-up sends the item back that way
    and the server answers it (the summary-shaped replay drew a 400)."""
    (case,) = local_cases("responses", ["thinking_replay"])
    answer, follow_up = case.run()
    thought = answer.parts[0]
    assert isinstance(thought, ThinkingPart) and thought.content and thought.signature is None
    first, second = ReplayTransport.load(case.path).interactions
    sent = second.request_body.content
    assert isinstance(sent, dict)
    (reasoning,) = [item for item in sent["input"] if item["type"] == "reasoning"]
    assert reasoning == {"type": "reasoning", "id": thought.id, "summary": [],
                         "content": [{"type": "reasoning_text", "text": thought.content}]}
    assert second.status == 200 and follow_up.text
