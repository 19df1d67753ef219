"""The message contract: every kind constructs, wrong roles and types are unconstructible."""

from __future__ import annotations

import dataclasses
import math
import pickle
from datetime import datetime, timedelta, timezone

import pytest
from _message_samples import (
    all_request_parts,
    all_response_parts,
    all_sources,
    all_user_content,
    every_kind_history,
)

from zigai import messages as m
from zigai.errors import MessageError
from zigai.usage import RequestUsage

REQUEST_KINDS = {
    "system-prompt", "user-prompt", "retry-prompt", "instruction", "speech-prompt",
    "tool-availability", "tool-return", "capability-load-return",
}
RESPONSE_KINDS = {
    "text", "thinking", "compaction", "file", "speech", "tool-call", "native-tool-call",
    "native-tool-return", "tool-search-call", "tool-search-return", "capability-load-call",
}
CONTENT_KINDS = {
    "text", "tagged-text", "image", "audio", "video", "document", "binary", "uploaded-file",
    "cache-point",
}


def test_samples_cover_every_part_content_and_source_kind() -> None:
    assert {p.part_kind for p in all_request_parts()} == REQUEST_KINDS
    assert {p.part_kind for p in all_response_parts()} == RESPONSE_KINDS
    assert {c.kind for c in all_user_content()} == CONTENT_KINDS
    assert {s.kind for s in all_sources()} == {"bytes", "url", "provider-file", "uploaded-file"}
    assert {t.__name__ for t in m.REQUEST_PART_TYPES} == {
        type(p).__name__ for p in all_request_parts()}
    assert {t.__name__ for t in m.RESPONSE_PART_TYPES} == {
        type(p).__name__ for p in all_response_parts()}


def test_every_value_is_frozen_hashable_and_pickles() -> None:
    for value in [*all_request_parts(), *all_response_parts(), *all_user_content(),
                  *every_kind_history()]:
        assert dataclasses.is_dataclass(value)
        assert not hasattr(value, "__dict__")  # slotted
        first = dataclasses.fields(value)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, first, getattr(value, first))
        assert hash(value) == hash(pickle.loads(pickle.dumps(value)))
        assert pickle.loads(pickle.dumps(value)) == value


@pytest.mark.parametrize("part", all_response_parts(), ids=lambda p: p.part_kind)
def test_response_part_in_a_request_is_rejected_by_name(part: m.ResponsePart) -> None:
    with pytest.raises(m.InvalidMessagePart, match=type(part).__name__):
        m.RequestMessage([m.user_prompt("hi"), part])  # type: ignore[list-item]


@pytest.mark.parametrize("part", all_request_parts(), ids=lambda p: p.part_kind)
def test_request_part_in_a_response_is_rejected_by_name(part: m.RequestPart) -> None:
    with pytest.raises(m.InvalidMessagePart, match=type(part).__name__):
        m.ResponseMessage([part])  # type: ignore[list-item]


@pytest.mark.parametrize("content", all_user_content(), ids=lambda c: c.kind)
def test_user_content_is_not_a_part_of_either_side(content: m.UserContent) -> None:
    with pytest.raises(m.InvalidMessagePart, match="must be a request part"):
        m.RequestMessage([content])  # type: ignore[list-item]
    with pytest.raises(m.InvalidMessagePart, match="must be a response part"):
        m.ResponseMessage([content])  # type: ignore[list-item]


def test_parts_are_normalized_to_tuples() -> None:
    request = m.RequestMessage([m.system_prompt("s"), m.user_prompt("u")])
    assert isinstance(request.parts, tuple)
    prompt = m.UserPromptPart([m.TextContent("a"), m.CachePoint()])  # type: ignore[arg-type]
    assert prompt.content == (m.TextContent("a"), m.CachePoint())
    assert m.ToolAvailabilityPart(added=["a"]).added == ("a",)  # type: ignore[arg-type]


def test_empty_request_is_rejected_but_empty_response_is_representable() -> None:
    with pytest.raises(m.InvalidMessagePart, match="must not be empty"):
        m.RequestMessage(())
    assert m.ResponseMessage(()).parts == ()


def test_kind_tags_cannot_be_overridden() -> None:
    with pytest.raises(m.InvalidMessagePart):
        m.RequestMessage([m.user_prompt("x")], kind="response")  # type: ignore[arg-type]
    with pytest.raises(m.InvalidMessagePart):
        m.TextPart("x", part_kind="thinking")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "build",
    [
        lambda: m.ToolCallPart("", "{}", "c1"),
        lambda: m.ToolCallPart("f", "{}", ""),
        lambda: m.ToolCallPart("f", 3, "c1"),
        lambda: m.ToolReturnPart("", "c1", "x"),
        lambda: m.ToolReturnPart("f", "", "x"),
        lambda: m.ToolReturnPart("f", "c1", {1: "x"}),
        lambda: m.ToolReturnPart("f", "c1", float("nan")),
        lambda: m.ToolReturnPart("f", "c1", object()),
        lambda: m.ToolReturnPart("f", "c1", "x", outcome="exploded"),
        lambda: m.NativeToolCallPart("web_search", "c1", None),
        lambda: m.NativeToolCallPart("web_search", "c1", m.ProviderPart("")),
        lambda: m.NativeToolReturnPart("web_search", "c1", "openai"),
        lambda: m.ProviderPart("openai", id=""),
        lambda: m.ProviderPart("openai", details={"a": 1}),
        lambda: m.UploadedFile("", "f"),
        lambda: m.UploadedFile("openai", ""),
        lambda: m.UploadedFile("openai", "f", media_type="pdf"),
        lambda: m.BytesSource("text", "image/png"),
        lambda: m.BytesSource(b"x", ""),
        lambda: m.UrlSource(""),
        lambda: m.ProviderFileSource(""),
        lambda: m.ImageContent("https://example.com/x.png"),
        lambda: m.ImageContent(m.TextContent("x")),
        lambda: m.TaggedText("", "x"),
        lambda: m.TextContent(None),
        lambda: m.UploadedFileContent(m.ProviderFileSource("f")),
        lambda: m.CachePoint(ttl=""),
        lambda: m.UserPromptPart(()),
        lambda: m.UserPromptPart((m.TextPart("x"),)),
        lambda: m.UserPromptPart(b"bytes"),
        lambda: m.SystemPromptPart(None),
        lambda: m.SpeechPromptPart(m.BytesSource(b"x", "audio/wav")),
        lambda: m.SpeechPart(),
        lambda: m.ToolAvailabilityPart(),
        lambda: m.ToolAvailabilityPart(added=("a",), removed=("a",)),
        lambda: m.ToolAvailabilityPart(added=("",)),
        lambda: m.ToolAvailabilityPart(added="abc"),
        lambda: m.CapabilityLoadReturnPart("c1", ""),
        lambda: m.CapabilityLoadReturnPart("c1", "x", outcome="error", loaded=("x",)),
        lambda: m.CapabilityLoadCallPart("", "c1"),
        lambda: m.ToolSearchCallPart(""),
        lambda: m.ToolSearchReturnPart("t1", tool_names=(1,)),
        lambda: m.FilePart(b"raw"),
        lambda: m.InstructionPart("x", dynamic="yes"),
        lambda: m.RequestMessage([m.user_prompt("x")], metadata={"a": 1}),
        lambda: m.RequestMessage("hello"),
        lambda: m.ResponseMessage([], usage={"input_tokens": 1}),
        lambda: m.ResponseMessage([], finish_reason="done"),
        lambda: m.ResponseMessage([], provider_details=m.Metadata.from_value({})),
        lambda: m.ResponseMessage([], model_name=""),
        lambda: m.SystemPromptPart("x", timestamp=datetime(2025, 1, 1)),
        lambda: m.SystemPromptPart("x", timestamp="2025-01-01T00:00:00Z"),
    ],
)
def test_invalid_construction_raises_invalid_message_part(build: object) -> None:
    with pytest.raises(m.InvalidMessagePart):
        build()  # type: ignore[operator]


def test_error_classes_sit_under_message_error() -> None:
    assert issubclass(m.InvalidMessagePart, MessageError)
    assert issubclass(m.InvalidProviderDetails, MessageError)


def test_timestamps_are_normalized_to_utc() -> None:
    local = datetime(2025, 1, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    part = m.SystemPromptPart("x", timestamp=local)
    assert part.timestamp == local
    assert part.timestamp is not None and part.timestamp.utcoffset() == timedelta(0)


def test_finish_reason_and_outcome_accept_their_string_values() -> None:
    response = m.ResponseMessage([], finish_reason="content_filter")
    assert response.finish_reason is m.FinishReason.content_filter
    assert [r.value for r in m.FinishReason] == [
        "stop", "length", "content_filter", "tool_call", "error", "other"]
    assert m.ToolReturnPart("f", "c", outcome="error").outcome is m.ToolOutcome.error


def test_short_constructors() -> None:
    assert m.system_prompt("s") == m.SystemPromptPart("s")
    assert m.user_prompt("u") == m.UserPromptPart("u")
    assert m.user_prompt([m.TextContent("u")]) == m.UserPromptPart((m.TextContent("u"),))
    assert m.retry_prompt("r", tool_name="t", tool_call_id="c") == m.RetryPromptPart(
        "r", tool_name="t", tool_call_id="c")
    assert m.text("t") == m.TextPart("t")
    assert m.RequestMessage.user("hi", instructions="i") == m.RequestMessage(
        (m.UserPromptPart("hi"),), instructions="i")
    assert m.RequestMessage.system_and_user("s", "u").parts == (
        m.SystemPromptPart("s"), m.UserPromptPart("u"))
    response = m.ResponseMessage.from_text("hello", model_name="m1")
    assert response.text == "hello" and response.model_name == "m1"
    assert response.usage == RequestUsage()


def test_tool_return_content_is_deep_frozen_and_detached_from_the_input() -> None:
    payload = {"items": [1, {"x": "y"}]}
    part = m.ToolReturnPart("f", "c", payload)
    payload["items"].append(2)  # type: ignore[attr-defined]
    assert part.content == {"items": (1, {"x": "y"})}
    assert isinstance(part.content, m.FrozenDict)
    with pytest.raises(TypeError):
        part.content["items"] = 3  # type: ignore[index]
    with pytest.raises(AttributeError):
        part.content.append(1)  # type: ignore[union-attr]


def test_tool_call_args_keep_raw_text_and_accept_a_mapping() -> None:
    raw = m.ToolCallPart("f", '{"b": 1, "a": 2}', "c")
    assert raw.args == '{"b": 1, "a": 2}'
    from_dict = m.ToolCallPart("f", {"b": 1, "a": 2}, "c")  # type: ignore[arg-type]
    assert from_dict.args == '{"a":2,"b":1}'
    assert m.ToolCallPart("f", "not json", "c").args == "not json"  # kept for the tool layer


def test_native_tool_parts_expose_their_provider_name() -> None:
    call = m.NativeToolCallPart("code_execution", "c", m.ProviderPart("anthropic"))
    assert call.provider_name == "anthropic"
    assert call.args == "{}"


class TestProviderDetails:
    def test_from_value_deep_copies_and_to_value_returns_fresh_copies(self) -> None:
        source = {"a": [1, {"b": "c"}], "n": None, "f": 1.5, "t": True}
        details = m.ProviderDetails.from_value(source)
        source["a"].append(9)  # type: ignore[attr-defined]
        out = details.to_value()
        assert out == {"a": [1, {"b": "c"}], "n": None, "f": 1.5, "t": True}
        out["a"].append(7)
        assert details.to_value() == {"a": [1, {"b": "c"}], "n": None, "f": 1.5, "t": True}

    @pytest.mark.parametrize(
        "bad",
        [
            {"x": math.nan},
            {"x": math.inf},
            {"x": -math.inf},
            {1: "non-str key"},
            {"x": {("tuple",): 1}},
            {"x": {1, 2}},
            {"x": frozenset()},
            {"x": b"bytes"},
            {"x": object()},
            {"x": datetime(2025, 1, 1)},
            {"x": [1, [2, {"y": math.nan}]]},
        ],
    )
    def test_rejects_non_json(self, bad: dict[object, object]) -> None:
        with pytest.raises(m.InvalidProviderDetails):
            m.ProviderDetails.from_value(bad)  # type: ignore[arg-type]
        with pytest.raises(m.InvalidProviderDetails):
            m.Metadata.from_value(bad)  # type: ignore[arg-type]

    @pytest.mark.parametrize("bad", [[1, 2], "text", 3, None])
    def test_top_level_must_be_an_object(self, bad: object) -> None:
        with pytest.raises(m.InvalidProviderDetails, match="JSON object"):
            m.ProviderDetails.from_value(bad)  # type: ignore[arg-type]

    def test_cycles_are_rejected(self) -> None:
        cyclic: dict[str, object] = {}
        cyclic["self"] = cyclic
        with pytest.raises(m.InvalidProviderDetails, match="nesting"):
            m.ProviderDetails.from_value(cyclic)

    def test_is_immutable(self) -> None:
        details = m.ProviderDetails.from_value({"a": {"b": [1]}})
        with pytest.raises(TypeError):
            details["a"] = 1  # type: ignore[index]
        with pytest.raises(TypeError):
            details["a"]["b"] = 2
        with pytest.raises(AttributeError):
            details._root = None  # type: ignore[misc]
        assert details["a"]["b"] == (1,)

    def test_equality_and_hash_follow_canonical_json(self) -> None:
        one = m.ProviderDetails.from_value({"b": 1, "a": [1, 2]})
        two = m.ProviderDetails.from_value({"a": [1, 2], "b": 1})
        assert one == two and hash(one) == hash(two)
        assert one.to_json() == '{"a":[1,2],"b":1}'
        assert one != m.ProviderDetails.from_value({"a": [2, 1], "b": 1})
        assert one != m.Metadata.from_value({"b": 1, "a": [1, 2]})  # separate types
        assert pickle.loads(pickle.dumps(one)) == one

    def test_unicode_and_unknown_fields_are_preserved(self) -> None:
        value = {"weird-key with space": {"é": "☃"}, "": 0}
        assert m.ProviderDetails.from_value(value).to_value() == value
