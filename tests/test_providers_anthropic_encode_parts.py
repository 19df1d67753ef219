"""zigai.providers.anthropic encoder: every request/response part and media source on the wire."""

from __future__ import annotations

import base64

import pytest

from zigai.messages import (
    AudioContent,
    BytesSource,
    CachePoint,
    CapabilityLoadReturnPart,
    DocumentContent,
    ImageContent,
    NativeToolCallPart,
    NativeToolReturnPart,
    ProviderDetails,
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
    ToolCallPart,
    ToolOutcome,
    ToolReturnPart,
    UploadedFile,
    UploadedFileContent,
    UrlSource,
    UserPromptPart,
)
from zigai.model import (
    ManagedTool,
    ModelRequest,
    OutputFormat,
    ToolDefinition,
    UnsupportedModelFeature,
)
from zigai.providers import anthropic as A
from zigai.settings import ModelSettings

OURS = ProviderPart("anthropic")


def _user_blocks(*content: object) -> list[dict]:
    message = RequestMessage(parts=(UserPromptPart(tuple(content)),))  # type: ignore[arg-type]
    return A.encode_messages((message,))[1][0]["content"]


def _encode(request: ModelRequest) -> dict:
    return A.encode_request(request, model_name="claude-x", max_tokens=64)


def test_rich_user_content_maps_to_text_image_and_document_blocks() -> None:
    pdf = BytesSource(b"%PDF-1", "application/pdf")
    blocks = _user_blocks(
        TextContent("hi"), TextContent(""), TaggedText("ctx", "notes"),
        ImageContent(UrlSource("https://example.com/a.png")),
        DocumentContent(pdf, title="Spec"),
        DocumentContent(BytesSource("añb".encode(), "text/plain")),
    )
    assert blocks == [
        {"type": "text", "text": "hi"},  # the empty text item is dropped
        {"type": "text", "text": "<ctx>notes</ctx>"},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
        {"type": "document", "title": "Spec",
         "source": {"type": "base64", "media_type": "application/pdf",
                    "data": base64.b64encode(b"%PDF-1").decode()}},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "añb"}},
    ]


def test_uploaded_files_become_file_blocks_and_need_the_files_beta() -> None:
    image = UploadedFileContent(UploadedFile("anthropic", "file_img", "image/png"))
    doc = UploadedFileContent(UploadedFile("anthropic", "file_doc"))
    legacy = ImageContent(ProviderFileSource("file_legacy"))
    assert _user_blocks(image, doc, legacy) == [
        {"type": "image", "source": {"type": "file", "file_id": "file_img"}},
        {"type": "document", "source": {"type": "file", "file_id": "file_doc"}},
        {"type": "image", "source": {"type": "file", "file_id": "file_legacy"}},
    ]
    request = ModelRequest(messages=(RequestMessage(parts=(UserPromptPart((image, doc)),)),))
    assert A.beta_features(request) == ("files-api-2025-04-14",)  # named once for two files
    assert A.beta_features(ModelRequest(messages=(RequestMessage.user("x"),))) == ()


def test_a_file_owned_by_another_provider_is_refused_with_its_path() -> None:
    foreign = UploadedFileContent(UploadedFile("openai", "file-abc", "application/pdf"))
    with pytest.raises(A.AnthropicEncodeError, match=r"content\[0\]: file 'file-abc' belongs to 'openai'"):
        _user_blocks(foreign)


def test_cache_point_marks_the_previous_block_and_cannot_come_first() -> None:
    assert _user_blocks(TextContent("a"), CachePoint(ttl="1h"), TextContent("b"), CachePoint()) == [
        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
        {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}},
    ]
    with pytest.raises(A.AnthropicEncodeError, match="a cache point must follow content"):
        _user_blocks(CachePoint())


def test_audio_content_is_an_unsupported_feature() -> None:
    with pytest.raises(UnsupportedModelFeature, match="Anthropic does not accept audio content"):
        _user_blocks(AudioContent(BytesSource(b"RIFF", "audio/wav")))


def test_request_parts_tool_results_retries_capabilities_speech_and_availability() -> None:
    audio = AudioContent(BytesSource(b"RIFF", "audio/wav"))
    message = RequestMessage(parts=(
        ToolReturnPart("t", "c1", {"ok": True}),
        ToolReturnPart("t", "c2", "boom", outcome=ToolOutcome.error),
        RetryPromptPart("bad args", tool_name="t", tool_call_id="c3"),
        RetryPromptPart("answer again"),
        CapabilityLoadReturnPart("c4", "cap", loaded=("cap",), instructions=("Do A.", "Do B.")),
        CapabilityLoadReturnPart("c5", "cap", outcome=ToolOutcome.error, content="unknown cap"),
        CapabilityLoadReturnPart("c6", "cap"),
        SpeechPromptPart(audio, transcript="spoken words"),
        SpeechPromptPart(audio, transcript=""),
        ToolAvailabilityPart(added=("a", "b"), removed=("c",)),
        ToolAvailabilityPart(removed=("d",)),
    ))
    assert A.encode_messages((message,))[1] == [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c1", "content": '{"ok":true}'},
        {"type": "tool_result", "tool_use_id": "c2", "content": "boom", "is_error": True},
        {"type": "tool_result", "tool_use_id": "c3", "content": "bad args", "is_error": True},
        {"type": "text", "text": "answer again"},
        {"type": "tool_result", "tool_use_id": "c4", "content": "Do A.\n\nDo B."},
        {"type": "tool_result", "tool_use_id": "c5", "content": "unknown cap", "is_error": True},
        {"type": "tool_result", "tool_use_id": "c6", "content": "loaded"},
        {"type": "text", "text": "spoken words"},
        {"type": "text", "text": "Tools now available: a, b. Tools no longer available: c."},
        {"type": "text", "text": "Tools no longer available: d."},
    ]}]


def test_speech_without_a_transcript_is_an_unsupported_feature() -> None:
    audio = AudioContent(BytesSource(b"RIFF", "audio/wav"))
    with pytest.raises(UnsupportedModelFeature, match="audio"):
        A.encode_messages((RequestMessage(parts=(SpeechPromptPart(audio),)),))


def test_response_replay_keeps_only_anthropic_thinking_and_server_tools() -> None:
    theirs = ProviderPart("openai")
    result_type = ProviderPart("anthropic", details=ProviderDetails({"type": "web_search_tool_result"}))
    response = ResponseMessage(parts=(
        ThinkingPart("mine", signature="sig", provider=OURS),
        ThinkingPart("unsigned", provider=OURS),  # no signature: cannot be replayed
        ThinkingPart("theirs", signature="sig", provider=theirs),
        NativeToolCallPart("web_search", "s1", OURS, args='{"query": "zig"}'),
        NativeToolCallPart("web_search", "s2", theirs),
        NativeToolReturnPart("web_search", "s1", result_type, content=[{"url": "u"}]),
        NativeToolReturnPart("code_execution", "s3", OURS, content={"stdout": "1"}),
        NativeToolReturnPart("web_search", "s2", theirs),
        ToolCallPart("weather", "  ", "c1"),
    ))
    assert A.encode_messages((response,))[1][0]["content"] == [
        {"type": "thinking", "thinking": "mine", "signature": "sig"},
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "zig"}},
        {"type": "web_search_tool_result", "tool_use_id": "s1", "content": [{"url": "u"}]},
        {"type": "code_execution_tool_result", "tool_use_id": "s3", "content": {"stdout": "1"}},
        {"type": "tool_use", "id": "c1", "name": "weather", "input": {}},  # blank args are {}
    ]


@pytest.mark.parametrize(("args", "message"), [
    ("[1, 2]", "tool call arguments must be a JSON object"),
    ("{not json", "tool call arguments are not a JSON object"),
])
def test_tool_call_arguments_must_be_a_json_object(args: str, message: str) -> None:
    response = ResponseMessage(parts=(ToolCallPart("weather", args, "c1"),))
    with pytest.raises(A.AnthropicEncodeError, match=rf"messages\[0\]\.parts\[0\]: {message}"):
        A.encode_messages((response,))


def test_adjacent_turns_of_one_role_merge_and_empty_turns_vanish() -> None:
    messages = (RequestMessage.user("a"), RequestMessage.user("b"),
                ResponseMessage(parts=(ThinkingPart("x", provider=ProviderPart("openai")),)),
                RequestMessage.user("c"))
    assert A.encode_messages(messages)[1] == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"},
                                     {"type": "text", "text": "c"}]},
    ]


WEATHER = ToolDefinition("weather", "Get weather.", {"type": "object"})
CLOCK = ToolDefinition("clock", "", {"type": "object"})


@pytest.mark.parametrize(("settings", "choice"), [
    (ModelSettings(tool_choice="none"), {"type": "none"}),
    (ModelSettings(tool_choice="required"), {"type": "any"}),
    (ModelSettings(parallel_tool_calls=False), {"type": "auto", "disable_parallel_tool_use": True}),
    (ModelSettings(tool_choice="none", parallel_tool_calls=False), {"type": "none"}),
])
def test_tool_choice_with_two_tools(settings: ModelSettings, choice: dict) -> None:
    body = _encode(ModelRequest(messages=(RequestMessage.user("x"),), tools=(WEATHER, CLOCK),
                                settings=settings))
    assert body["tool_choice"] == choice
    assert body["tools"][1] == {"name": "clock", "input_schema": {"type": "object"}}  # no description


def test_managed_tools_web_fetch_needs_its_beta_and_config_cannot_rename_it() -> None:
    fetch = ManagedTool("web_fetch", {"max_uses": 2})
    request = ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=(fetch,))
    assert _encode(request)["tools"] == [{"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 2}]
    assert A.beta_features(request) == ("web-fetch-2025-09-10",)
    clash = ModelRequest(messages=(RequestMessage.user("x"),),
                         managed_tools=(ManagedTool("web_search", {"name": "x", "type": "y"}),))
    with pytest.raises(A.AnthropicEncodeError, match="managed tool config may not set name, type"):
        _encode(clash)
    with pytest.raises(UnsupportedModelFeature, match="Anthropic has no image_generation server tool"):
        _encode(ModelRequest(messages=(RequestMessage.user("x"),),
                             managed_tools=(ManagedTool("image_generation"),)))


def test_sampling_thinking_and_output_settings_on_the_wire() -> None:
    settings = ModelSettings(top_p=0.5, top_k=7, stop_sequences=("END",), thinking_budget_tokens=0,
                             service_tier="auto")
    body = _encode(ModelRequest(messages=(RequestMessage.user("x"),), settings=settings))
    assert (body["top_p"], body["top_k"], body["stop_sequences"]) == (0.5, 7, ["END"])
    assert body["thinking"] == {"type": "disabled"}
    assert body["service_tier"] == "auto"
    budget = _encode(ModelRequest(messages=(RequestMessage.user("x"),),
                                  settings=ModelSettings(thinking_budget_tokens=1024)))
    assert budget["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    effort = _encode(ModelRequest(messages=(RequestMessage.user("x"),),
                                  settings=ModelSettings(thinking="high"),
                                  output_format=OutputFormat("json_schema", name="answer", schema={"type": "object"})))
    assert effort["output_config"] == {"effort": "high",
                                       "format": {"type": "json_schema", "schema": {"type": "object"}}}
    assert "thinking" not in effort
    with pytest.raises(UnsupportedModelFeature, match="no JSON-object output mode"):
        _encode(ModelRequest(messages=(RequestMessage.user("x"),), output_format=OutputFormat("json_object")))
