"""Chat Completions buffered decoding edges: content part lists, tool-call shapes some servers
send, reported cost, annotations and refusals, and a named error with a path for each
malformed field."""

from __future__ import annotations

from typing import Any

import pytest

from zigai.messages import TextPart, ToolCallPart
from zigai.providers.openai_compatible.decode import (
    OpenAICompatibleDecodeError,
    decode_response,
    reported_cost_usd,
)


def _body(message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": "c1", "choices": [{"index": 0, "message": {"role": "assistant", **message},
                                     "finish_reason": "stop"}], **extra}


def test_content_given_as_a_list_of_text_parts_is_joined() -> None:
    response = decode_response(_body({"content": [{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}]}))
    assert response.parts == (TextPart("Hello"),)


def test_tool_call_arguments_sent_as_an_object_or_null_are_normalised() -> None:
    calls = [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}},
        {"id": "b", "type": "function", "function": {"name": "g", "arguments": None}},
    ]
    response = decode_response(_body({"content": None, "tool_calls": calls}))
    assert response.parts == (ToolCallPart("f", '{"x":1}', "a"), ToolCallPart("g", "", "b"))


def test_reported_cost_is_an_exact_decimal_and_kept_in_the_details() -> None:
    assert reported_cost_usd({"cost": 0.00012}) == "0.00012"
    assert reported_cost_usd({"cost": 3}) == "3"
    assert reported_cost_usd({"prompt_tokens": 1}) is None and reported_cost_usd(None) is None
    response = decode_response(_body({"content": "hi"}, usage={"prompt_tokens": 1, "completion_tokens": 1,
                                                               "cost": 0.5}))
    assert response.provider_details is not None
    assert response.provider_details["reported_cost_usd"] == "0.5"


@pytest.mark.parametrize("cost", [-1, float("inf"), True, "0.1"])
def test_a_reported_cost_that_is_not_a_finite_amount_is_a_decode_error(cost: Any) -> None:
    with pytest.raises(OpenAICompatibleDecodeError) as caught:
        reported_cost_usd({"cost": cost})
    assert caught.value.path == "$.usage.cost"


def test_annotations_and_refusals_are_kept() -> None:
    citation = {"type": "url_citation", "url_citation": {"url": "https://example.com", "title": "E"}}
    response = decode_response(_body({"content": "x", "refusal": "I cannot", "annotations": [citation]}))
    details = response.provider_details
    assert details is not None and details["refusal"] == "I cannot"


@pytest.mark.parametrize(
    ("message", "path"),
    [
        ({"content": 5}, "$.choices[0].message.content"),
        ({"content": [{"type": "text", "text": 3}]}, "$.choices[0].message.content[0]"),
        ({"content": ["raw"]}, "$.choices[0].message.content[0]"),
        ({"content": None, "tool_calls": ["x"]}, "$.choices[0].message.tool_calls[0]"),
        ({"content": None, "tool_calls": [{"id": "", "function": {"name": "f"}}]},
         "$.choices[0].message.tool_calls[0].id"),
        ({"content": None, "tool_calls": [{"id": "a", "function": "f"}]},
         "$.choices[0].message.tool_calls[0].function"),
        ({"content": None, "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": 7}}]},
         "$.choices[0].message.tool_calls[0].function.arguments"),
        ({"content": "x", "reasoning_content": 1}, "$.choices[0].message.reasoning_content"),
        ({"content": "x", "annotations": {"a": 1}}, "$.choices[0].message.annotations"),
    ],
)
def test_a_malformed_message_field_is_a_named_error_with_its_path(message: dict[str, Any], path: str) -> None:
    with pytest.raises(OpenAICompatibleDecodeError) as caught:
        decode_response(_body(message), provider_name="gateway")
    assert caught.value.path == path and caught.value.provider_name == "gateway"


def test_a_body_that_is_not_an_object_is_a_named_error() -> None:
    with pytest.raises(OpenAICompatibleDecodeError) as caught:
        decode_response([1], provider_name="gateway")
    assert caught.value.path == "$" and caught.value.provider_name == "gateway"
