"""PydanticAI history <-> zigai messages: lossless both ways, or a named refusal.

Histories come from the real library: the committed golden fixtures (written by
scripts/gen_pydantic_ai_fixtures.py) and live runs of ``pydantic_ai.Agent`` with its own
``FunctionModel`` / ``TestModel`` (tools, retries, structured output, streaming, multimodal
prompts), dumped with ``ModelMessagesTypeAdapter``.  What zigai writes is read back by the
same adapter, and a converted zigai history is replayed as ``message_history`` to a real
agent run.
"""

from __future__ import annotations

import asyncio
import json
import pickle
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from zigai import messages as zm
from zigai.codecs import pydantic_ai as codec
from zigai.codecs.pydantic_ai import (
    InvalidPydanticAiMessages,
    UnconvertiblePydanticAiMessages,
    from_zigai,
    to_zigai,
)
from zigai.errors import CodecError
from zigai.usage import RequestUsage, UsageDetails

pai = pytest.importorskip(
    "pydantic_ai.messages",
    reason="pydantic-ai-slim==2.31.0 is the peer these tests talk to: pip install -e '.[dev]'",
)
from pydantic import BaseModel  # noqa: E402  (pydantic comes with the peer)
from pydantic_ai import Agent, ModelRetry  # noqa: E402
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402

ADAPTER = pai.ModelMessagesTypeAdapter
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pydantic_ai"
T0 = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
T1 = datetime(2026, 1, 2, 3, 4, 6, tzinfo=UTC)
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"


def _dump(messages: Any) -> list[Any]:
    """The library's own JSON of its message objects, decoded."""
    value: list[Any] = json.loads(ADAPTER.dump_json(messages))
    return value


def _library_rewrite(graph: list[Any]) -> list[Any]:
    """What the library writes after reading ``graph``: its notion of the same document."""
    return _dump(ADAPTER.validate_python(graph))


def _refusal(call: Any, *args: Any) -> UnconvertiblePydanticAiMessages:
    with pytest.raises(UnconvertiblePydanticAiMessages) as info:
        call(*args)
    return info.value


# ---- the golden fixtures -------------------------------------------------------------------

# (fixture file, message index) -> (path, kind) of the first value with no zigai form.
NO_ZIGAI_FORM = {
    ("conversation.json", 8): ("$[8].parts[0]", "system-prompt"),  # dynamic_ref
    ("conversation.json", 16): ("$[16].parts[0]", "retry-prompt"),  # validation-error list
    ("conversation.json", 19): ("$[19].parts[0]", "speech"),  # interrupted_at_ms
    ("conversation.json", 20): ("$[20].parts[0]", "tool-call/tool-search"),
    ("conversation.json", 21): ("$[21].parts[0]", "tool-return/tool-search"),
    ("conversation.json", 22): ("$[22].parts[0]", "tool-call/capability-load"),
    ("conversation.json", 23): ("$[23].parts[0]", "tool-return/capability-load"),
    ("conversation.json", 25): ("$[25].parts[2]", "builtin-tool-call"),  # no provider_name
    ("conversation.json", 26): ("$[26].parts[1]", "builtin-tool-return/tool-search"),  # message
    ("conversation.json", 30): ("$[30].parts[0].content[1]", "text-content"),
    ("conversation.json", 32): ("$[32].parts[0].content[0]", "audio-url"),  # force_download
    ("conversation.json", 33): ("$[33].parts[0].content[0]", "document-url"),
    ("conversation.json", 35): ("$[35].parts[0].content[1]", "binary"),  # own identifier
}


def _conversation() -> list[Any]:
    value: list[Any] = json.loads((FIXTURES / "conversation.json").read_text(encoding="utf-8"))
    return value


def test_every_convertible_fixture_message_round_trips_to_the_same_document() -> None:
    doc = _conversation()
    kept = [m for i, m in enumerate(doc) if ("conversation.json", i) not in NO_ZIGAI_FORM]
    assert len(kept) == len(doc) - len(NO_ZIGAI_FORM) >= 20
    messages = to_zigai(kept)
    assert len(messages) == len(kept)
    assert from_zigai(messages) == kept
    assert to_zigai(from_zigai(messages)) == messages


@pytest.mark.parametrize(("index", "expected"), sorted(
    (i, v) for (name, i), v in NO_ZIGAI_FORM.items() if name == "conversation.json"))
def test_each_fixture_value_without_zigai_form_is_named(index: int, expected: tuple[str, str]) -> None:
    doc = _conversation()
    # the convertible messages before it, then it: the refusal names its place in that list
    before = [m for i, m in enumerate(doc[:index]) if ("conversation.json", i) not in NO_ZIGAI_FORM]
    path = expected[0].replace(f"$[{index}]", f"$[{len(before)}]")
    error = _refusal(to_zigai, [*before, doc[index]])
    assert (error.path, error.kind, error.direction) == (path, expected[1], "to_zigai")
    assert str(error).startswith(f"{path} ({expected[1]}): ")
    assert error.reason


def test_fixture_mapping_of_envelope_fields() -> None:
    request, response = to_zigai(_conversation()[:2])
    assert isinstance(request, zm.RequestMessage) and isinstance(response, zm.ResponseMessage)
    assert request.instructions == "Reply in French."
    assert request.timestamp == T0 and request.parts[0].timestamp == T0
    assert request.metadata is not None and request.metadata.to_value() == {
        "score": 0.5, "tags": ["a"], "tenant": "acme",
        "pydantic_ai": {"run_id": "run-1", "conversation_id": "conv-1", "state": "interrupted"}}
    assert response.finish_reason is zm.FinishReason.length
    assert response.raw_finish_reason == "stop"
    assert response.provider_details == zm.ProviderDetails({"system_fingerprint": None})
    assert (response.model_name, response.provider_name, response.provider_response_id) == (
        "test-model", "openai", "resp_1")
    assert response.usage == RequestUsage(
        input_tokens=120, output_tokens=30, cache_write_tokens=7, cache_read_tokens=100,
        input_audio_tokens=3, output_audio_tokens=4, reasoning_tokens=12,
        details=UsageDetails({"accepted_prediction_tokens": 0, "cache_audio_read_tokens": 2}))
    assert response.metadata is not None
    assert response.metadata["pydantic_ai"]["cost"] == "0.000123"
    assert response.metadata["pydantic_ai"]["provider_url"] == "https://api.openai.com/v1"


def test_fixture_tool_args_and_media_map_onto_zigai_fields() -> None:
    doc = _conversation()
    calls = to_zigai([doc[11]])[0].parts
    assert [p.args for p in calls] == ['{"city":"Paris","days":2}', '{"tz": "UTC"}', ""]
    assert calls[1].id == "item_2"
    image = to_zigai([doc[31]])[0].parts[0].content[0]
    assert image == zm.ImageContent(zm.UrlSource("https://example.com/cat.png", "image/png"),
                                    detail="high")
    binary = to_zigai([doc[14]])[0].parts[0].content  # tool return content stays JSON
    assert binary[1]["kind"] == "binary"


# ---- zigai -> PydanticAI -> zigai ------------------------------------------------------------

def _rich_zigai_history() -> list[zm.Message]:
    """Every zigai kind and field that has a PydanticAI form, each set to a non-default value."""
    openai = zm.ProviderPart("openai", details=zm.ProviderDetails({"logprobs": [-0.5]}))
    return [
        zm.RequestMessage(
            (
                zm.SystemPromptPart("Be terse.", timestamp=T0),
                zm.UserPromptPart((
                    zm.TextContent("look at these"),
                    zm.ImageContent(zm.UrlSource("https://example.com/cat.png", "image/png"),
                                    detail="low"),
                    zm.ImageContent(zm.BytesSource(PNG, "image/png")),
                    zm.AudioContent(zm.UrlSource("https://example.com/a.mp3", "audio/mpeg")),
                    zm.AudioContent(zm.BytesSource(b"RIFF", "audio/wav")),
                    zm.VideoContent(zm.UrlSource("https://example.com/v.mp4", "video/mp4")),
                    zm.VideoContent(zm.BytesSource(b"\x00\x00", "video/mp4")),
                    zm.DocumentContent(zm.UrlSource("https://example.com/r.pdf", "application/pdf")),
                    zm.BinaryContent(b"%PDF-1.7", "application/pdf"),
                    zm.UploadedFileContent(zm.UploadedFile("anthropic", "file_9", "text/plain")),
                    zm.UploadedFileContent(zm.UploadedFile("openai", "file_10")),
                    zm.CachePoint("1h"),
                    zm.CachePoint(),
                ), timestamp=T0),
                zm.SpeechPromptPart(zm.AudioContent(zm.BytesSource(b"RIFFxx", "audio/wav")),
                                    transcript="hello"),
            ),
            instructions="Answer in French.", timestamp=T0,
            metadata=zm.Metadata({"tenant": "acme", "pydantic_ai": {
                "run_id": "r1", "conversation_id": "c1", "state": "interrupted"}}),
        ),
        zm.ResponseMessage(
            (
                zm.ThinkingPart("hmm", id="th_1", signature="sig==",
                                provider=zm.ProviderPart("anthropic")),
                zm.TextPart("Hello", id="msg_1", provider=openai),
                zm.CompactionPart("summary", id="cmp_1"),
                zm.CompactionPart(),
                zm.FilePart(zm.BytesSource(PNG, "image/png"), id="f_1",
                            provider=zm.ProviderPart("google")),
                zm.SpeechPart(audio=zm.AudioContent(zm.BytesSource(b"RIFF", "audio/wav")),
                              transcript="hi", id="sp_1"),
                zm.SpeechPart(transcript="only words"),
                zm.ToolCallPart("get_weather", {"city": "Paris"}, "call_1"),
                zm.ToolCallPart("get_time", '{"tz": "UTC"}', "call_2", id="item_2"),
                zm.ToolCallPart("noop", "", "call_3"),
                zm.NativeToolCallPart("web_search", "bt_1", zm.ProviderPart("openai", id="ws_1"),
                                      args={"query": "zig"}),
                zm.NativeToolReturnPart("web_search", "bt_1", zm.ProviderPart(
                    "openai", details=zm.ProviderDetails({"status": "completed"})),
                    content=[{"url": "https://ziglang.org"}], outcome="error"),
                zm.ToolSearchCallPart("ts_1", {"queries": ["weather"]}, id="srv_1",
                                      provider=zm.ProviderPart("anthropic")),
                zm.ToolSearchReturnPart("ts_1", ("get_weather", "get_time"),
                                        provider=zm.ProviderPart("anthropic")),
                zm.ToolSearchCallPart("ts_2", '{"queries": ["x"]}'),
                zm.ToolSearchReturnPart("ts_2", (), outcome="denied"),
            ),
            usage=RequestUsage(input_tokens=120, output_tokens=30, cache_read_tokens=100,
                               cache_write_tokens=7, input_audio_tokens=3, output_audio_tokens=4,
                               reasoning_tokens=12,
                               details=UsageDetails({"cache_audio_read_tokens": 2, "x": 1})),
            model_name="gpt-x", provider_name="openai", provider_response_id="resp_1",
            finish_reason="tool_call", raw_finish_reason="tool_calls", timestamp=T1,
            provider_details=zm.ProviderDetails({"system_fingerprint": "fp"}),
            metadata=zm.Metadata({"pydantic_ai": {
                "provider_url": "https://api.openai.com/v1", "cost": "0.01",
                "native_return_timestamps": {"11": "2026-01-02T03:04:07Z",
                                             "13": "2026-01-02T03:04:08Z"}}}),
        ),
        zm.RequestMessage((
            zm.ToolReturnPart("get_weather", "call_1", {"temp": 21.5, "sky": ["sun"]},
                              timestamp=T0, metadata=zm.Metadata({"cached": True})),
            zm.ToolReturnPart("get_time", "call_2", "12:00", outcome="error", timestamp=T0),
            zm.ToolReturnPart("noop", "call_3", None, outcome="denied", timestamp=T0),
            zm.ToolReturnPart("slow", "call_4", outcome="interrupted", timestamp=T0),
            zm.RetryPromptPart("try again", tool_name="get_weather", tool_call_id="call_5",
                               timestamp=T0),
            zm.ToolAvailabilityPart(added=("a", "b"), tool_call_id="call_s"),
        )),
        zm.ResponseMessage((zm.TextPart("done"),), metadata=zm.Metadata({})),
    ]


def test_zigai_history_round_trips_through_the_library_unchanged() -> None:
    history = _rich_zigai_history()
    graph = from_zigai(history)
    assert to_zigai(graph) == history
    # The library reads it and writes the very same document, except the two values zigai
    # left unset, which the library fills in (documented): an uploaded file's media type and
    # the time it read a response that had no timestamp.
    rewritten = _library_rewrite(graph)
    assert rewritten[0]["parts"][1]["content"][10].pop("media_type") == "application/octet-stream"
    assert rewritten[3].pop("timestamp")
    assert rewritten == graph
    assert to_zigai(codec.stringify(graph)) == history


def test_values_zigai_leaves_unset_are_filled_by_the_library_as_documented() -> None:
    history = [zm.RequestMessage((zm.UserPromptPart("hi"), zm.RetryPromptPart("again"))),
               zm.ResponseMessage((zm.TextPart("yo"),))]
    graph = from_zigai(history)
    assert "timestamp" not in graph[0]["parts"][0] and "timestamp" not in graph[1]
    assert "tool_call_id" not in graph[0]["parts"][1]
    assert to_zigai(graph) == history
    rewritten = _library_rewrite(graph)
    assert rewritten[0]["parts"][1]["tool_call_id"]  # the library invents one on reading
    assert to_zigai(rewritten)[1].timestamp is not None  # and stamps the response


def test_documented_normalisations() -> None:
    # canonical-object argument text is written back as an object; "" as null
    call = zm.ResponseMessage((zm.ToolCallPart("f", '{"a":1}', "c1"),))
    assert from_zigai([call])[0]["parts"][0]["args"] == {"a": 1}
    doc = from_zigai([zm.ResponseMessage((zm.ToolCallPart("f", "", "c2"),))])
    assert doc[0]["parts"][0]["args"] is None
    # CachePoint(ttl="5m") is the library default, which zigai spells ttl=None
    point = zm.RequestMessage((zm.UserPromptPart((zm.CachePoint("5m"),)),))
    assert to_zigai(from_zigai([point]))[0].parts[0].content == (zm.CachePoint(),)
    # a timestamp with another offset keeps its instant and is written in UTC
    doc = from_zigai([zm.ResponseMessage((), timestamp=T1)])
    doc[0]["timestamp"] = "2026-01-02T05:04:06+02:00"
    assert to_zigai(doc)[0].timestamp == T1
    assert from_zigai(to_zigai(doc))[0]["timestamp"] == "2026-01-02T03:04:06Z"
    stamp = datetime(2026, 1, 2, 5, 4, 6, tzinfo=timezone(timedelta(hours=2)))
    assert zm.ResponseMessage((), timestamp=stamp).timestamp == T1
    # standard-alphabet base64 is read; the library's URL-safe alphabet is written
    doc = from_zigai([zm.ResponseMessage((zm.FilePart(zm.BytesSource(PNG, "image/png")),))])
    assert doc[0]["parts"][0]["content"]["data"] == "iVBORw0KGgoAAAANSUhEUv_-"
    doc[0]["parts"][0]["content"]["data"] = "iVBORw0KGgoAAAANSUhEUv/+"
    assert to_zigai(doc)[0].parts[0].source.data == PNG
    # metadata {} next to carried envelope fields becomes null
    doc = from_zigai([zm.ResponseMessage(())])
    doc[0].update(metadata={}, run_id="r")
    assert from_zigai(to_zigai(doc))[0]["metadata"] is None


def test_edge_values_round_trip_both_ways() -> None:
    history = [
        _req(zm.UserPromptPart((zm.ImageContent(zm.UrlSource("https://example.com/p.png")),))),
        _resp(zm.ToolCallPart("f", "{not json", "c1"), zm.ToolCallPart("g", "[1, 2]", "c2"),
              zm.NativeToolReturnPart("web_search", "b1", NATIVE),
              zm.ToolSearchReturnPart("s1", ("a",)),
              provider_details=zm.ProviderDetails({"finish_reason": 3, "a": None})),
    ]
    graph = from_zigai(history)
    assert "media_type" not in graph[0]["parts"][0]["content"][0]  # the library infers it
    assert [p.get("args") for p in graph[1]["parts"][:2]] == ["{not json", "[1, 2]"]
    assert "timestamp" not in graph[1]["parts"][2] and "timestamp" not in graph[1]["parts"][3]
    assert graph[1]["provider_details"] == {"finish_reason": 3, "a": None}
    assert to_zigai(graph) == history
    assert _library_rewrite(graph)[0]["parts"][0]["content"][0]["media_type"] == "image/png"


# ---- real agent runs -------------------------------------------------------------------------

class City(BaseModel):
    name: str
    population: int


def _round_trip(doc: list[Any]) -> list[zm.Message]:
    messages = to_zigai(doc)
    assert from_zigai(messages) == doc
    assert to_zigai(from_zigai(messages)) == messages
    return messages


def test_real_function_model_run_with_tools_retry_structured_output_and_media() -> None:
    turn = {"n": 0}

    def model(messages: list[Any], info: AgentInfo) -> Any:
        turn["n"] += 1
        if turn["n"] == 1:
            return pai.ModelResponse(parts=[pai.TextPart("let me look"),
                                            pai.ToolCallPart("lookup", {"city": "Paris"}, "c1")])
        if turn["n"] == 2:
            return pai.ModelResponse(parts=[pai.ToolCallPart("lookup", {"city": "Lyon"}, "c2")])
        return pai.ModelResponse(parts=[pai.ToolCallPart(
            info.output_tools[0].name, {"name": "Lyon", "population": 5}, "c3")])

    agent = Agent(FunctionModel(model), output_type=City, instructions="Name a city.")

    @agent.tool_plain
    def lookup(city: str) -> dict[str, Any]:
        if city == "Paris":
            raise ModelRetry("Paris is closed, try another city")
        return {"city": city, "open": True}

    result = agent.run_sync(["Which city?", pai.ImageUrl("https://example.com/map.png"),
                             pai.BinaryContent(PNG, media_type="image/png"),
                             pai.DocumentUrl("https://example.com/guide.pdf"),
                             pai.BinaryContent(b"%PDF-1", media_type="application/pdf")])
    assert result.output == City(name="Lyon", population=5)
    messages = _round_trip(_dump(result.all_messages()))
    kinds = [type(part).__name__ for message in messages for part in message.parts]
    assert kinds == ["UserPromptPart", "TextPart", "ToolCallPart", "RetryPromptPart",
                     "ToolCallPart", "ToolReturnPart", "ToolCallPart", "ToolReturnPart"]
    prompt = messages[0].parts[0].content
    assert [type(item).__name__ for item in prompt] == [
        "TextContent", "ImageContent", "ImageContent", "DocumentContent", "BinaryContent"]
    retry = messages[2].parts[0]
    assert (retry.content, retry.tool_name, retry.tool_call_id) == (
        "Paris is closed, try another city", "lookup", "c1")
    assert messages[0].instructions == "Name a city."
    assert messages[1].model_name == "function:model:"
    assert messages[0].metadata is not None and "run_id" in messages[0].metadata["pydantic_ai"]


def test_real_streamed_run_round_trips() -> None:
    async def stream(messages: list[Any], info: AgentInfo) -> AsyncIterator[Any]:
        if len(messages) == 1:
            yield {0: DeltaToolCall(name="weather", json_args='{"city": ', tool_call_id="s1")}
            yield {0: DeltaToolCall(json_args='"Nice"}')}
        else:
            yield "It is "
            yield "sunny."

    agent = Agent(FunctionModel(stream_function=stream))

    @agent.tool_plain
    def weather(city: str) -> str:
        return f"sun in {city}"

    async def run() -> list[Any]:
        async with agent.run_stream("weather?") as streamed:
            assert await streamed.get_output() == "It is sunny."
        return streamed.all_messages()

    messages = _round_trip(_dump(asyncio.run(run())))
    call = messages[1].parts[0]
    assert isinstance(call, zm.ToolCallPart) and call.args == '{"city": "Nice"}'
    assert messages[3].text == "It is sunny."


def test_library_native_tool_search_parts_round_trip() -> None:
    response = pai.ModelResponse(parts=[
        pai.NativeToolSearchCallPart(args={"queries": ["time"]}, tool_call_id="nts_1",
                                     provider_name="anthropic", id="srvtoolu_1"),
        pai.NativeToolSearchReturnPart(content={"discovered_tools": [{"name": "get_time"}]},
                                       tool_call_id="nts_1", provider_name="anthropic",
                                       timestamp=T0),
    ], model_name="claude", timestamp=T1)
    (message,) = _round_trip(_dump([response]))
    call, found = message.parts
    assert call == zm.ToolSearchCallPart("nts_1", '{"queries":["time"]}', id="srvtoolu_1",
                                         provider=zm.ProviderPart("anthropic"))
    assert found == zm.ToolSearchReturnPart("nts_1", ("get_time",),
                                            provider=zm.ProviderPart("anthropic"))
    assert message.metadata is not None
    assert message.metadata["pydantic_ai"]["native_return_timestamps"] == {
        "1": "2026-01-02T03:04:05.123456Z"}


def test_real_test_model_run_round_trips() -> None:
    agent = Agent(TestModel(), instructions="be brief")

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        return a + b

    messages = _round_trip(_dump(agent.run_sync("add").all_messages()))
    assert messages[1].provider_name == "test" and messages[1].usage.input_tokens > 0


def test_argument_validation_retry_from_a_real_run_is_refused_by_name() -> None:
    turn = {"n": 0}

    def model(messages: list[Any], info: AgentInfo) -> Any:
        turn["n"] += 1
        args = {"a": "not a number"} if turn["n"] == 1 else {"a": 1}
        if turn["n"] > 2:
            return pai.ModelResponse(parts=[pai.TextPart("done")])
        return pai.ModelResponse(parts=[pai.ToolCallPart("double", args, f"c{turn['n']}")])

    agent = Agent(FunctionModel(model))

    @agent.tool_plain
    def double(a: int) -> int:
        return 2 * a

    doc = _dump(agent.run_sync("go").all_messages())
    error = _refusal(to_zigai, doc)
    assert (error.path, error.kind) == ("$[2].parts[0]", "retry-prompt")


def test_zigai_history_is_seen_unchanged_by_a_real_agent_as_message_history() -> None:
    history = [
        zm.RequestMessage((zm.SystemPromptPart("Be terse.", timestamp=T0),
                           zm.UserPromptPart("weather in Paris?", timestamp=T0)),
                          instructions="Use tools.", timestamp=T0),
        zm.ResponseMessage((zm.TextPart("checking"),
                            zm.ToolCallPart("get_weather", {"city": "Paris"}, "call_1")),
                           model_name="gpt-x", provider_name="openai", timestamp=T1,
                           finish_reason="tool_call",
                           usage=RequestUsage(input_tokens=10, output_tokens=5)),
        zm.RequestMessage((zm.ToolReturnPart("get_weather", "call_1", {"temp": 21},
                                             timestamp=T0),), timestamp=T0),
        zm.ResponseMessage((zm.TextPart("21 degrees"),), model_name="gpt-x", timestamp=T1),
    ]
    seen: list[list[Any]] = []

    def model(messages: list[Any], info: AgentInfo) -> Any:
        seen.append(_dump(messages))
        return pai.ModelResponse(parts=[pai.TextPart("same tomorrow")])

    result = Agent(FunctionModel(model)).run_sync(
        "and tomorrow?", message_history=ADAPTER.validate_python(from_zigai(history)))
    assert result.output == "same tomorrow"
    received = to_zigai(seen[0])
    assert received[:4] == history
    assert received[4].parts[0] == zm.UserPromptPart("and tomorrow?",
                                                     timestamp=received[4].parts[0].timestamp)


# ---- refusals: zigai values with no PydanticAI form ------------------------------------------

def _req(*parts: Any, **fields: Any) -> zm.RequestMessage:
    return zm.RequestMessage(parts, **fields)


def _resp(*parts: Any, **fields: Any) -> zm.ResponseMessage:
    return zm.ResponseMessage(parts, **fields)


def _user(*items: Any) -> zm.RequestMessage:
    return _req(zm.UserPromptPart(items))


NATIVE = zm.ProviderPart("openai")
NO_PYDANTIC_AI_FORM: dict[str, tuple[zm.Message, str, str]] = {
    "instruction part": (_req(zm.InstructionPart("x")), "messages[0].parts[0]", "instruction"),
    "skipped tool return": (_req(zm.ToolReturnPart("t", "c", outcome="skipped")),
                            "messages[0].parts[0]", "tool-return"),
    "skipped native return": (_resp(zm.NativeToolReturnPart("t", "c", NATIVE, outcome="skipped")),
                              "messages[0].parts[0]", "native-tool-return"),
    "native return provider id": (_resp(zm.NativeToolReturnPart("t", "c", zm.ProviderPart(
        "openai", id="x"))), "messages[0].parts[0]", "native-tool-return"),
    "removed tools": (_req(zm.ToolAvailabilityPart(removed=("a",))), "messages[0].parts[0]",
                      "tool-availability"),
    "availability timestamp": (_req(zm.ToolAvailabilityPart(added=("a",), timestamp=T0)),
                               "messages[0].parts[0]", "tool-availability"),
    "speech prompt timestamp": (_req(zm.SpeechPromptPart(
        zm.AudioContent(zm.BytesSource(b"x", "audio/wav")), timestamp=T0)),
        "messages[0].parts[0]", "speech-prompt"),
    "speech prompt url audio": (_req(zm.SpeechPromptPart(
        zm.AudioContent(zm.UrlSource("https://a/b.wav")))), "messages[0].parts[0].audio", "audio"),
    "capability load return": (_req(zm.CapabilityLoadReturnPart("c", "billing")),
                               "messages[0].parts[0]", "capability-load-return"),
    "tool search return id": (_resp(zm.ToolSearchReturnPart("c", ("a",), id="x")),
                              "messages[0].parts[0]", "tool-search-return"),
    "tool search return provider id": (_resp(zm.ToolSearchReturnPart(
        "c", provider=zm.ProviderPart("anthropic", id="x"))), "messages[0].parts[0]",
        "tool-search-return"),
    "capability load call": (_resp(zm.CapabilityLoadCallPart("billing", "c")),
                             "messages[0].parts[0]", "capability-load-call"),
    "skipped tool search": (_resp(zm.ToolSearchReturnPart("c", outcome="skipped")),
                            "messages[0].parts[0]", "tool-search-return"),
    "provider part id": (_resp(zm.TextPart("x", provider=zm.ProviderPart("openai", id="p"))),
                         "messages[0].parts[0]", "text"),
    "file over url": (_resp(zm.FilePart(zm.UrlSource("https://a/b.png"))),
                      "messages[0].parts[0]", "file"),
    "finish reason other": (_resp(finish_reason="other"), "messages[0].finish_reason", "response"),
    "raw finish in details": (_resp(provider_details=zm.ProviderDetails({"finish_reason": "x"})),
                              "messages[0].provider_details", "response"),
    "reasoning detail": (_resp(usage=RequestUsage(details=UsageDetails({"reasoning_tokens": 1}))),
                         "messages[0].usage", "usage"),
    "extras not an object": (_resp(metadata=zm.Metadata({"pydantic_ai": 1})),
                             "messages[0].metadata['pydantic_ai']", "response"),
    "unknown extras key": (_req(zm.UserPromptPart("x"), metadata=zm.Metadata(
        {"pydantic_ai": {"provider_url": "u"}})), "messages[0].metadata['pydantic_ai']", "request"),
    "bad native timestamp key": (_resp(zm.TextPart("x"), metadata=zm.Metadata(
        {"pydantic_ai": {"native_return_timestamps": {"0": "2026-01-02T03:04:05Z"}}})),
        "messages[0].metadata['pydantic_ai']", "response"),
    "tagged text": (_user(zm.TaggedText("t", "x")), "messages[0].parts[0].content[0]",
                    "tagged-text"),
    "document title": (_user(zm.DocumentContent(zm.UrlSource("https://a/b.pdf"), title="B")),
                       "messages[0].parts[0].content[0]", "document"),
    "document bytes": (_user(zm.DocumentContent(zm.BytesSource(b"x", "application/pdf"))),
                       "messages[0].parts[0].content[0]", "document"),
    "image bytes of another type": (_user(zm.ImageContent(zm.BytesSource(b"x", "text/plain"))),
                                    "messages[0].parts[0].content[0]", "image"),
    "binary image": (_user(zm.BinaryContent(b"x", "image/png")),
                     "messages[0].parts[0].content[0]", "binary"),
    "provider file source": (_user(zm.ImageContent(zm.ProviderFileSource("f"))),
                             "messages[0].parts[0].content[0]", "image"),
}


@pytest.mark.parametrize("case", sorted(NO_PYDANTIC_AI_FORM))
def test_zigai_value_without_pydantic_ai_form_is_named(case: str) -> None:
    message, path, kind = NO_PYDANTIC_AI_FORM[case]
    error = _refusal(from_zigai, [message])
    assert (error.direction, error.path, error.kind) == ("from_zigai", path, kind)
    assert str(error) == f"{path} ({kind}): {error.reason}"


def test_value_the_library_schema_refuses_is_named_with_its_json_path() -> None:
    error = _refusal(from_zigai, [_user(zm.UploadedFileContent(zm.UploadedFile("acme", "f1")))])
    assert error.path == "$[0].parts[0].content[0].provider_name"
    assert error.direction == "from_zigai"


def test_tool_search_arguments_the_library_requires_are_named() -> None:
    error = _refusal(from_zigai, [_resp(zm.ToolSearchCallPart("c"))])  # zigai's default "{}"
    assert error.path == "$[0].parts[0].args.queries"


def test_from_zigai_refuses_what_is_not_a_message() -> None:
    with pytest.raises(TypeError, match=r"messages\[0\] must be a RequestMessage"):
        from_zigai([zm.TextPart("x")])  # type: ignore[list-item]


# ---- refusals: PydanticAI values with no zigai form --------------------------------------------

def _base(kind: str = "request") -> dict[str, Any]:
    if kind == "request":
        return from_zigai([_req(zm.UserPromptPart("x", timestamp=T0))])[0]
    return from_zigai([_resp(zm.TextPart("x"), timestamp=T1)])[0]


def _with_part(kind: str, part: dict[str, Any]) -> list[Any]:
    message = _base(kind)
    message["parts"] = [part]
    return [message]


NO_ZIGAI_FORM_CASES: dict[str, tuple[list[Any], str, str]] = {
    "reserved metadata key": ([{**_base(), "metadata": {"pydantic_ai": 1}}],
                              "$[0].metadata", "request"),
    "cache audio detail": ([{**_base("response"), "usage": {"details": {
        "cache_audio_read_tokens": 1}}}], "$[0].usage", "usage"),
    "usage subset broken": ([{**_base("response"), "usage": {
        "input_tokens": 1, "cache_read_tokens": 5}}], "$[0]", "response"),
    "naive timestamp": ([{**_base(), "timestamp": "2026-01-02T03:04:05"}], "$[0].timestamp",
                        "request"),
    "no parts": ([{**_base(), "parts": []}], "$[0]", "request"),
    "tool call without id": (_with_part("response", {"part_kind": "tool-call", "tool_name": "f"}),
                             "$[0].parts[0]", "tool-call"),
    "tool return metadata not object": (_with_part("request", {
        "part_kind": "tool-return", "tool_name": "f", "tool_call_id": "c", "content": 1,
        "metadata": [1]}), "$[0].parts[0]", "tool-return"),
    "tool search match fields": (_with_part("response", {
        "part_kind": "builtin-tool-return", "tool_kind": "tool-search", "tool_call_id": "c",
        "content": {"discovered_tools": [{"name": "a", "score": 1}]}}),
        "$[0].parts[0]", "builtin-tool-return/tool-search"),
    "native return metadata": (_with_part("response", {
        "part_kind": "builtin-tool-return", "tool_name": "f", "tool_call_id": "c", "content": 1,
        "provider_name": "openai", "metadata": {"a": 1}}), "$[0].parts[0]", "builtin-tool-return"),
    "details without provider": (_with_part("response", {
        "part_kind": "text", "content": "x", "provider_details": {"a": 1}}),
        "$[0].parts[0]", "text"),
    "assistant speech in a request": (_with_part("request", {
        "part_kind": "speech", "speaker": "assistant", "transcript": "x"}),
        "$[0].parts[0]", "speech"),
    "user speech without audio": (_with_part("request", {
        "part_kind": "speech", "speaker": "user", "transcript": "x"}), "$[0].parts[0]", "speech"),
    "speech with neither audio nor transcript": (_with_part("response", {
        "part_kind": "speech", "speaker": "assistant"}), "$[0].parts[0]", "speech"),
    "empty tool availability": (_with_part("request", {"part_kind": "tool-availability-delta"}),
                                "$[0].parts[0]", "tool-availability-delta"),
    "empty user content": (_with_part("request", {"part_kind": "user-prompt", "content": []}),
                           "$[0].parts[0]", "user-prompt"),
    "image vendor metadata": (_with_part("request", {"part_kind": "user-prompt", "content": [
        {"kind": "image-url", "url": "https://a/b.png", "vendor_metadata": {"x": 1}}]}),
        "$[0].parts[0].content[0]", "image-url"),
    "uploaded file vendor metadata": (_with_part("request", {"part_kind": "user-prompt", "content": [
        {"kind": "uploaded-file", "file_id": "f", "provider_name": "openai",
         "vendor_metadata": {"detail": "low"}}]}), "$[0].parts[0].content[0]", "uploaded-file"),
}


@pytest.mark.parametrize("case", sorted(NO_ZIGAI_FORM_CASES))
def test_pydantic_ai_value_without_zigai_form_is_named(case: str) -> None:
    doc, path, kind = NO_ZIGAI_FORM_CASES[case]
    codec.validate(doc)  # each case is a valid stable-v2 document
    error = _refusal(to_zigai, doc)
    assert (error.direction, error.path, error.kind) == ("to_zigai", path, kind)


# ---- inputs and the error ------------------------------------------------------------------------

def test_to_zigai_reads_text_bytes_owned_and_graphs_alike() -> None:
    graph = from_zigai(_rich_zigai_history())
    text = codec.stringify(graph)
    expected = to_zigai(graph)
    with codec.parse(text) as owned:
        assert to_zigai(owned) == expected
    assert to_zigai(text) == to_zigai(text.encode("utf-8")) == expected


def test_to_zigai_validates_before_converting() -> None:
    with pytest.raises(InvalidPydanticAiMessages) as info:
        to_zigai([{"kind": "request"}])
    assert info.value.path == "$[0].parts"
    with pytest.raises(InvalidPydanticAiMessages):
        to_zigai("[not json")


def test_unconvertible_error_is_a_picklable_codec_error() -> None:
    error = _refusal(from_zigai, [_req(zm.InstructionPart("x"))])
    assert isinstance(error, CodecError)
    clone = pickle.loads(pickle.dumps(error))
    assert (type(clone), str(clone)) == (type(error), str(error))
