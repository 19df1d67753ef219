"""zigai.tool: manual, reflected and contextual tools, follow-ups, limits, definitions."""

from __future__ import annotations

import pickle
import threading
import time
from dataclasses import dataclass

import pytest

from zigai import reflect
from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut
from zigai.messages import RequestMessage, RetryPromptPart, SystemPromptPart, UserPromptPart
from zigai.model import ToolDefinition
from zigai.tool import (
    DependencyTypeMismatch,
    InvalidFollowUpMessage,
    InvalidToolArguments,
    ModelRetry,
    ReturnSchemaVisibility,
    Tool,
    ToolDefinitionError,
    ToolExecution,
    ToolLimits,
    ToolOutput,
    ToolReturn,
    ToolRunContext,
    ToolTimedOut,
    follow_up_bytes,
)

ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}


@dataclass(frozen=True)
class Weather:
    temperature_c: int


@dataclass
class Deps:
    unit: str


def test_manual_tool_validates_then_calls_with_the_argument_dict() -> None:
    seen: list[dict[str, int]] = []

    def add(args: dict[str, int]) -> int:
        seen.append(args)
        return args["a"] + args["b"]

    tool = Tool.manual("add", "Add two numbers.", ADD_SCHEMA, add)
    assert tool.takes_context is False
    args = tool.validate_arguments('{"a":2,"b":3}')
    assert args.arguments == {"a": 2, "b": 3}
    assert tool.execute(args, ToolRunContext()) == ToolOutput(5)
    with pytest.raises(InvalidToolArguments, match="'b' is a required property"):
        tool.validate_arguments('{"a":2}')
    assert seen == [{"a": 2, "b": 3}]


def test_manual_tool_with_context_receives_it_second() -> None:
    def whoami(args: dict[str, object], ctx: ToolRunContext) -> str:
        return f"{ctx.tool_name}/{ctx.tool_call_id}/{ctx.retry}"

    tool = Tool.manual("whoami", "", {"type": "object"}, whoami)
    assert tool.takes_context is True
    ctx = ToolRunContext(tool_name="whoami", tool_call_id="c1", retry=2)
    assert tool.execute(tool.validate_arguments("{}"), ctx).content == "whoami/c1/2"


def test_manual_tool_may_return_tool_output_with_follow_ups() -> None:
    note = RequestMessage((UserPromptPart("from the roof sensor"),))

    def lookup(args: dict[str, object]) -> ToolOutput:
        return ToolOutput({"temperature_c": 31}, (note,))

    tool = Tool.manual("lookup", "", {"type": "object"}, lookup)
    output = tool.execute(tool.validate_arguments("{}"), ToolRunContext())
    assert output.content == {"temperature_c": 31}
    assert output.follow_up_messages == (note,)


def test_contextual_reflected_tool_reads_typed_dependencies() -> None:
    def weather(ctx: ToolRunContext, city: str) -> Weather:
        deps = ctx.dependency(Deps)
        return Weather(31 if deps.unit == "c" else 88)

    tool = reflect.tool("weather", "Current weather.", weather)
    assert tool.takes_context is True
    assert tool.parameters_json_schema == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    }
    args = tool.validate_arguments('{"city":"Lisbon"}')
    assert tool.execute(args, ToolRunContext(deps=Deps("f"))).content == {"temperature_c": 88}
    with pytest.raises(DependencyTypeMismatch, match="expected dependencies of type Deps, got str"):
        tool.execute(args, ToolRunContext(deps="nope", tool_name="weather"))


def test_tool_return_pairs_a_typed_value_with_follow_ups() -> None:
    def lookup(city: str) -> ToolReturn[Weather]:
        return ToolReturn(
            Weather(31),
            (RequestMessage((UserPromptPart("The reading came from the roof sensor."),)),),
        )

    tool = reflect.tool("lookup", "", lookup)
    assert tool.return_json_schema == reflect.json_schema(Weather)
    output = tool.execute(tool.validate_arguments('{"city":"x"}'), ToolRunContext())
    assert output.content == {"temperature_c": 31}
    assert output.follow_up_messages[0].parts == (UserPromptPart("The reading came from the roof sensor."),)


def test_follow_ups_may_contain_only_user_prompts() -> None:
    with pytest.raises(InvalidFollowUpMessage, match=r"parts\[1\] is a SystemPromptPart"):
        ToolReturn(1, (RequestMessage((UserPromptPart("ok"), SystemPromptPart("no"))),))
    with pytest.raises(InvalidFollowUpMessage, match="RetryPromptPart"):
        ToolOutput(1, [RequestMessage((RetryPromptPart("no"),))])
    with pytest.raises(InvalidFollowUpMessage, match="must be a RequestMessage"):
        ToolOutput(1, ["text"])  # type: ignore[list-item]
    with pytest.raises(InvalidFollowUpMessage, match="sequence"):
        ToolReturn(1, "text")  # type: ignore[arg-type]


def test_follow_up_bytes_count_strings_and_binary_data() -> None:
    from zigai.messages import BinaryContent, TextContent

    messages = (
        RequestMessage((UserPromptPart("héllo"),)),  # 6 UTF-8 bytes
        RequestMessage((UserPromptPart((TextContent("ab"), BinaryContent(b"\x00" * 10, "x/y"))),)),
    )
    assert follow_up_bytes(messages) == 6 + 2 + 10 + 3


def test_model_retry_and_application_errors_pass_through_execute() -> None:
    def picky(args: dict[str, object]) -> None:
        raise ModelRetry("use a smaller number")

    def broken(args: dict[str, object]) -> None:
        raise KeyError("app bug")

    ctx = ToolRunContext()
    with pytest.raises(ModelRetry, match="smaller"):
        Tool.manual("picky", "", {"type": "object"}, picky).execute(
            Tool.manual("picky", "", {"type": "object"}, picky).validate_arguments("{}"), ctx
        )
    tool = Tool.manual("broken", "", {"type": "object"}, broken)
    with pytest.raises(KeyError):
        tool.execute(tool.validate_arguments("{}"), ctx)


def test_per_tool_limits_only_tighten() -> None:
    agent = ToolLimits(max_active=4, max_queued=10, timeout_ms=500)
    tool = ToolLimits(max_active=8, max_queued=2, max_result_bytes=100, timeout_ms=None)
    combined = agent.tightened_by(tool)
    assert combined == ToolLimits(
        max_active=4, max_queued=2, max_result_bytes=100, max_follow_ups=16,
        max_follow_up_bytes=1 << 20, timeout_ms=500,
    )
    assert ToolLimits().tightened_by(ToolLimits(timeout_ms=30)).timeout_ms == 30
    assert agent.tightened_by(ToolLimits(timeout_ms=100)).timeout_ms == 100
    assert agent.tightened_by(None) is agent


def test_default_limits_follow_the_spec() -> None:
    limits = ToolLimits()
    assert (limits.max_active, limits.max_queued, limits.max_result_bytes) == (8, 64, 1 << 20)
    assert (limits.max_follow_ups, limits.max_follow_up_bytes, limits.timeout_ms) == (16, 1 << 20, None)


@pytest.mark.parametrize(
    "kwargs", [{"max_active": 0}, {"max_queued": -1}, {"timeout_ms": -1}, {"max_active": True}]
)
def test_nonsense_limits_are_rejected(kwargs: dict[str, int]) -> None:
    with pytest.raises(ToolDefinitionError):
        ToolLimits(**kwargs)


def test_return_schema_stays_local_by_default() -> None:
    def weather(city: str) -> Weather:
        return Weather(31)

    local = reflect.tool("weather", "Get the weather.", weather)
    definition = local.definition()
    assert definition == ToolDefinition(
        name="weather",
        description="Get the weather.",
        parameters_json_schema=local.parameters_json_schema,
        return_json_schema=reflect.json_schema(Weather),
    )
    shown = reflect.tool(
        "weather", "Get the weather.", weather,
        return_schema_visibility=ReturnSchemaVisibility.model_description,
    )
    assert shown.definition().description == (
        "Get the weather.\n\nReturn value JSON Schema: "
        '{"additionalProperties":false,"properties":{"temperature_c":{"type":"integer"}},'
        '"required":["temperature_c"],"type":"object"}'
    )


def test_definition_carries_policy_fields_and_local_metadata() -> None:
    tool = Tool.manual(
        "publish", "Publish.", {"type": "object"}, lambda a: None,
        execution=ToolExecution.requires_approval, sequential=True, strict=True,
        max_retries=3, metadata={"owner": "ops"},
    )
    definition = tool.definition()
    assert (definition.sequential, definition.strict, definition.metadata) == (True, True, {"owner": "ops"})
    assert tool.execution is ToolExecution.requires_approval
    assert tool.max_retries == 3


def test_tools_are_immutable_and_replace_makes_copies() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    tool = Tool.manual("find", "", schema, lambda a: a)
    schema["properties"]["q"]["type"] = "integer"
    assert tool.parameters_json_schema["properties"]["q"] == {"type": "string"}
    tool.parameters_json_schema["properties"].clear()
    assert tool.parameters_json_schema["properties"] == {"q": {"type": "string"}}
    with pytest.raises(AttributeError):
        tool.name = "other"  # type: ignore[misc]
    renamed = tool.replace(name="db__find", metadata={"k": 1})
    assert (renamed.name, dict(renamed.metadata or {})) == ("db__find", {"k": 1})
    assert tool.name == "find" and tool.metadata is None
    with pytest.raises(ToolDefinitionError, match="unknown fields"):
        tool.replace(colour="red")


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array"},
        {"type": "object", "properties": {"q": {"type": "string", "pattern": "^a"}}},
        {"type": "object", "properties": {"q": {"type": "strin"}}},
    ],
)
def test_broken_or_unsupported_schemas_fail_at_construction(schema: dict[str, object]) -> None:
    with pytest.raises(ToolDefinitionError):
        Tool.manual("t", "", schema, lambda a: a)


def test_unchecked_schemas_still_bound_and_require_an_object() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string", "pattern": "^a"}}}
    tool = Tool.manual("t", "", schema, lambda a: a, check_arguments=False)
    assert tool.validate_arguments('{"q":"zzz"}').arguments == {"q": "zzz"}
    with pytest.raises(InvalidToolArguments):
        tool.validate_arguments('"q"')


def test_unencodable_results_are_reported_with_the_tool_name() -> None:
    tool = Tool.manual("raw", "", {"type": "object"}, lambda a: {"data": 1j})
    with pytest.raises(reflect.EncodeError, match=r"tool 'raw' returned a value that is not JSON: \$\.data"):
        tool.execute(tool.validate_arguments("{}"), ToolRunContext())


def test_context_deadline_is_the_earlier_of_call_and_run() -> None:
    now = time.monotonic()
    ctx = ToolRunContext(control=RunControl(deadline=now + 10), call_deadline=now + 1)
    assert ctx.deadline == now + 1
    ctx = ToolRunContext(control=RunControl(deadline=now + 1), call_deadline=now + 10)
    assert ctx.deadline == now + 1
    assert ToolRunContext().deadline is None


def test_context_sleep_stops_on_call_timeout_run_timeout_and_cancellation() -> None:
    now = time.monotonic()
    with pytest.raises(ToolTimedOut):
        ToolRunContext(call_deadline=now + 0.02).sleep(5)
    with pytest.raises(RunTimedOut):
        ToolRunContext(control=RunControl(deadline=now + 0.02)).sleep(5)
    token = CancellationToken()
    ctx = ToolRunContext(call_token=token)
    threading.Timer(0.02, token.cancel).start()
    with pytest.raises(Cancelled):
        ctx.sleep(5)
    assert ctx.cancelled


def test_tool_errors_pickle_with_their_attributes() -> None:
    error = InvalidToolArguments("bad", tool_name="t", errors=(("$.a", "no"),))
    clone = pickle.loads(pickle.dumps(error))
    assert (str(clone), clone.tool_name, clone.errors) == ("bad", "t", (("$.a", "no"),))
