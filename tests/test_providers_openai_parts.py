"""zigai.providers.openai.encode: the request parts and options the main adapter tests leave
out — capability loads, spoken prompts, tool availability notices, provider file ids — and
the portable web_search tool's option checks, each as the exact Responses wire item."""

from __future__ import annotations

from typing import Any

import pytest

from zigai.messages import (
    AudioContent,
    BytesSource,
    CapabilityLoadCallPart,
    CapabilityLoadReturnPart,
    DocumentContent,
    ImageContent,
    ProviderFileSource,
    RequestMessage,
    ResponseMessage,
    SpeechPromptPart,
    ToolAvailabilityPart,
    ToolOutcome,
    UserPromptPart,
)
from zigai.model import ManagedTool, ModelRequest, ToolDefinition
from zigai.providers.openai import EncodeOptions, OpenAIEncodeError, encode_request
from zigai.settings import ModelSettings


def _input(*messages: Any) -> list[dict[str, Any]]:
    return encode_request(ModelRequest(messages=messages), "gpt-4o")["input"]


def test_capability_loads_travel_as_function_call_traffic() -> None:
    call = ResponseMessage(parts=(CapabilityLoadCallPart("billing", "call_1"),))
    loaded = RequestMessage(parts=(CapabilityLoadReturnPart("call_1", "billing", loaded=("billing",),
                                                            instructions=("Bill in EUR.",)),))
    failed = RequestMessage(parts=(CapabilityLoadReturnPart("call_2", "x", outcome=ToolOutcome.error,
                                                            content="unknown capability"),))
    bare = RequestMessage(parts=(CapabilityLoadReturnPart("call_3", "y", outcome=ToolOutcome.error),))
    assert _input(call, loaded, failed, bare) == [
        {"type": "function_call", "call_id": "call_1", "name": "load_capability",
         "arguments": '{"capability_id":"billing"}'},
        {"type": "function_call_output", "call_id": "call_1",
         "output": '{"loaded":["billing"],"instructions":["Bill in EUR."]}'},
        {"type": "function_call_output", "call_id": "call_2", "output": "unknown capability"},
        {"type": "function_call_output", "call_id": "call_3", "output": "error"},
    ]


def test_spoken_prompts_send_their_transcript_and_availability_notices_are_user_text() -> None:
    audio = AudioContent(BytesSource(b"RIFF", "audio/wav"))
    items = _input(RequestMessage(parts=(
        SpeechPromptPart(audio, transcript="what time is it"),
        ToolAvailabilityPart(added=("clock",), removed=("calendar",)),
    )))
    assert items == [
        {"type": "message", "role": "user", "content": "what time is it"},
        {"type": "message", "role": "user",
         "content": "Tools now available: clock\nTools no longer available: calendar"},
    ]
    with pytest.raises(OpenAIEncodeError, match="audio input"):
        _input(RequestMessage(parts=(SpeechPromptPart(audio),)))


def test_provider_file_ids_are_sent_as_file_ids() -> None:
    prompt = UserPromptPart((ImageContent(ProviderFileSource("file-img"), detail="low"),
                             DocumentContent(ProviderFileSource("file-doc"))))
    (item,) = _input(RequestMessage(parts=(prompt,)))
    assert item["content"] == [{"type": "input_image", "file_id": "file-img", "detail": "low"},
                               {"type": "input_file", "file_id": "file-doc"}]


def test_web_search_options_and_kinds_are_checked() -> None:
    def tools(*managed: ManagedTool) -> Any:
        return encode_request(ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=managed),
                              "gpt-4o").get("tools")

    located = {"type": "approximate", "country": "ES"}
    assert tools(ManagedTool("web_search", {"user_location": located})) == [
        {"type": "web_search", "user_location": located}]
    with pytest.raises(OpenAIEncodeError, match="unknown web_search options: max_uses"):
        tools(ManagedTool("web_search", {"max_uses": 2}))
    with pytest.raises(OpenAIEncodeError, match="no web_fetch tool"):
        tools(ManagedTool("web_fetch"))


def test_option_and_setting_combinations_the_api_refuses() -> None:
    with pytest.raises(OpenAIEncodeError, match="reasoning_summary"):
        EncodeOptions(reasoning_summary="verbose")
    weather = ToolDefinition("weather", "", {"type": "object"})
    with pytest.raises(OpenAIEncodeError, match="tool_choice 'none'"):
        encode_request(ModelRequest(messages=(RequestMessage.user("x"),), tools=(weather,),
                                    settings=ModelSettings(allowed_tools=("weather",), tool_choice="none")),
                       "gpt-4o")


def test_assistant_speech_replays_its_transcript_and_generated_files_are_refused() -> None:
    from zigai.messages import CachePoint, FilePart, InstructionPart, SpeechPart, ToolReturnPart

    audio = AudioContent(BytesSource(b"RIFF", "audio/wav"))
    items = _input(
        RequestMessage(parts=(InstructionPart("be brief"), UserPromptPart((CachePoint(),)),
                              ToolReturnPart("clock", "call_9", "12:00"))),
        ResponseMessage(parts=(SpeechPart(audio, transcript="It is noon."),)),
    )
    assert items == [
        {"type": "function_call_output", "call_id": "call_9", "output": "12:00"},
        {"type": "message", "role": "assistant", "content": "It is noon."},
    ]
    with pytest.raises(OpenAIEncodeError, match="without a transcript"):
        _input(ResponseMessage(parts=(SpeechPart(audio),)))
    with pytest.raises(OpenAIEncodeError, match="a file part cannot be replayed"):
        _input(ResponseMessage(parts=(FilePart(BytesSource(b"png", "image/png")),)))
