"""The model contract: profiles, tool definitions, output formats, support checks, streams."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from zigai.messages import (
    ImageContent,
    RequestMessage,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    UrlSource,
    UserPromptPart,
)
from zigai.model import (
    InvalidStreamEvent,
    InvalidToolDefinition,
    ManagedTool,
    Model,
    ModelProfile,
    ModelRequest,
    OutputFormat,
    PartAccumulator,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    ReplacePartDelta,
    StreamedResponse,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
    ToolDefinition,
    UnsupportedModelFeature,
    check_request_supported,
)
from zigai.settings import ModelSettings, UnsupportedModelSetting
from zigai.usage import RequestUsage

HELLO = (RequestMessage(parts=(UserPromptPart("hi"),)),)


def test_profile_intersection_ands_flags_and_intersects_sets() -> None:
    a = ModelProfile(json_schema_output=True, reasoning_efforts={"low", "high"},
                     content_kinds={"text", "image"}, idempotency_header="Idem")
    b = ModelProfile(json_schema_output=False, reasoning_efforts={"high"},
                     content_kinds={"text"}, idempotency_header="Idem")
    both = a.intersection(b)
    assert both.json_schema_output is False
    assert both.reasoning_efforts == frozenset({"high"})
    assert both.content_kinds == frozenset({"text"})
    assert both.idempotency_header == "Idem"
    assert a.intersection(ModelProfile()).idempotency_header is None


def test_profile_rejects_unknown_content_kinds() -> None:
    with pytest.raises(ValueError):
        ModelProfile(content_kinds={"hologram"})


@pytest.mark.parametrize("name", ["", "has space", "a" * 65, "dots.are.bad", "ünicode"])
def test_tool_names_must_be_provider_safe(name: str) -> None:
    with pytest.raises(InvalidToolDefinition):
        ToolDefinition(name=name)


def test_tool_name_limit_is_inclusive_and_schema_is_copied() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    tool = ToolDefinition(name="a" * 64, parameters_json_schema=schema)
    schema["properties"]["city"]["type"] = "integer"
    assert tool.parameters_json_schema["properties"]["city"]["type"] == "string"
    with pytest.raises(InvalidToolDefinition):
        ToolDefinition(name="t", parameters_json_schema={"type": "array"})


def test_duplicate_tool_names_are_rejected_in_one_request() -> None:
    with pytest.raises(InvalidToolDefinition, match="weather"):
        ModelRequest(messages=HELLO, tools=(ToolDefinition("weather"), ToolDefinition("weather")))


def test_output_format_shapes() -> None:
    OutputFormat()
    OutputFormat("json_object")
    OutputFormat("json_schema", name="answer", schema={"type": "object"})
    with pytest.raises(UnsupportedModelFeature):
        OutputFormat("json_schema", schema={"type": "object"})
    with pytest.raises(UnsupportedModelFeature):
        OutputFormat("text", schema={"type": "object"})
    with pytest.raises(UnsupportedModelFeature):
        ManagedTool("teleport")


def test_instructions_drop_empty_values() -> None:
    request = ModelRequest(messages=HELLO, instructions=("a", "", "b"))
    assert request.instructions == ("a", "b")


@pytest.mark.parametrize(
    ("request_kwargs", "profile", "error"),
    [
        ({"tools": (ToolDefinition("t"),)}, ModelProfile(supports_tools=False), UnsupportedModelFeature),
        ({"output_format": OutputFormat("json_object")}, ModelProfile(), UnsupportedModelFeature),
        ({"output_format": OutputFormat("json_schema", name="o", schema={"type": "object"})},
         ModelProfile(json_object_output=True), UnsupportedModelFeature),
        ({"managed_tools": (ManagedTool("web_search"),)}, ModelProfile(), UnsupportedModelFeature),
        ({"settings": ModelSettings(top_k=3)}, ModelProfile(), UnsupportedModelSetting),
        ({"messages": (RequestMessage(parts=(UserPromptPart(
            (TextContent("look"), ImageContent(UrlSource("https://example.com/a.png")))),)),)},
         ModelProfile(), UnsupportedModelFeature),
    ],
)
def test_unsupported_features_fail_the_support_check(request_kwargs, profile, error) -> None:
    kwargs = {"messages": HELLO, **request_kwargs}
    with pytest.raises(error):
        check_request_supported(ModelRequest(**kwargs), profile)


def test_supported_request_passes() -> None:
    profile = ModelProfile(json_schema_output=True, content_kinds={"text", "image"},
                           provider_managed_tools={"web_search"})
    check_request_supported(
        ModelRequest(
            messages=(RequestMessage(parts=(UserPromptPart(
                (TextContent("look"), ImageContent(UrlSource("https://example.com/a.png")))),)),),
            tools=(ToolDefinition("t"),),
            managed_tools=(ManagedTool("web_search"),),
            output_format=OutputFormat("json_schema", name="o", schema={"type": "object"}),
            settings=ModelSettings(max_tokens=10),
        ),
        profile,
    )


def test_accumulator_builds_parts_in_index_order() -> None:
    acc = PartAccumulator()
    events = [
        PartStartEvent(1, ToolCallPart("weather", "", "call_1")),
        PartStartEvent(0, ThinkingPart("")),
        PartDeltaEvent(0, ThinkingPartDelta("hmm", signature_delta="sig")),
        PartDeltaEvent(1, ToolCallPartDelta('{"city":')),
        PartDeltaEvent(1, ToolCallPartDelta('"Paris"}')),
        PartEndEvent(0, ThinkingPart("hmm", signature="sig")),
        PartStartEvent(2, TextPart("Hel")),
        PartDeltaEvent(2, TextPartDelta("lo")),
    ]
    for event in events:
        acc.apply(event)
    parts = acc.parts()
    assert parts[0] == ThinkingPart("hmm", signature="sig")
    assert parts[1].args_as_dict() == {"city": "Paris"}
    assert parts[2] == TextPart("Hello")
    replaced = PartAccumulator()
    replaced.apply(PartStartEvent(0, TextPart("a")))
    replaced.apply(PartDeltaEvent(0, ReplacePartDelta(TextPart("b"))))
    assert replaced.parts() == (TextPart("b"),)


@pytest.mark.parametrize(
    "events",
    [
        [PartDeltaEvent(0, TextPartDelta("x"))],
        [PartStartEvent(0, TextPart("")), PartStartEvent(0, TextPart(""))],
        [PartStartEvent(0, TextPart("")), PartDeltaEvent(0, ThinkingPartDelta("x"))],
        [PartStartEvent(0, ThinkingPart("")), PartDeltaEvent(0, TextPartDelta("x"))],
        [PartStartEvent(0, TextPart("")), PartDeltaEvent(0, ToolCallPartDelta("{"))],
        [PartStartEvent(0, TextPart("")), PartEndEvent(0, TextPart("")),
         PartDeltaEvent(0, TextPartDelta("x"))],
    ],
)
def test_accumulator_rejects_inconsistent_events(events) -> None:
    acc = PartAccumulator()
    with pytest.raises(InvalidStreamEvent):
        for event in events:
            acc.apply(event)


class _ListStream(StreamedResponse):
    def __init__(self, events) -> None:
        super().__init__(model_name="m", provider_name="p")
        self._list = events
        self.released = 0

    def _events(self) -> Iterator:
        yield from self._list
        self.usage = RequestUsage(input_tokens=3, output_tokens=2)

    def _release(self) -> None:
        self.released += 1


def test_streamed_response_builds_the_final_message_once_consumed() -> None:
    stream = _ListStream([PartStartEvent(0, TextPart("a")), PartDeltaEvent(0, TextPartDelta("b"))])
    with pytest.raises(InvalidStreamEvent):
        stream.response()
    assert len(list(stream)) == 2
    response = stream.response()
    assert response.parts == (TextPart("ab"),)
    assert response.usage.total_tokens == 5
    assert (response.model_name, response.provider_name) == ("m", "p")
    assert stream.released == 1
    with pytest.raises(InvalidStreamEvent):
        list(stream)


def test_closing_early_releases_once_and_leaves_response_unavailable() -> None:
    stream = _ListStream([PartStartEvent(0, TextPart("a")), PartDeltaEvent(0, TextPartDelta("b"))])
    with stream:
        next(iter(stream))
    stream.close()
    assert stream.released == 1
    with pytest.raises(InvalidStreamEvent):
        stream.response()


def test_model_protocol_is_runtime_checkable() -> None:
    assert not isinstance(object(), Model)
