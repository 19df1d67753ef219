"""zigai.providers.google encoder: media blobs, request parts, replayed model parts, code execution."""

from __future__ import annotations

import base64

import pytest

from zigai.messages import (
    AudioContent,
    BinaryContent,
    BytesSource,
    CachePoint,
    CapabilityLoadReturnPart,
    DocumentContent,
    FilePart,
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
    TextPart,
    ThinkingPart,
    ToolAvailabilityPart,
    ToolCallPart,
    ToolOutcome,
    UploadedFile,
    UploadedFileContent,
    UrlSource,
    UserPromptPart,
    VideoContent,
)
from zigai.model import ManagedTool, ModelRequest, UnsupportedModelFeature
from zigai.providers import google as G

OURS = "gcp.gen_ai"


def _contents(*messages: object) -> list[dict]:
    return G.encode_contents(tuple(messages), OURS)[1]  # type: ignore[arg-type]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_user_media_become_inline_data_or_file_data() -> None:
    content = (
        TextContent("hi"), TaggedText("ctx", "n"),
        ImageContent(BytesSource(b"img", "image/png")),
        VideoContent(UrlSource("gs://bucket/v.mp4", media_type="video/mp4")),
        AudioContent(UrlSource("https://example.com/a.wav")),  # no media type: none is sent
        DocumentContent(ProviderFileSource("files/doc")),
        BinaryContent(b"\x00\x01", "application/octet-stream"),
        UploadedFileContent(UploadedFile(OURS, "files/up", "application/pdf")),
    )
    parts = _contents(RequestMessage(parts=(UserPromptPart(content),)))[0]["parts"]
    assert parts == [
        {"text": "hi"}, {"text": "<ctx>n</ctx>"},
        {"inlineData": {"mimeType": "image/png", "data": _b64(b"img")}},
        {"fileData": {"fileUri": "gs://bucket/v.mp4", "mimeType": "video/mp4"}},
        {"fileData": {"fileUri": "https://example.com/a.wav"}},
        {"fileData": {"fileUri": "files/doc"}},
        {"inlineData": {"mimeType": "application/octet-stream", "data": _b64(b"\x00\x01")}},
        {"fileData": {"fileUri": "files/up", "mimeType": "application/pdf"}},
    ]
    with pytest.raises(UnsupportedModelFeature, match="Gemini does not accept cache-point content"):
        _contents(RequestMessage(parts=(UserPromptPart((TextContent("a"), CachePoint())),)))


def test_request_parts_become_function_responses_text_and_audio() -> None:
    wav = BytesSource(b"RIFF", "audio/wav")
    message = RequestMessage(parts=(
        RetryPromptPart("bad args", tool_name="t", tool_call_id="c1"),
        RetryPromptPart("try again"),
        CapabilityLoadReturnPart("c2", "cap", loaded=("cap",), instructions=("Do A.", "Do B.")),
        CapabilityLoadReturnPart("c3", "cap", outcome=ToolOutcome.error, content="unknown"),
        SpeechPromptPart(AudioContent(wav), transcript="ignored: Gemini hears the audio"),
        ToolAvailabilityPart(added=("a",), removed=("b",)),
        ToolAvailabilityPart(removed=("c",)),
    ))
    assert _contents(message)[0]["parts"] == [
        {"functionResponse": {"name": "t", "response": {"error": "bad args"}, "id": "c1"}},
        {"text": "try again"},
        {"functionResponse": {"name": "load_capability", "response": {"result": ["Do A.", "Do B."]},
                              "id": "c2"}},
        {"functionResponse": {"name": "load_capability", "response": {"error": "unknown"}, "id": "c3"}},
        {"inlineData": {"mimeType": "audio/wav", "data": _b64(b"RIFF")}},
        {"text": "Tools now available: a. Tools no longer available: b."},
        {"text": "Tools no longer available: c."},
    ]


def test_model_parts_replay_own_thoughts_signatures_and_files() -> None:
    signed = ProviderPart(OURS, details=ProviderDetails({"thought_signature": "sig-1"}))
    response = ResponseMessage(parts=(
        ThinkingPart("plan", signature="sig-0", provider=ProviderPart(OURS)),
        ThinkingPart("plan", provider=ProviderPart(OURS)),
        ThinkingPart("theirs", provider=ProviderPart("openai")),
        ThinkingPart("unowned"),
        TextPart("", provider=signed),  # an empty text still carries its signature
        TextPart(""),  # ...but without one it is dropped
        FilePart(BytesSource(b"png", "image/png")),
    ))
    assert _contents(response) == [{"role": "model", "parts": [
        {"text": "plan", "thought": True, "thoughtSignature": "sig-0"},
        {"text": "plan", "thought": True},
        {"text": "", "thoughtSignature": "sig-1"},
        {"inlineData": {"mimeType": "image/png", "data": _b64(b"png")}},
    ]}]


def test_tool_call_arguments_must_be_a_json_object() -> None:
    with pytest.raises(G.GoogleEncodeError, match=r"messages\[0\]\.parts\[0\]: tool call arguments are not a JSON object"):
        _contents(ResponseMessage(parts=(ToolCallPart("t", "[1]", "c1"),)))


def test_code_execution_round_trips_and_keeps_only_real_ids() -> None:
    synthesized = ProviderPart(OURS, details=ProviderDetails({"synthesized_id": True}))
    response = ResponseMessage(parts=(
        NativeToolCallPart("code_execution", "x1", ProviderPart(OURS), args='{"code": "print(1)"}'),
        NativeToolReturnPart("code_execution", "x1", synthesized,
                             content={"outcome": "OUTCOME_OK", "output": "1\n"}),
        NativeToolReturnPart("code_execution", "x2", ProviderPart(OURS), content={"outcome": "OUTCOME_FAILED"}),
        NativeToolCallPart("code_execution", "x3", ProviderPart("openai"), args='{"code": "1"}'),
        NativeToolCallPart("web_search", "x4", ProviderPart(OURS)),
    ))
    assert _contents(response)[0]["parts"] == [
        {"executableCode": {"language": "PYTHON", "code": "print(1)", "id": "x1"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_FAILED", "id": "x2"}},
    ]


@pytest.mark.parametrize(("part", "message"), [
    (NativeToolCallPart("code_execution", "x", ProviderPart(OURS), args='{"code": 1}'),
     "code execution arguments need a string 'code'"),
    (NativeToolReturnPart("code_execution", "x", ProviderPart(OURS), content={"output": "1"}),
     "a code execution result needs a string 'outcome'"),
    (NativeToolReturnPart("code_execution", "x", ProviderPart(OURS), content="OK"),
     "a code execution result needs a string 'outcome'"),
])
def test_malformed_code_execution_parts_are_named(part: object, message: str) -> None:
    with pytest.raises(G.GoogleEncodeError, match=message):
        _contents(ResponseMessage(parts=(part,)))  # type: ignore[arg-type]


def test_managed_tools_map_to_gemini_tools_and_unknown_kinds_are_refused() -> None:
    request = ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=(
        ManagedTool("web_search"), ManagedTool("web_fetch"), ManagedTool("code_execution")))
    assert G.encode_request(request)["tools"] == [{"googleSearch": {}}, {"urlContext": {}},
                                                   {"codeExecution": {}}]
    with pytest.raises(UnsupportedModelFeature, match="Gemini has no tool_search tool"):
        G.encode_request(ModelRequest(messages=(RequestMessage.user("x"),),
                                      managed_tools=(ManagedTool("tool_search"),)))
