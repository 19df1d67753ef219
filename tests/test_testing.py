"""zigai.testing: schema-valid generation, TestModel's tool-then-answer flow, FunctionModel."""

from __future__ import annotations

import json
import pickle
import time
from typing import Any

import pytest
from _message_samples import all_response_parts, every_kind_history
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut
from zigai.json_schema import InvalidJsonSchema, UnsupportedJsonSchema, validate
from zigai.messages import (
    FinishReason,
    ImageContent,
    Message,
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UrlSource,
    UserPromptPart,
)
from zigai.model import (
    Model,
    ModelProfile,
    ModelRequest,
    OutputFormat,
    PartAccumulator,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
    ToolDefinition,
    UnsupportedModelFeature,
)
from zigai.settings import ModelSettings
from zigai.testing import (
    ARGS_CHUNK_CHARS,
    MEDIA_ITEM_TOKENS,
    NO_TOOL_CALLS_TEXT,
    PERMISSIVE_PROFILE,
    AgentInfo,
    DeltaThinking,
    DeltaToolCall,
    FunctionModel,
    InvalidFunctionResponse,
    InvalidTestModelConfig,
    MissingModelFunction,
    SchemaGenerationFailed,
    TestModel,
    estimate_tokens,
    estimate_usage,
    generate_from_schema,
    response_events,
)
from zigai.usage import RequestUsage

# ------------------------------------------------------------------ generate_from_schema

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city"],
}
ANSWER = {
    "type": "object",
    "properties": {"answer": {"type": "string", "minLength": 1}, "score": {"type": "number"}},
    "required": ["answer", "score"],
    "additionalProperties": False,
}

SCHEMAS: list[Any] = [
    True,
    {},
    {"type": "null"},
    {"type": "boolean"},
    {"type": ["string", "null"]},
    {"type": "string", "minLength": 10, "maxLength": 10},
    {"type": "string", "maxLength": 0},
    {"type": "string", "format": "date-time"},
    {"type": "string", "format": "email", "maxLength": 5},
    {"type": "integer", "minimum": -20, "maximum": -10},
    {"type": "integer", "exclusiveMinimum": 4.5, "exclusiveMaximum": 6},
    {"type": "integer", "multipleOf": 7, "minimum": 50},
    {"type": "integer", "multipleOf": 2.5},
    {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    {"type": "number", "multipleOf": 0.1, "minimum": 0.05, "maximum": 0.15},
    {"type": "number", "minimum": 1e6},
    {"type": "number", "not": {"type": "integer"}},
    {"enum": ["red", "green", 3, None]},
    {"type": "string", "enum": [1, "only-string"]},
    {"const": {"nested": [1, 2, {"x": None}]}},
    {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 3}]},
    {"oneOf": [{"type": "integer"}, {"type": "string", "minLength": 2}]},
    {"oneOf": [{"type": "integer"}, {"type": "number"}]},
    {"allOf": [{"type": "integer", "multipleOf": 4}, {"multipleOf": 6, "minimum": 13}]},
    {"allOf": [{"$ref": "#/$defs/a"}, {"required": ["b"]}],
     "$defs": {"a": {"type": "object", "properties": {"a": {"type": "string"}},
                     "required": ["a"]}}},
    {"if": {"type": "integer"}, "then": {"minimum": 100}, "else": {"type": "string"}},
    {"type": "array", "items": {"enum": [1, 2, 3]}, "minItems": 3, "uniqueItems": True},
    {"type": "array", "prefixItems": [{"const": "head"}, {"type": "integer"}], "items": False},
    {"type": "array", "items": {"type": "integer"}, "contains": {"const": 9},
     "minContains": 2, "maxContains": 2},
    {"type": "array", "maxItems": 0},
    {"type": "object", "minProperties": 3, "propertyNames": {"maxLength": 4}},
    {"type": "object", "maxProperties": 1, "properties": {"a": {}, "b": {}}, "required": ["b"]},
    {"type": "object", "properties": {"a": {"type": "integer"}},
     "dependentRequired": {"a": ["z"]}, "additionalProperties": {"type": "boolean"}},
    {"type": "object", "properties": {"a~/b": {"$ref": "#/$defs/we%25ird~1name~0"}},
     "required": ["a~/b"], "$defs": {"we%ird/name~": {"const": 1}}},
    {"$defs": {"node": {"type": "object", "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        "required": ["value", "children"]}},
     "$ref": "#/$defs/node"},
    {"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
     "required": ["next"]},
    {"allOf": [
        {"type": ["object", "null"], "required": ["a"], "minProperties": 1,
         "properties": {"a": {"type": "integer", "minimum": 0},
                        "t": {"type": "array", "prefixItems": [{"type": "integer"}],
                              "items": {"type": "integer"}, "maxItems": 4}},
         "dependentRequired": {"a": ["b"]},
         "additionalProperties": {"type": ["integer", "string", "array"]},
         "anyOf": [{"required": ["a"]}], "if": {"required": ["a"]}, "then": {"required": ["b"]}},
        {"type": "object", "required": ["t"], "maxProperties": 6, "$ref": "#/$defs/base",
         "properties": {"a": {"maximum": 10, "multipleOf": 3},
                        "t": {"prefixItems": [{"minimum": 5}, {"type": "integer"}],
                              "uniqueItems": True, "minItems": 2, "items": {"maximum": 100}}},
         "dependentRequired": {"a": ["c"], "t": ["b"]},
         "additionalProperties": {"type": "integer"},
         "anyOf": [{"required": ["t"]}], "if": {"required": ["t"]}, "then": {"required": ["c"]}},
    ], "$defs": {"base": {"type": "object", "not": {"required": ["zz"]}}}},
    {"allOf": [{"enum": [1, 2, 3]}, {"enum": [3.0, 2]}, {"const": 2}]},
    {"allOf": [{"type": "number", "multipleOf": 0.5}, {"multipleOf": 0.75, "maximum": 2}]},
    {"allOf": [{"type": "array", "contains": {"type": "integer"}},
               {"contains": {"minimum": 3}, "items": {"type": "integer"}}]},
    WEATHER,
    ANSWER,
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=[str(i) for i in range(len(SCHEMAS))])
def test_generated_values_validate_and_repeat_for_the_same_seed(schema: Any) -> None:
    for seed in (0, 1, 7):
        value = generate_from_schema(schema, seed)
        validate(value, schema)
        assert generate_from_schema(schema, seed) == value
        json.dumps(value, allow_nan=False)  # plain JSON, nothing exotic


def test_generated_values_are_pinned_for_seed_zero() -> None:
    assert generate_from_schema(WEATHER) == {"city": "mrqx", "days": 2}
    assert [generate_from_schema({"type": "string"}, s) for s in range(4)] == [
        "bmr", "lxl", "tnxr", "akmou"
    ]


def test_first_attempt_fills_optional_values_instead_of_null() -> None:
    assert generate_from_schema({"type": ["null", "string"]}, 3) is not None
    assert generate_from_schema({"anyOf": [{"type": "null"}, {"type": "integer"}]}) is not None
    value = generate_from_schema({"type": "object", "properties": {"o": {"type": "integer"}}})
    assert set(value) == {"o"}


def test_bounds_at_the_limit_pass_and_one_past_fails() -> None:
    assert generate_from_schema({"type": "integer", "minimum": 5, "maximum": 5}) == 5
    assert generate_from_schema({"type": "integer", "exclusiveMinimum": 5, "maximum": 6}) == 6
    assert generate_from_schema({"type": "string", "minLength": 4, "maxLength": 4}) == "bmrq"
    assert generate_from_schema({"type": "array", "minItems": 2, "maxItems": 2,
                                 "items": {"const": 0}}) == [0, 0]
    with pytest.raises(SchemaGenerationFailed) as info:
        generate_from_schema({"type": "integer", "exclusiveMinimum": 5, "maximum": 5})
    assert info.value.attempts == 32
    with pytest.raises(SchemaGenerationFailed):
        generate_from_schema({"type": "string", "minLength": 5, "maxLength": 4})
    with pytest.raises(SchemaGenerationFailed):
        generate_from_schema({"type": "array", "items": {"enum": [1, 2]}, "minItems": 3,
                              "uniqueItems": True}, max_attempts=3)


@pytest.mark.parametrize("schema", [
    {"allOf": [{"type": "string"}, {"type": "integer"}]},
    {"allOf": [{"enum": [1]}, {"enum": [2]}]},
    {"allOf": [{"const": 1}, {"const": True}]},
    {"type": "object", "required": ["a"], "properties": {"a": False}},
    {"$defs": {"n": {"type": "object", "properties": {"c": {"$ref": "#/$defs/n"}},
                     "required": ["c"]}}, "$ref": "#/$defs/n"},
    {"type": "object", "additionalProperties": False, "minProperties": 1},
    {"type": "array", "items": False, "minItems": 1},
])
def test_contradictory_schemas_fail_by_name(schema: Any) -> None:
    with pytest.raises(SchemaGenerationFailed):
        generate_from_schema(schema, max_attempts=4)


def test_generator_arguments_are_checked() -> None:
    with pytest.raises(TypeError):
        generate_from_schema({}, seed=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        generate_from_schema({}, max_attempts=0)


def test_schemas_outside_the_dialect_are_refused_by_name() -> None:
    with pytest.raises(UnsupportedJsonSchema):
        generate_from_schema({"type": "string", "pattern": "^a$"})
    with pytest.raises(InvalidJsonSchema):
        generate_from_schema({"type": 5})
    with pytest.raises(SchemaGenerationFailed):
        generate_from_schema(False)


def test_generation_never_mutates_or_shares_the_schema() -> None:
    schema = {"type": "object", "properties": {"k": {"const": {"deep": [1]}}}, "required": ["k"]}
    before = json.dumps(schema)
    value = generate_from_schema(schema)
    value["k"]["deep"].append(2)
    assert json.dumps(schema) == before
    assert generate_from_schema(schema) == {"k": {"deep": [1]}}


def test_seed_changes_the_values() -> None:
    values = {json.dumps(generate_from_schema(ANSWER, seed)) for seed in range(5)}
    assert len(values) == 5


def test_schema_generation_failed_pickles_with_its_attempt_count() -> None:
    error = pickle.loads(pickle.dumps(SchemaGenerationFailed("nope", 4)))
    assert (str(error), error.attempts) == ("nope", 4)


# A family of satisfiable schemas of the local dialect, for property-based checks.

_names = st.sampled_from(["a", "b", "city", "count", "kind", "x_1", "ü"])


@st.composite
def _integer_schema(draw: st.DrawFn) -> dict[str, Any]:
    step = draw(st.integers(1, 5))
    low = draw(st.integers(-50, 50))
    high = low + step + 2 + draw(st.integers(0, 20))
    schema: dict[str, Any] = {"type": "integer"}
    if draw(st.booleans()):
        schema["multipleOf"] = step
    schema["exclusiveMinimum" if draw(st.booleans()) else "minimum"] = low
    schema["exclusiveMaximum" if draw(st.booleans()) else "maximum"] = high
    return schema


@st.composite
def _number_schema(draw: st.DrawFn) -> dict[str, Any]:
    step = draw(st.sampled_from([0.5, 0.25, 0.1, 2, 3]))
    low = draw(st.integers(-100, 100)) / 10
    schema: dict[str, Any] = {"type": "number"}
    if draw(st.booleans()):
        schema["multipleOf"] = step
    if draw(st.booleans()):
        schema["exclusiveMinimum" if draw(st.booleans()) else "minimum"] = low
        schema["exclusiveMaximum" if draw(st.booleans()) else "maximum"] = low + 4 * step + 1
    return schema


@st.composite
def _string_schema(draw: st.DrawFn) -> dict[str, Any]:
    low = draw(st.integers(0, 6))
    schema: dict[str, Any] = {"type": "string", "minLength": low}
    if draw(st.booleans()):
        schema["maxLength"] = low + draw(st.integers(0, 4))
    if draw(st.booleans()):
        schema["format"] = draw(st.sampled_from(["date", "uuid", "email", "uri"]))
    return schema


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=3))
_leaf = st.one_of(
    _integer_schema(),
    _number_schema(),
    _string_schema(),
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.lists(_scalars, min_size=1, max_size=4).map(lambda v: {"enum": v}),
    _scalars.map(lambda v: {"const": v}),
)


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    objects = st.tuples(
        st.dictionaries(_names, children, max_size=4), st.booleans(), st.booleans()
    ).map(lambda t: {
        "type": "object",
        "properties": t[0],
        "required": sorted(t[0])[: len(t[0]) // 2 + (1 if t[1] and t[0] else 0)],
        **({"additionalProperties": False} if t[2] else {}),
    })
    arrays = st.tuples(children, st.integers(0, 2), st.integers(0, 2)).map(
        lambda t: {"type": "array", "items": t[0], "minItems": t[1], "maxItems": t[1] + t[2]}
    )
    unions = st.lists(children, min_size=1, max_size=3).map(lambda v: {"anyOf": v})
    tagged = st.lists(children, min_size=1, max_size=3).map(lambda v: {"oneOf": [
        {"type": "object", "properties": {"kind": {"const": i}, "v": c},
         "required": ["kind", "v"]}
        for i, c in enumerate(v)
    ]})
    combined = st.tuples(_integer_schema(), st.integers(-60, 60)).map(
        lambda t: {"allOf": [t[0], {"type": "integer"}]}
    )
    return st.one_of(objects, arrays, unions, tagged, combined)


_nested = st.recursive(_leaf, _extend, max_leaves=12)
_schemas = st.one_of(_nested, _nested.map(lambda c: {
    "$defs": {"item": c}, "type": "object",
    "properties": {"x": {"$ref": "#/$defs/item"}, "y": {"$ref": "#/$defs/item"}},
    "required": ["x"],
}))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_schemas, seed=st.integers(-(2**40), 2**40))
def test_generated_values_validate_for_a_family_of_schemas(schema: Any, seed: int) -> None:
    value = generate_from_schema(schema, seed)
    validate(value, schema)
    assert generate_from_schema(schema, seed) == value


# ------------------------------------------------------------------ TestModel

WEATHER_TOOL = ToolDefinition("get_weather", "Weather by city", WEATHER)
TIME_TOOL = ToolDefinition("get_time", parameters_json_schema={"type": "object", "properties": {}})
OUTPUT_TOOL = ToolDefinition("final_result", parameters_json_schema=ANSWER, kind="output")
PROMPT = RequestMessage.user("What is the weather?")


def _returns_for(response: ResponseMessage, content: Any = "ok") -> RequestMessage:
    parts = [
        ToolReturnPart(p.tool_name, p.tool_call_id, content)
        for p in response.parts if isinstance(p, ToolCallPart)
    ]
    return RequestMessage(parts=tuple(parts))


def _streamed(model: Model, request: ModelRequest) -> tuple[list[Any], ResponseMessage]:
    with model.stream(request) as stream:
        events = list(stream)
        return events, stream.response()


def test_test_model_is_a_model_with_a_permissive_default_profile() -> None:
    model = TestModel()
    assert isinstance(model, Model)
    assert (model.model_name, model.provider_name) == ("test", "test")
    assert model.profile is PERMISSIVE_PROFILE
    profile = model.profile
    assert profile.json_schema_output and profile.json_object_output and profile.supports_thinking
    assert {"logprobs", "top_logprobs", "top_k", "truncation"} <= profile.settings
    assert {"minimal", "xhigh"} <= profile.reasoning_efforts
    rich = ModelRequest(
        messages=(RequestMessage.user([TextContent("look"), ImageContent(UrlSource(
            "https://example.com/a.png", "image/png"))]),),
        tools=(WEATHER_TOOL,),
        output_format=OutputFormat("json_schema", name="answer", schema=ANSWER),
        settings=ModelSettings(thinking="xhigh", logprobs=True, top_logprobs=3, seed=1,
                               parallel_tool_calls=True, service_tier="flex"),
    )
    assert model.request(rich).finish_reason is FinishReason.tool_call


def test_test_model_calls_every_tool_then_summarizes_the_returns() -> None:
    model = TestModel(model_name="scripted", provider_name="unit")
    first_request = ModelRequest(messages=(PROMPT,), tools=(WEATHER_TOOL, TIME_TOOL))
    first = model.request(first_request)
    assert first.parts == (
        ToolCallPart("get_weather", '{"city":"mrqx","days":2}', "test-call-0"),
        ToolCallPart("get_time", "{}", "test-call-1"),
    )
    assert (first.model_name, first.provider_name) == ("scripted", "unit")
    assert (first.finish_reason, first.raw_finish_reason) == (FinishReason.tool_call, "tool_call")
    assert first.timestamp is None
    assert model.last_request is first_request and model.request_count == 1

    history = (PROMPT, first, _returns_for(first, {"temp_c": 21}))
    second = model.request(ModelRequest(messages=history, tools=(WEATHER_TOOL, TIME_TOOL)))
    assert second.parts == (
        TextPart('{"get_weather":{"temp_c":21},"get_time":{"temp_c":21}}'),
    )
    assert (second.finish_reason, second.raw_finish_reason) == (FinishReason.stop, "stop")
    assert model.request_count == 2


def test_test_model_usage_follows_the_documented_formula() -> None:
    model = TestModel()
    request = ModelRequest(messages=(PROMPT,), instructions=("Be brief.",), tools=(WEATHER_TOOL,))
    response = model.request(request)
    # input: "Be brief." (9 bytes -> 3) + "What is the weather?" (20 bytes -> 5)
    # output: tool name "get_weather" (11 -> 3) + args '{"city":"mrqx","days":2}' (24 -> 6)
    assert response.usage == RequestUsage(input_tokens=8, output_tokens=9)
    assert estimate_tokens("") == 0 and estimate_tokens("abcde") == 2
    assert estimate_tokens("é") == 1  # two UTF-8 bytes


def test_usage_estimate_covers_every_message_kind() -> None:
    usage = estimate_usage(ModelRequest(messages=every_kind_history()), all_response_parts())
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    image = RequestMessage.user([ImageContent(UrlSource("https://example.com/a.png"))])
    assert estimate_usage(ModelRequest(messages=(image,)), ()).input_tokens == MEDIA_ITEM_TOKENS


def test_test_model_without_tools_answers_success() -> None:
    response = TestModel().request(ModelRequest(messages=(PROMPT,)))
    assert response.parts == (TextPart(NO_TOOL_CALLS_TEXT),)
    assert response.text == "success (no tool calls)"
    custom = TestModel(custom_output_text="Sunny.").request(ModelRequest(messages=(PROMPT,)))
    assert custom.text == "Sunny."


def test_call_tools_selects_by_name_and_skips_names_not_offered() -> None:
    model = TestModel(call_tools=["get_time", "not_offered"])
    response = model.request(ModelRequest(messages=(PROMPT,), tools=(WEATHER_TOOL, TIME_TOOL)))
    assert [p.tool_name for p in response.parts] == ["get_time"]
    none = TestModel(call_tools=[]).request(ModelRequest(messages=(PROMPT,), tools=(WEATHER_TOOL,)))
    assert none.text == NO_TOOL_CALLS_TEXT


def test_settings_narrow_the_tool_calls() -> None:
    tools = (WEATHER_TOOL, TIME_TOOL)
    model = TestModel()
    no_tools = ModelRequest(messages=(PROMPT,), tools=tools,
                            settings=ModelSettings(tool_choice="none"))
    assert model.request(no_tools).text == NO_TOOL_CALLS_TEXT
    allowed = ModelRequest(messages=(PROMPT,), tools=tools,
                           settings=ModelSettings(allowed_tools=("get_time",)))
    assert [p.tool_name for p in model.request(allowed).parts] == ["get_time"]


def test_sequential_tool_calls_when_parallel_calls_are_off() -> None:
    model = TestModel()
    tools = (WEATHER_TOOL, TIME_TOOL)
    serial = ModelSettings(parallel_tool_calls=False)
    history: tuple[Message, ...] = (PROMPT,)
    names = []
    for _ in range(2):
        response = model.request(ModelRequest(messages=history, tools=tools, settings=serial))
        assert len(response.parts) == 1
        names.append(response.parts[0].tool_name)
        history += (response, _returns_for(response))
    assert names == ["get_weather", "get_time"]
    assert history[3].parts[0].tool_call_id == "test-call-1"
    final = model.request(ModelRequest(messages=history, tools=tools, settings=serial))
    assert final.text == '{"get_weather":"ok","get_time":"ok"}'
    narrow = TestModel(profile=PERMISSIVE_PROFILE.with_changes(supports_parallel_tool_calls=False))
    assert len(narrow.request(ModelRequest(messages=(PROMPT,), tools=tools)).parts) == 1


def test_a_retried_tool_is_called_again_with_new_arguments() -> None:
    model = TestModel()
    first = model.request(ModelRequest(messages=(PROMPT,), tools=(WEATHER_TOOL,)))
    call = first.parts[0]
    retry = RequestMessage(parts=(RetryPromptPart("days must be 3", tool_name="get_weather",
                                                  tool_call_id=call.tool_call_id),))
    again = model.request(ModelRequest(messages=(PROMPT, first, retry), tools=(WEATHER_TOOL,)))
    assert len(again.parts) == 1
    assert again.parts[0].tool_name == "get_weather"
    assert again.parts[0].tool_call_id == "test-call-1"
    assert again.parts[0].args_as_dict() == generate_from_schema(WEATHER, 1)
    assert again.parts[0].args != call.args


def test_a_new_user_prompt_starts_a_new_turn_of_tool_calls() -> None:
    model = TestModel()
    first = model.request(ModelRequest(messages=(PROMPT,), tools=(TIME_TOOL,)))
    history = (PROMPT, first, _returns_for(first))
    answer = model.request(ModelRequest(messages=history, tools=(TIME_TOOL,)))
    history += (answer, RequestMessage.user("And now?"))
    again = model.request(ModelRequest(messages=history, tools=(TIME_TOOL,)))
    assert again.parts == (ToolCallPart("get_time", "{}", "test-call-1"),)


def test_output_tool_is_called_with_schema_valid_or_custom_arguments() -> None:
    tools = (WEATHER_TOOL, OUTPUT_TOOL)
    model = TestModel()
    first = model.request(ModelRequest(messages=(PROMPT,), tools=tools))
    assert [p.tool_name for p in first.parts] == ["get_weather"]  # output tools are not "called"
    history = (PROMPT, first, _returns_for(first))
    final = model.request(ModelRequest(messages=history, tools=tools))
    (part,) = final.parts
    assert isinstance(part, ToolCallPart) and part.tool_name == "final_result"
    assert part.tool_call_id == "test-call-1"
    validate(part.args_as_dict(), ANSWER)
    assert final.finish_reason is FinishReason.tool_call

    custom = TestModel(custom_output_args={"answer": "sunny", "score": 0.5})
    final = custom.request(ModelRequest(messages=history, tools=tools))
    assert final.parts[0].args_as_dict() == {"answer": "sunny", "score": 0.5}
    listed = TestModel(custom_output_args=[1, 2])
    with pytest.raises(InvalidTestModelConfig, match="must be a JSON object"):
        listed.request(ModelRequest(messages=history, tools=tools))


def test_output_tool_retry_regenerates_the_arguments() -> None:
    model = TestModel()
    request = ModelRequest(messages=(PROMPT,), tools=(OUTPUT_TOOL,))
    first = model.request(request)
    retry = RequestMessage(parts=(RetryPromptPart("bad", tool_name="final_result",
                                                  tool_call_id="test-call-0"),))
    second = model.request(ModelRequest(messages=(PROMPT, first, retry), tools=(OUTPUT_TOOL,)))
    assert first.parts[0].args_as_dict() == generate_from_schema(ANSWER, 0)
    assert second.parts[0].args_as_dict() == generate_from_schema(ANSWER, 1)


def test_structured_output_formats_produce_json_text() -> None:
    schema_format = OutputFormat("json_schema", name="answer", schema=ANSWER)
    response = TestModel(seed=3).request(
        ModelRequest(messages=(PROMPT,), output_format=schema_format)
    )
    assert json.loads(response.text) == generate_from_schema(ANSWER, 3)
    validate(json.loads(response.text), ANSWER)
    custom = TestModel(custom_output_args={"answer": "x", "score": 1})
    assert custom.request(
        ModelRequest(messages=(PROMPT,), output_format=schema_format)
    ).text == '{"answer":"x","score":1}'
    object_format = OutputFormat("json_object")
    assert TestModel().request(
        ModelRequest(messages=(PROMPT,), output_format=object_format)
    ).text == "{}"
    assert TestModel(custom_output_args={"a": [1]}).request(
        ModelRequest(messages=(PROMPT,), output_format=object_format)
    ).text == '{"a":[1]}'


def test_test_model_options_are_checked() -> None:
    with pytest.raises(InvalidTestModelConfig):
        TestModel(custom_output_text="a", custom_output_args={"a": 1})
    with pytest.raises(InvalidTestModelConfig):
        TestModel(custom_output_args={"a": {1, 2}})
    with pytest.raises(InvalidTestModelConfig):
        TestModel(custom_output_args={"a": float("nan")})
    with pytest.raises(InvalidTestModelConfig):
        TestModel(call_tools="get_time")
    with pytest.raises(InvalidTestModelConfig):
        TestModel(seed=True)
    with pytest.raises(InvalidTestModelConfig):
        TestModel(model_name="")


def test_custom_output_args_are_copied() -> None:
    args = {"answer": "a", "score": 1}
    model = TestModel(custom_output_args=args)
    args["answer"] = "changed"
    response = model.request(ModelRequest(messages=(PROMPT,), tools=(OUTPUT_TOOL,)))
    assert response.parts[0].args_as_dict() == {"answer": "a", "score": 1}


def test_a_narrow_profile_refuses_before_recording_the_request() -> None:
    model = TestModel(profile=ModelProfile(supports_tools=False))
    with pytest.raises(UnsupportedModelFeature):
        model.request(ModelRequest(messages=(PROMPT,), tools=(WEATHER_TOOL,)))
    with pytest.raises(UnsupportedModelFeature):
        model.stream(ModelRequest(messages=(PROMPT,), tools=(WEATHER_TOOL,)))
    assert model.last_request is None and model.request_count == 0


def test_cancellation_and_deadlines_stop_the_test_model() -> None:
    token = CancellationToken()
    token.cancel("user pressed stop")
    cancelled = ModelRequest(messages=(PROMPT,), control=RunControl(token=token))
    with pytest.raises(Cancelled, match="user pressed stop"):
        TestModel().request(cancelled)
    expired = ModelRequest(messages=(PROMPT,), deadline=time.monotonic() - 1)
    with pytest.raises(RunTimedOut):
        TestModel().request(expired)
    run_expired = ModelRequest(messages=(PROMPT,), control=RunControl(deadline=time.monotonic()))
    with pytest.raises(RunTimedOut):
        TestModel().stream(run_expired)


def test_cancelling_mid_stream_stops_at_the_next_event() -> None:
    token = CancellationToken()
    request = ModelRequest(messages=(PROMPT,), control=RunControl(token=token))
    stream = TestModel(custom_output_text="one two three").stream(request)
    seen = []
    with pytest.raises(Cancelled):
        for event in stream:
            seen.append(event)
            token.cancel()
    assert len(seen) == 1


STREAM_CASES = {
    "tool calls": (ModelRequest(messages=(PROMPT,), tools=(WEATHER_TOOL, TIME_TOOL)), {}),
    "text": (ModelRequest(messages=(PROMPT,)), {"custom_output_text": "  It is  sunny today. "}),
    "empty text": (ModelRequest(messages=(PROMPT,)), {"custom_output_text": ""}),
    "output tool": (ModelRequest(messages=(PROMPT,), tools=(OUTPUT_TOOL,)), {}),
    "json schema": (ModelRequest(messages=(PROMPT,), output_format=OutputFormat(
        "json_schema", name="answer", schema=ANSWER)), {"seed": 5}),
}


@pytest.mark.parametrize("case", list(STREAM_CASES))
def test_streamed_events_accumulate_to_the_buffered_response(case: str) -> None:
    request, options = STREAM_CASES[case]
    buffered = TestModel(**options).request(request)
    events, streamed = _streamed(TestModel(**options), request)
    assert streamed == buffered

    accumulator = PartAccumulator()
    deltas_only = PartAccumulator()
    for event in events:
        accumulator.apply(event)
        if not isinstance(event, PartEndEvent):
            deltas_only.apply(event)
    assert accumulator.parts() == buffered.parts
    assert deltas_only.parts() == buffered.parts  # the deltas alone rebuild every part
    indexes = [e.index for e in events]
    assert indexes == sorted(indexes)
    assert [e.index for e in events if isinstance(e, PartStartEvent)] == list(
        range(len(buffered.parts))
    )


def test_text_streams_in_words_and_arguments_in_chunks() -> None:
    text_events = list(TestModel(custom_output_text="It is  sunny.").stream(
        ModelRequest(messages=(PROMPT,))
    ))
    assert text_events == [
        PartStartEvent(0, TextPart("")),
        PartDeltaEvent(0, TextPartDelta("It ")),
        PartDeltaEvent(0, TextPartDelta("is  ")),
        PartDeltaEvent(0, TextPartDelta("sunny.")),
        PartEndEvent(0, TextPart("It is  sunny.")),
    ]
    events = list(TestModel().stream(ModelRequest(messages=(PROMPT,), tools=(WEATHER_TOOL,))))
    assert events[0] == PartStartEvent(0, ToolCallPart("get_weather", "", "test-call-0"))
    chunks = [e.delta.args_delta for e in events if isinstance(e, PartDeltaEvent)]
    assert chunks == ['{"city":"mrqx","', 'days":2}']
    assert all(0 < len(c) <= ARGS_CHUNK_CHARS for c in chunks)


def test_response_events_replay_every_part_kind() -> None:
    response = ResponseMessage(parts=(
        ThinkingPart("step one", signature="sig-1"), *all_response_parts(),
    ))
    events = list(response_events(response))
    accumulator = PartAccumulator()
    deltas_only = PartAccumulator()
    for event in events:
        accumulator.apply(event)
        if not isinstance(event, PartEndEvent):
            deltas_only.apply(event)
    assert accumulator.parts() == response.parts == deltas_only.parts()
    assert events[:4] == [
        PartStartEvent(0, ThinkingPart("")),
        PartDeltaEvent(0, ThinkingPartDelta("step ")),
        PartDeltaEvent(0, ThinkingPartDelta("one")),
        PartDeltaEvent(0, ThinkingPartDelta("", signature_delta="sig-1")),
    ]


def test_streamed_usage_and_finish_reason_match_the_buffered_call() -> None:
    request = ModelRequest(messages=(PROMPT,), tools=(WEATHER_TOOL,))
    stream = TestModel().stream(request)
    list(stream)
    assert stream.usage == RequestUsage(input_tokens=5, output_tokens=9)
    assert stream.finish_reason is FinishReason.tool_call
    assert TestModel().stream(request).model_name == "test"


# ------------------------------------------------------------------ FunctionModel


def test_function_model_decides_buffered_responses_and_fills_identity() -> None:
    seen: list[tuple[tuple[Message, ...], AgentInfo]] = []

    def decide(messages: tuple[Message, ...], info: AgentInfo) -> ResponseMessage:
        seen.append((messages, info))
        if len(messages) == 1:
            return ResponseMessage(parts=(ToolCallPart("get_time", "{}", "c1"),))
        return ResponseMessage.from_text("done")

    model = FunctionModel(decide, model_name="fn-model", provider_name="fn-provider")
    assert isinstance(model, Model) and model.profile is PERMISSIVE_PROFILE
    request = ModelRequest(messages=(PROMPT,), instructions=("Be brief.",),
                           tools=(TIME_TOOL, OUTPUT_TOOL),
                           settings=ModelSettings(temperature=0.0))
    first = model.request(request)
    assert first.parts == (ToolCallPart("get_time", "{}", "c1"),)
    assert (first.model_name, first.provider_name) == ("fn-model", "fn-provider")
    assert (first.finish_reason, first.raw_finish_reason) == (FinishReason.tool_call, "tool_call")
    assert first.usage == estimate_usage(request, first.parts)

    messages, info = seen[0]
    assert messages == (PROMPT,)
    assert info.request is request and info.model_name == "fn-model"
    assert info.function_tools == (TIME_TOOL,) and info.output_tools == (OUTPUT_TOOL,)
    assert info.tools == (TIME_TOOL, OUTPUT_TOOL)
    assert info.tool("final_result") is OUTPUT_TOOL and info.tool("missing") is None
    assert info.output_format.kind == "text"
    assert info.settings.temperature == 0.0 and info.instructions == ("Be brief.",)

    second = model.request(ModelRequest(messages=(PROMPT, first, _returns_for(first))))
    assert second.text == "done" and second.finish_reason is FinishReason.stop
    assert model.last_request is not None and model.request_count == 2


def test_function_model_keeps_what_the_function_set() -> None:
    usage = RequestUsage(input_tokens=100, output_tokens=7)
    response = ResponseMessage.from_text(
        "x", usage=usage, model_name="m", provider_name="p",
        finish_reason=FinishReason.length, raw_finish_reason="max_tokens",
    )
    model = FunctionModel(lambda messages, info: response)
    assert model.request(ModelRequest(messages=(PROMPT,))) is response


def test_function_model_rejects_a_non_response() -> None:
    model = FunctionModel(lambda messages, info: "just text")  # type: ignore[arg-type,return-value]
    with pytest.raises(InvalidFunctionResponse, match="got str"):
        model.request(ModelRequest(messages=(PROMPT,)))


def test_function_model_streams_text_chunks_into_one_part() -> None:
    def chunks(messages: tuple[Message, ...], info: AgentInfo) -> Any:
        yield "Hello "
        yield ""
        yield "world"

    model = FunctionModel(stream_function=chunks)
    events, response = _streamed(model, ModelRequest(messages=(PROMPT,)))
    assert events == [
        PartStartEvent(0, TextPart("Hello ")),
        PartDeltaEvent(0, TextPartDelta("world")),
        PartEndEvent(0, TextPart("Hello world")),
    ]
    assert response == ResponseMessage(
        parts=(TextPart("Hello world"),),
        usage=RequestUsage(input_tokens=5, output_tokens=3),
        model_name="function", provider_name="function",
        finish_reason=FinishReason.stop, raw_finish_reason="stop",
    )


def test_function_model_streams_interleaved_tool_calls_with_stable_indexes() -> None:
    def deltas(messages: tuple[Message, ...], info: AgentInfo) -> Any:
        yield DeltaThinking("Let me ", key="t")
        yield "Checking."
        yield DeltaToolCall(name="get_weather", json_args='{"city":', key=0)
        yield DeltaToolCall(name="get_time", tool_call_id="own-id", key=1)
        yield DeltaToolCall(json_args='"Oslo"}', key=0)
        yield DeltaThinking("think.", signature="sig", key="t")
        yield DeltaToolCall(json_args="{}", key=1)
        yield " Done."

    model = FunctionModel(stream_function=deltas)
    history = (PROMPT, ResponseMessage(parts=(ToolCallPart("get_time", "{}", "old"),)),
               RequestMessage(parts=(ToolReturnPart("get_time", "old", 1),)))
    events, response = _streamed(model, ModelRequest(messages=history))
    assert events == [
        PartStartEvent(0, ThinkingPart("Let me ")),
        PartStartEvent(1, TextPart("Checking.")),
        PartStartEvent(2, ToolCallPart("get_weather", '{"city":', "function-call-1")),
        PartStartEvent(3, ToolCallPart("get_time", "", "own-id")),
        PartDeltaEvent(2, ToolCallPartDelta(args_delta='"Oslo"}')),
        PartDeltaEvent(0, events[5].delta),
        PartDeltaEvent(3, ToolCallPartDelta(args_delta="{}")),
        PartStartEvent(4, TextPart(" Done.")),
        PartEndEvent(0, ThinkingPart("Let me think.", signature="sig")),
        PartEndEvent(1, TextPart("Checking.")),
        PartEndEvent(2, ToolCallPart("get_weather", '{"city":"Oslo"}', "function-call-1")),
        PartEndEvent(3, ToolCallPart("get_time", "{}", "own-id")),
        PartEndEvent(4, TextPart(" Done.")),
    ]
    assert response.parts == tuple(e.part for e in events if isinstance(e, PartEndEvent))
    assert response.finish_reason is FinishReason.tool_call
    assert response.usage == estimate_usage(ModelRequest(messages=history), response.parts)


def test_function_model_late_deltas_set_the_call_id_and_extend_the_name() -> None:
    def deltas(messages: tuple[Message, ...], info: AgentInfo) -> Any:
        yield DeltaToolCall(name="get_", key=0)
        yield DeltaToolCall(name="time", json_args="{}", tool_call_id="late", key=0)

    _, response = _streamed(FunctionModel(stream_function=deltas),
                            ModelRequest(messages=(PROMPT,)))
    assert response.parts == (ToolCallPart("get_time", "{}", "late"),)


def test_function_model_streamed_and_buffered_agree() -> None:
    def buffered(messages: tuple[Message, ...], info: AgentInfo) -> ResponseMessage:
        return ResponseMessage(parts=(TextPart("It is sunny"),
                                      ToolCallPart("get_time", "{}", "function-call-0")))

    def streamed(messages: tuple[Message, ...], info: AgentInfo) -> Any:
        yield from ["It ", "is ", "sunny"]
        yield DeltaToolCall(name="get_time", json_args="{}")

    model = FunctionModel(buffered, stream_function=streamed)
    request = ModelRequest(messages=(PROMPT,), tools=(TIME_TOOL,))
    assert _streamed(model, request)[1] == model.request(request)


@pytest.mark.parametrize("bad", [
    [DeltaToolCall(json_args="{}")],
    [42],
    [b"bytes"],
])
def test_function_model_rejects_malformed_stream_items(bad: list[Any]) -> None:
    model = FunctionModel(stream_function=lambda messages, info: iter(bad))
    with pytest.raises(InvalidFunctionResponse):
        _streamed(model, ModelRequest(messages=(PROMPT,)))


def test_function_model_rejects_a_stream_function_returning_a_string() -> None:
    model = FunctionModel(stream_function=lambda messages, info: "text")
    with pytest.raises(InvalidFunctionResponse, match="iterable of stream items"):
        model.stream(ModelRequest(messages=(PROMPT,)))


def test_delta_values_check_their_fields() -> None:
    with pytest.raises(InvalidFunctionResponse):
        DeltaToolCall(name=3)  # type: ignore[arg-type]
    with pytest.raises(InvalidFunctionResponse):
        DeltaToolCall(key=True)
    with pytest.raises(InvalidFunctionResponse):
        DeltaThinking(content=None)  # type: ignore[arg-type]


def test_missing_functions_raise_a_clear_error() -> None:
    with pytest.raises(MissingModelFunction, match="needs function=, stream_function="):
        FunctionModel()
    stream_only = FunctionModel(stream_function=lambda messages, info: iter(["x"]))
    with pytest.raises(MissingModelFunction, match="pass function="):
        stream_only.request(ModelRequest(messages=(PROMPT,)))
    buffered_only = FunctionModel(lambda messages, info: ResponseMessage.from_text("x"))
    with pytest.raises(MissingModelFunction, match="pass stream_function="):
        buffered_only.stream(ModelRequest(messages=(PROMPT,)))
    assert stream_only.request_count == 0 and buffered_only.request_count == 0


def test_function_model_honours_profile_and_cancellation() -> None:
    calls: list[int] = []

    def answer(messages: tuple[Message, ...], info: AgentInfo) -> ResponseMessage:
        calls.append(1)
        return ResponseMessage.from_text("x")

    model = FunctionModel(answer, profile=ModelProfile(json_schema_output=False))
    schema_request = ModelRequest(messages=(PROMPT,), output_format=OutputFormat(
        "json_schema", name="answer", schema=ANSWER))
    with pytest.raises(UnsupportedModelFeature):
        model.request(schema_request)
    token = CancellationToken()
    token.cancel()
    with pytest.raises(Cancelled):
        model.request(ModelRequest(messages=(PROMPT,), control=RunControl(token=token)))
    assert calls == []


def test_application_errors_pass_through_unwrapped() -> None:
    def broken(messages: tuple[Message, ...], info: AgentInfo) -> ResponseMessage:
        raise KeyError("app bug")

    with pytest.raises(KeyError):
        FunctionModel(broken).request(ModelRequest(messages=(PROMPT,)))


def test_user_prompt_parts_survive_in_the_request_seen_by_the_function() -> None:
    captured: list[tuple[Message, ...]] = []

    def answer(messages: tuple[Message, ...], info: AgentInfo) -> ResponseMessage:
        captured.append(messages)
        return ResponseMessage.from_text("ok")

    FunctionModel(answer).request(ModelRequest(messages=(PROMPT,)))
    assert captured == [(PROMPT,)]
    assert isinstance(captured[0][0].parts[0], UserPromptPart)
