"""zigai.providers.openai_compatible encoder: every content kind, request part and option on the wire."""

from __future__ import annotations

import base64

import pytest

from zigai.messages import (
    AudioContent,
    BytesSource,
    CachePoint,
    CapabilityLoadCallPart,
    CapabilityLoadReturnPart,
    DocumentContent,
    ImageContent,
    InstructionPart,
    ProviderFileSource,
    ProviderPart,
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    SpeechPromptPart,
    TaggedText,
    TextContent,
    ThinkingPart,
    ToolAvailabilityPart,
    ToolOutcome,
    UploadedFile,
    UploadedFileContent,
    UrlSource,
    UserPromptPart,
    VideoContent,
)
from zigai.model import ModelRequest, OutputFormat, ToolDefinition, UnsupportedModelFeature
from zigai.providers import openai_compatible as oc
from zigai.settings import ModelSettings, UnsupportedModelSetting

WAV = BytesSource(b"RIFF", "audio/wav")


def _user(*content: object, provider_name: str | None = None) -> list[dict]:
    request = ModelRequest(messages=(RequestMessage(parts=(UserPromptPart(tuple(content)),)),))  # type: ignore[arg-type]
    return oc.encode_messages(request, provider_name=provider_name)[0]["content"]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_rich_user_content_parts() -> None:
    png = BytesSource(b"\x89PNG", "image/png")
    pdf = BytesSource(b"%PDF", "application/pdf")
    assert _user(
        TextContent("hi"), TaggedText("ctx", "n"), CachePoint(),  # cache points have no wire form
        ImageContent(UrlSource("https://example.com/a.png"), detail="low"),
        ImageContent(png),
        AudioContent(WAV), AudioContent(BytesSource(b"ID3", "audio/mpeg")),
        DocumentContent(pdf, title="spec.pdf"), DocumentContent(pdf),
        UploadedFileContent(UploadedFile("acme", "file-1")),
        DocumentContent(UploadedFile("acme", "file-2")),
        provider_name="acme",
    ) == [
        {"type": "text", "text": "hi"},
        {"type": "text", "text": "<ctx>n</ctx>"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + _b64(b"\x89PNG")}},
        {"type": "input_audio", "input_audio": {"data": _b64(b"RIFF"), "format": "wav"}},
        {"type": "input_audio", "input_audio": {"data": _b64(b"ID3"), "format": "mp3"}},
        {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{_b64(b'%PDF')}",
                                  "filename": "spec.pdf"}},
        {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{_b64(b'%PDF')}",
                                  "filename": "document"}},
        {"type": "file", "file": {"file_id": "file-1"}},
        {"type": "file", "file": {"file_id": "file-2"}},
    ]


@pytest.mark.parametrize(("item", "message"), [
    (ImageContent(ProviderFileSource("f")), "images need a URL or inline bytes"),
    (AudioContent(UrlSource("https://example.com/a.wav")), "audio needs inline wav or mp3 bytes"),
    (AudioContent(BytesSource(b"OggS", "audio/ogg")), "audio needs inline wav or mp3 bytes"),
    (DocumentContent(UrlSource("https://example.com/a.pdf")), "documents need inline bytes or a file id"),
    (VideoContent(UrlSource("https://example.com/a.mp4")), "cannot send 'video' content"),
    (UploadedFileContent(UploadedFile("other", "f")), "file uploaded to 'other' cannot be sent to 'acme'"),
])
def test_content_the_wire_cannot_carry_is_refused_by_name(item: object, message: str) -> None:
    with pytest.raises(UnsupportedModelFeature, match=message):
        _user(item, provider_name="acme")


def test_request_parts_become_tool_and_user_messages() -> None:
    message = RequestMessage(parts=(
        RetryPromptPart("bad args", tool_name="t", tool_call_id="c1"),
        RetryPromptPart("try again"),
        CapabilityLoadReturnPart("c2", "cap", loaded=("cap",), instructions=("Do A.",)),
        CapabilityLoadReturnPart("c3", "cap", outcome=ToolOutcome.error, content="unknown"),
        ToolAvailabilityPart(added=("a",), removed=("b", "c")),
        ToolAvailabilityPart(added=("d",)),
        InstructionPart("rendered elsewhere"),
    ))
    assert oc.encode_messages(ModelRequest(messages=(message,))) == [
        {"role": "tool", "tool_call_id": "c1", "content": "bad args"},
        {"role": "user", "content": "try again"},
        {"role": "tool", "tool_call_id": "c2",
         "content": '{"outcome":"success","loaded":["cap"],"instructions":["Do A."]}'},
        {"role": "tool", "tool_call_id": "c3",
         "content": '{"outcome":"error","loaded":[],"instructions":[],"content":"unknown"}'},
        {"role": "user", "content": "Tools now available: a. Tools no longer available: b, c."},
        {"role": "user", "content": "Tools now available: d."},
    ]
    with pytest.raises(UnsupportedModelFeature, match="cannot send speech prompts"):
        oc.encode_messages(ModelRequest(messages=(RequestMessage(parts=(
            SpeechPromptPart(AudioContent(WAV), transcript="x"),)),)))


def test_assistant_replay_capability_calls_and_own_reasoning_only() -> None:
    options = oc.ChatOptions(replay_reasoning_field="reasoning_content")
    response = ResponseMessage(parts=(
        ThinkingPart("mine", provider=ProviderPart("acme")),
        ThinkingPart("theirs", provider=ProviderPart("other")),
        ThinkingPart("unowned"),
        CapabilityLoadCallPart("cap", "c1"),
    ))
    request = ModelRequest(messages=(response,))
    assert oc.encode_messages(request, options, provider_name="acme") == [{
        "role": "assistant", "content": None, "reasoning_content": "mine",
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "load_capability", "arguments": '{"capability_id":"cap"}'}}],
    }]
    reasoning_only = ModelRequest(messages=(ResponseMessage(parts=(
        ThinkingPart("why", provider=ProviderPart("acme")),)),))
    # content must be a string when the turn carries reasoning and nothing else
    assert oc.encode_messages(reasoning_only, options, provider_name="acme") == [
        {"role": "assistant", "content": "", "reasoning_content": "why"}]
    # without the option reasoning is not replayed, and an empty turn is dropped
    assert oc.encode_messages(reasoning_only, provider_name="acme") == []


def test_chat_options_validate_their_dialect() -> None:
    with pytest.raises(ValueError, match="max_tokens_field must be 'max_tokens' or 'max_completion_tokens'"):
        oc.ChatOptions(max_tokens_field="max_output_tokens")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="system_role must be 'system' or 'developer'"):
        oc.ChatOptions(system_role="user")  # type: ignore[arg-type]
    assert oc.ChatOptions(reserved_keys={"provider"}).reserved_keys == frozenset({"provider"})  # type: ignore[arg-type]


WEATHER = ToolDefinition("weather", "Get weather.", {"type": "object"})
CLOCK = ToolDefinition("clock", "", {"type": "object"}, strict=True)


def test_allowed_tools_filters_declared_tools_and_names_undeclared_ones() -> None:
    request = ModelRequest(messages=(RequestMessage.user("x"),), tools=(WEATHER, CLOCK),
                           settings=ModelSettings(allowed_tools=("clock",), parallel_tool_calls=False,
                                                  tool_choice="required"))
    body = oc.encode_request(request, "m")
    assert body["tools"] == [{"type": "function", "function": {
        "name": "clock", "parameters": {"type": "object"}, "strict": True}}]
    assert (body["tool_choice"], body["parallel_tool_calls"]) == ("required", False)
    bad = ModelRequest(messages=(RequestMessage.user("x"),), tools=(WEATHER,),
                       settings=ModelSettings(allowed_tools=("nope", "zzz")))
    with pytest.raises(UnsupportedModelSetting, match="allowed_tools names undeclared tools: nope, zzz"):
        oc.encode_request(bad, "m")


def test_thinking_budget_is_refused_and_response_format_carries_schema_options() -> None:
    with pytest.raises(UnsupportedModelSetting, match="no thinking budget field"):
        oc.encode_request(ModelRequest(messages=(RequestMessage.user("x"),),
                                       settings=ModelSettings(thinking_budget_tokens=10)), "m")
    fmt = OutputFormat("json_schema", name="answer", schema={"type": "object"},
                       description="The answer.", strict=False)
    body = oc.encode_request(ModelRequest(messages=(RequestMessage.user("x"),), output_format=fmt,
                                          settings=ModelSettings(thinking="off")), "m")
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "answer", "schema": {"type": "object"}, "description": "The answer.", "strict": False}}
    assert "reasoning_effort" not in body  # "off" has no Chat Completions spelling
