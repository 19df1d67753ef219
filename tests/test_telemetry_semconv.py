"""Recorded content follows the GenAI semantic conventions release zigai declares.

``tests/fixtures/semconv/genai-1.41.0.json`` is our transcription of that release's content
schemas and attribute names; every content attribute a run records must validate against it,
use only the release's named part types, and every ``gen_ai.*`` name must be in the release.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from zigai import Agent
from zigai.hooks import Correlation
from zigai.messages import BytesSource, ImageContent, TextContent, UrlSource
from zigai.telemetry import SEMCONV_VERSION, ContentPolicy, InMemoryExporter, Telemetry
from zigai.telemetry.content import render_bounded
from zigai.testing import DeltaThinking, DeltaToolCall, FunctionModel
from zigai.tool import Tool

SCHEMA = json.loads((Path(__file__).parent / "fixtures" / "semconv" / "genai-1.41.0.json").read_text())
PNG = b"\x89PNG\r\n\x1a\n"


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": SCHEMA["$defs"]})


def parts_of(document: Any) -> Iterator[dict[str, Any]]:
    for item in document:
        yield from item.get("parts", [item])


def stream(messages: Any, info: Any) -> Any:
    returns = [p for m in messages for p in m.parts if p.part_kind == "tool-return"]
    if not returns:
        yield DeltaThinking("Look it up.")
        yield DeltaToolCall(name="lookup", json_args='{"city": "Oslo"}', tool_call_id="call_1")
    else:
        yield "It is 3 degrees."


def run_with_telemetry(**telemetry: Any) -> InMemoryExporter:
    memory = InMemoryExporter()
    lookup = Tool.manual("lookup", "Look up the weather.",
                         {"type": "object", "properties": {"city": {"type": "string"}}},
                         lambda args: {"city": args["city"], "celsius": 3, "tags": ["cold"]})
    agent = Agent(FunctionModel(stream_function=stream), tools=[lookup], instructions="Be brief.",
                  name="weather-agent", hooks=[Telemetry(memory, **telemetry)])
    prompt = (TextContent("Weather in Oslo?"), ImageContent(BytesSource(PNG, "image/png")),
              ImageContent(UrlSource("https://images.example.org/oslo.jpg", "image/jpeg")))
    with agent.run_stream(prompt, correlation=Correlation(conversation_id="conv-42")) as run:
        list(run)
        assert run.result().output == "It is 3 degrees."
    return memory


def test_content_attributes_validate_against_the_declared_release() -> None:
    assert SEMCONV_VERSION == SCHEMA["version"]
    memory = run_with_telemetry(content=ContentPolicy(capture=True, max_chars=100_000), tool_definitions=True)
    chats = [s for s in memory.spans if s.name.startswith("chat ")]
    assert len(chats) == 2
    documents = []
    for chat in chats:
        for attribute, schema in (("gen_ai.input.messages", "InputMessages"),
                                  ("gen_ai.output.messages", "OutputMessages"),
                                  ("gen_ai.system_instructions", "SystemInstructions"),
                                  ("gen_ai.tool.definitions", "ToolDefinitions")):
            document = json.loads(str(chat.attributes[attribute]))
            validator(schema).validate(document)
            documents.append((attribute, document))
    agent_output = json.loads(str(memory.span("invoke_agent weather-agent").attributes["gen_ai.output.messages"]))
    validator("OutputMessages").validate(agent_output)
    assert agent_output == [{"role": "assistant", "parts": [{"type": "text", "content": "It is 3 degrees."}],
                             "finish_reason": "stop"}]
    for attribute, document in documents:
        if attribute != "gen_ai.tool.definitions":
            assert {p["type"] for p in parts_of(document)} <= set(SCHEMA["named_part_types"]), document

    first_in = json.loads(str(chats[0].attributes["gen_ai.input.messages"]))
    assert first_in == [{"role": "user", "parts": [
        {"type": "text", "content": "Weather in Oslo?"},
        {"type": "blob", "modality": "image", "mime_type": "image/png", "content": "iVBORw0KGgo="},
        {"type": "uri", "modality": "image", "mime_type": "image/jpeg", "uri": "https://images.example.org/oslo.jpg"}]}]
    first_out = json.loads(str(chats[0].attributes["gen_ai.output.messages"]))
    assert first_out == [{"role": "assistant", "finish_reason": "tool_call", "parts": [
        {"type": "reasoning", "content": "Look it up."},
        {"type": "tool_call", "id": "call_1", "name": "lookup", "arguments": {"city": "Oslo"}}]}]
    second_in = json.loads(str(chats[1].attributes["gen_ai.input.messages"]))
    assert second_in[-1] == {"role": "tool", "parts": [  # a structured result is kept, not dropped
        {"type": "tool_call_response", "id": "call_1", "response": {"city": "Oslo", "celsius": 3, "tags": ["cold"]}}]}
    assert json.loads(str(chats[0].attributes["gen_ai.system_instructions"])) == [
        {"type": "text", "content": "Be brief."}]
    assert json.loads(str(chats[0].attributes["gen_ai.tool.definitions"])) == [
        {"type": "function", "name": "lookup", "description": "Look up the weather.",
         "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]


def test_child_spans_carry_agent_and_conversation_and_names_are_the_releases() -> None:
    memory = run_with_telemetry()
    for span in memory.spans:
        assert span.attributes["gen_ai.agent.name"] == "weather-agent", span.name
        assert span.attributes["gen_ai.conversation.id"] == "conv-42", span.name
        assert not {"gen_ai.input.messages", "gen_ai.tool.definitions"} & set(span.attributes)  # both opt-in
        emitted = {name for name in span.attributes if name.startswith("gen_ai.")}
        assert emitted <= set(SCHEMA["attributes"]), emitted - set(SCHEMA["attributes"])
    for point in memory.metrics:
        assert {n for n in point.attributes if n.startswith("gen_ai.")} <= set(SCHEMA["attributes"])
    chat = [s for s in memory.spans if s.name.startswith("chat ")][0]
    assert chat.attributes["gen_ai.request.stream"] is True


def test_bounded_rendering_cuts_values_not_json() -> None:
    policy = ContentPolicy(capture=True, max_chars=80)
    messages = [{"role": "user", "parts": [{"type": "text", "content": "a" * 500}]},
                {"role": "user", "parts": [{"type": "text", "content": "b" * 500}]}]
    text = render_bounded(messages, policy)
    assert len(text) <= 80
    kept = json.loads(text)
    assert kept == [{"role": "user", "parts": [{"type": "text", "content": "b" * 16}]}]  # oldest dropped first
    roomy = render_bounded(messages, ContentPolicy(capture=True, max_chars=200))
    assert [m["parts"][0]["content"] for m in json.loads(roomy)] == ["a" * 25, "b" * 25]  # 200 -> 100 -> 50 -> 25
    assert len(roomy) <= 200
    assert render_bounded(messages, ContentPolicy(capture=True, max_chars=1)) == "[]"
    exact = json.dumps([{"type": "text", "content": "x"}], separators=(",", ":"))
    assert render_bounded([{"type": "text", "content": "x"}], ContentPolicy(capture=True, max_chars=len(exact))) == exact


@pytest.mark.parametrize("bad", [1, "yes"])
def test_tool_definitions_flag_is_checked(bad: Any) -> None:
    from zigai.telemetry import InvalidTelemetryConfig

    with pytest.raises(InvalidTelemetryConfig, match="tool_definitions must be a bool"):
        Telemetry(tool_definitions=bad)


def test_every_message_part_kind_maps_to_a_valid_shape() -> None:
    from zigai.messages import (
        AudioContent,
        CachePoint,
        CapabilityLoadCallPart,
        CapabilityLoadReturnPart,
        CompactionPart,
        DocumentContent,
        FilePart,
        FinishReason,
        InstructionPart,
        NativeToolCallPart,
        NativeToolReturnPart,
        ProviderFileSource,
        ProviderPart,
        RequestMessage,
        ResponseMessage,
        RetryPromptPart,
        SpeechPromptPart,
        SystemPromptPart,
        TaggedText,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UploadedFile,
        UploadedFileContent,
        UserPromptPart,
    )
    from zigai.telemetry.content import input_messages, output_messages, output_value_messages

    provider = ProviderPart("openai")
    request = RequestMessage(parts=(
        SystemPromptPart("sys"), InstructionPart("inst"),
        UserPromptPart((TaggedText("doc", "body"), UploadedFileContent(UploadedFile("openai", "file-1", "application/pdf")),
                        DocumentContent(ProviderFileSource("file-2", "text/plain")), CachePoint())),
        SpeechPromptPart(AudioContent(BytesSource(b"RIFF", "audio/wav"))),
        RetryPromptPart("fix the args", tool_name="lookup", tool_call_id="c1"), RetryPromptPart("try again"),
        ToolReturnPart("lookup", "c2", 7), CapabilityLoadReturnPart("c3", "maps", content="loaded")))
    response = ResponseMessage(parts=(
        TextPart("hi"), ToolCallPart("lookup", "not json", "c4"),
        NativeToolCallPart("web_search", "c5", provider, '{"q": "x"}'),
        NativeToolReturnPart("web_search", "c5", provider, {"hits": 1}),
        FilePart(UrlSource("https://images.example.org/a.png", "image/png")), CompactionPart("summary"),
        CapabilityLoadCallPart("maps", "c6")), finish_reason=FinishReason.other)
    document = input_messages((request, response))
    validator("InputMessages").validate(document)
    assert [m["role"] for m in document] == ["system", "user", "tool", "user", "tool", "assistant"]
    assert document[1]["parts"] == [
        {"type": "text", "content": "<doc>body</doc>"},
        {"type": "file", "modality": "document", "mime_type": "application/pdf", "file_id": "file-1"},
        {"type": "file", "modality": "document", "mime_type": "text/plain", "file_id": "file-2"},
        {"type": "cache_point"}, {"type": "speech_prompt"}]
    assert document[2]["parts"] == [{"type": "tool_call_response", "id": "c1", "response": "fix the args"}]
    assert document[3]["parts"] == [{"type": "text", "content": "try again"}]
    assert [p["response"] for p in document[4]["parts"]] == [7, "loaded"]
    assert [p["type"] for p in document[5]["parts"]] == [
        "text", "tool_call", "tool_call", "tool_call_response", "uri", "compaction", "tool_call"]
    assert document[5]["parts"][1]["arguments"] == "not json"  # kept as the model wrote it
    assert document[5]["parts"][6]["arguments"] == {"capability_id": "maps"}
    output = output_messages(response)
    validator("OutputMessages").validate(output)
    assert output[0]["finish_reason"] == "other"
    assert output_messages(ResponseMessage(parts=(TextPart("x"),)))[0]["finish_reason"] == "stop"
    structured = output_value_messages({"city": "Oslo", "tags": ("a",)})
    validator("OutputMessages").validate(structured)
    assert json.loads(structured[0]["parts"][0]["content"]) == {"city": "Oslo", "tags": ["a"]}


def test_ui_runs_name_their_chat_thread_as_the_conversation() -> None:
    import urllib.request

    from zigai.ui import LocalServer, ui_app

    memory = InMemoryExporter()
    agent = Agent(FunctionModel(stream_function=lambda messages, info: iter(["ok"])), name="ui-agent",
                  hooks=[Telemetry(memory)])
    body = {"threadId": "thread-7", "runId": "r1", "messages": [{"id": "u", "role": "user", "content": "hi"}]}
    app = ui_app(agent, "agui")
    with LocalServer(app) as server:
        request = urllib.request.Request(server.url + "/", json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert b"RUN_FINISHED" in response.read()
        assert app.wait("r1", 10)
    assert {s.attributes["gen_ai.conversation.id"] for s in memory.spans} == {"thread-7"}


def test_values_without_a_json_form_become_text_and_bare_tools_have_no_description() -> None:
    from datetime import date

    from zigai.model import ToolDefinition
    from zigai.telemetry.content import output_value_messages, tool_definitions

    (message,) = output_value_messages({"day": date(2026, 12, 5)})
    assert json.loads(message["parts"][0]["content"]) == {"day": "2026-12-05"}
    assert tool_definitions([ToolDefinition("ping")]) == [
        {"type": "function", "name": "ping", "parameters": {"type": "object", "properties": {}}}]


@pytest.mark.parametrize("bad", ["", "x" * 257, 7])
def test_conversation_ids_are_checked(bad: Any) -> None:
    with pytest.raises(ValueError, match="conversation_id"):
        Correlation(conversation_id=bad)
    assert Correlation(conversation_id="x" * 256).conversation_id == "x" * 256
