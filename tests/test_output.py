"""Structured output: every OutputSpec mode, output functions, validators and end strategies."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from support.agent_script import Script, call, reply

from zigai.agent import Agent, OutputRetriesExceeded
from zigai.json_schema import InvalidJsonSchema, OutputSchemaValidationFailed, UnsupportedJsonSchema
from zigai.messages import RequestMessage, RetryPromptPart, ToolOutcome, ToolReturnPart
from zigai.model import ModelProfile, OutputFormat, UnsupportedModelFeature
from zigai.output import (
    DEFAULT_PROMPT_TEMPLATE,
    EndStrategy,
    InvalidOutputSpec,
    OutputChoice,
    OutputResult,
    OutputSpec,
    prepare_output,
)
from zigai.reflect import tool
from zigai.testing import PERMISSIVE_PROFILE, TestModel

POINT = {
    "type": "object",
    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
    "required": ["x", "y"],
    "additionalProperties": False,
}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@dataclass
class Point:
    x: int
    y: int


def _noted(log: list[str], label: str):  # type: ignore[no-untyped-def]
    def fn(text: str) -> str:
        log.append(f"{label}:{text}")
        return label

    return fn


# -- preparation ----------------------------------------------------------------------------


def test_json_schema_spec_prepares_one_named_native_format() -> None:
    prepared = prepare_output(OutputSpec.json_schema("point", POINT, description="A point"),
                              PERMISSIVE_PROFILE)
    assert prepared.output_format == OutputFormat("json_schema", name="point", schema=POINT,
                                                  description="A point")
    assert prepared.tool_definitions == () and prepared.instruction is None


def test_native_union_becomes_one_any_of_schema_with_hoisted_defs() -> None:
    with_defs = {"$defs": {"N": {"type": "string"}}, "type": "object",
                 "properties": {"n": {"$ref": "#/$defs/N"}}, "required": ["n"]}
    spec = OutputSpec.native([OutputChoice("point", POINT), OutputChoice("named", with_defs)])
    prepared = prepare_output(spec, PERMISSIVE_PROFILE)
    fmt = prepared.output_format
    assert fmt.name == "final_result"
    assert fmt.schema == {
        "anyOf": [POINT, {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}, "required": ["n"]}],
        "$defs": {"N": {"type": "string"}},
    }
    assert prepared.check_value({"n": "a"}).choice.name == "named"
    assert prepared.check_value({"x": 1, "y": 2}).choice.name == "point"


def test_union_with_conflicting_defs_or_root_refs_is_rejected() -> None:
    a = {"$defs": {"N": {"type": "string"}}, "$ref": "#/$defs/N"}
    b = {"$defs": {"N": {"type": "integer"}}, "$ref": "#/$defs/N"}
    with pytest.raises(InvalidOutputSpec):
        prepare_output(OutputSpec.native([OutputChoice("a", a), OutputChoice("b", b)]), PERMISSIVE_PROFILE)
    recursive = {"type": "array", "items": {"$ref": "#"}}
    with pytest.raises(InvalidOutputSpec):
        prepare_output(OutputSpec.native([OutputChoice("a", recursive), OutputChoice("b", POINT)]),
                       PERMISSIVE_PROFILE)


def test_malformed_and_unsupported_schemas_fail_at_preparation() -> None:
    with pytest.raises(InvalidJsonSchema):
        prepare_output(OutputSpec.json_schema("o", {"type": 5}), PERMISSIVE_PROFILE)
    with pytest.raises(UnsupportedJsonSchema):
        prepare_output(OutputSpec.json_schema("o", {"type": "string", "pattern": "a+"}), PERMISSIVE_PROFILE)


def test_malformed_specs_are_rejected_on_construction() -> None:
    with pytest.raises(InvalidOutputSpec):
        OutputChoice("bad name!", POINT)
    with pytest.raises(InvalidOutputSpec):
        OutputSpec.native([])
    with pytest.raises(InvalidOutputSpec):
        OutputSpec.tool([OutputChoice("a", POINT), OutputChoice("a", NAME)])
    with pytest.raises(InvalidOutputSpec):
        OutputSpec.prompted([OutputChoice("a", POINT)], template="no marker")
    with pytest.raises(InvalidOutputSpec):
        OutputSpec.prompted([OutputChoice("a", POINT)], template="{schema} {schema}")
    with pytest.raises(InvalidOutputSpec):
        OutputChoice("a", {"x": float("nan")})


def test_schema_failure_prevents_the_first_model_request() -> None:
    script = Script([reply("{}")])
    with pytest.raises(UnsupportedJsonSchema):
        Agent(script.model, output=OutputSpec.json_schema("o", {"type": "string", "pattern": "x"})).run("hi")
    assert script.requests == []


def test_capability_mismatches_fail_before_network() -> None:
    bare = ModelProfile(supports_tools=False, supports_system_messages=False)
    spec_errors = [
        OutputSpec.json_object(), OutputSpec.json_schema("p", POINT),
        OutputSpec.native([OutputChoice("p", POINT)]), OutputSpec.tool([OutputChoice("p", POINT)]),
        OutputSpec.prompted([OutputChoice("p", POINT)]),
    ]
    for spec in spec_errors:
        with pytest.raises(UnsupportedModelFeature):
            prepare_output(spec, bare)


# -- text-based structured modes -------------------------------------------------------------


def test_json_object_output_accepts_objects_and_corrects_non_objects() -> None:
    script = Script([reply("[1, 2]"), reply('{"a": 1}')])
    with Agent(script.model, output=OutputSpec.json_object()).run("hi") as result:
        assert result.output == {"a": 1}
        assert script.requests[0].output_format == OutputFormat("json_object")
        retry = result.messages[2]
        assert isinstance(retry, RequestMessage)
        assert retry.parts == (RetryPromptPart("The response must be a JSON object.", timestamp=retry.timestamp),)


def test_native_output_validates_locally_and_appends_a_correction() -> None:
    script = Script([reply('{"x": 1}'), reply('{"x": 1, "y": 2}')])
    agent = Agent(script.model, output=OutputSpec.json_schema("point", POINT))
    with agent.run("hi") as result:
        assert result.output == {"x": 1, "y": 2}
        assert result.output_name == "point"
        retry = result.messages[2].parts[0]
        assert isinstance(retry, RetryPromptPart)
        assert "'y' is a required property" in retry.content
        assert script.requests[1].messages[-1] == result.messages[2]


def test_invalid_json_text_is_corrected_then_bounded() -> None:
    script = Script([reply("not json"), reply("still not")])
    with pytest.raises(OutputRetriesExceeded) as info:
        Agent(script.model, output=OutputSpec.json_schema("point", POINT)).run("hi")
    assert "not valid JSON" in (info.value.last_error or "")
    assert info.value.max_retries == 1


def test_schema_failure_past_the_budget_chains_the_schema_error() -> None:
    script = Script([reply('{"x": 1}')])
    with pytest.raises(OutputRetriesExceeded) as info:
        Agent(script.model, output=OutputSpec.json_schema("point", POINT), max_output_retries=0).run("hi")
    assert isinstance(info.value.__cause__, OutputSchemaValidationFailed)


def test_prompted_output_renders_the_template_and_uses_json_object_mode_when_available() -> None:
    script = Script([reply('```json\n{"x": 3, "y": 4}\n```')])
    spec = OutputSpec.prompted([OutputChoice("point", POINT)], template="Schema: {schema}!")
    with Agent(script.model, instructions="base", output=spec).run("hi") as result:
        assert result.output == {"x": 3, "y": 4}
        rendered = "Schema: " + json.dumps(POINT, sort_keys=True, separators=(",", ":")) + "!"
        assert script.requests[0].instructions == ("base", rendered)
        assert script.requests[0].output_format == OutputFormat("json_object")


def test_prompted_output_falls_back_to_text_mode_and_default_template() -> None:
    profile = ModelProfile(json_object_output=False)
    script = Script([reply('{"x": 3, "y": 4}')], profile=profile)
    with Agent(script.model, output=OutputSpec.prompted([OutputChoice("point", POINT)])).run("hi"):
        assert script.requests[0].output_format == OutputFormat("text")
        assert script.requests[0].instructions[0].startswith(DEFAULT_PROMPT_TEMPLATE.split("{")[0])


# -- tool output -------------------------------------------------------------------------------


def test_tool_output_prepares_one_synthetic_tool_per_choice_and_wraps_non_objects() -> None:
    spec = OutputSpec.tool([OutputChoice("point", POINT, "A point"),
                            OutputChoice("count", {"type": "integer", "minimum": 0})])
    prepared = prepare_output(spec, PERMISSIVE_PROFILE)
    point, count = prepared.tool_definitions
    assert (point.name, point.kind, point.description) == ("point", "output", "A point")
    assert point.parameters_json_schema == POINT
    assert count.parameters_json_schema == {
        "type": "object", "properties": {"value": {"type": "integer", "minimum": 0}},
        "required": ["value"], "additionalProperties": False,
    }


def test_tool_output_unwraps_value_and_names_the_branch() -> None:
    spec = OutputSpec.tool([OutputChoice("point", POINT), OutputChoice("count", {"type": "integer"})])
    script = Script([reply(call("count", {"value": 7}, "c1"))])
    with Agent(script.model, output=spec).run("hi") as result:
        assert result.output == 7 and result.output_name == "count"
        assert [t.name for t in script.requests[0].tools] == ["point", "count"]
        assert result.messages[-1].parts == (
            ToolReturnPart("count", "c1", "Final result processed.", timestamp=result.messages[-1].timestamp),)


def test_tool_output_invalid_arguments_become_a_tool_retry() -> None:
    spec = OutputSpec.tool([OutputChoice("point", POINT)])
    script = Script([reply(call("point", {"x": "a", "y": 1}, "c1")), reply(call("point", {"x": 1, "y": 1}, "c2"))])
    with Agent(script.model, output=spec).run("hi") as result:
        retry = result.messages[2].parts[0]
        assert isinstance(retry, RetryPromptPart)
        assert (retry.tool_name, retry.tool_call_id) == ("point", "c1")
        assert result.output == {"x": 1, "y": 1}


def test_tool_output_text_answer_is_corrected() -> None:
    spec = OutputSpec.tool([OutputChoice("point", POINT)])
    script = Script([reply("here you go"), reply(call("point", {"x": 1, "y": 2}))])
    with Agent(script.model, output=spec).run("hi") as result:
        assert "Call one of the output tools (point)" in result.messages[2].parts[0].content
        assert result.output == {"x": 1, "y": 2}


def test_output_function_value_and_explicit_retry() -> None:
    seen = []

    def to_point(ctx, value):  # type: ignore[no-untyped-def]
        seen.append((ctx.choice_name, ctx.retry))
        if value["x"] < 0:
            return OutputResult.retry("x must be positive")
        return Point(**value)

    spec = OutputSpec.tool([OutputChoice("point", POINT, function=to_point)])
    script = Script([reply(call("point", {"x": -1, "y": 0})), reply(call("point", {"x": 2, "y": 0}))])
    with Agent(script.model, output=spec).run("hi") as result:
        assert result.output == Point(2, 0)
        assert result.messages[2].parts[0].content == "x must be positive"
    assert seen == [("point", 0), ("point", 1)]


def test_output_function_exceptions_stop_the_run_unwrapped() -> None:
    class Boom(Exception):
        pass

    def explode(ctx, value):  # type: ignore[no-untyped-def]
        raise Boom("no")

    spec = OutputSpec.json_schema("point", POINT, function=explode)
    with pytest.raises(Boom):
        Agent(Script([reply('{"x": 1, "y": 1}')]).model, output=spec).run("hi")


def test_validators_run_in_order_and_transformed_output_is_rechecked() -> None:
    order = []

    def first(name, ctx, value):  # type: ignore[no-untyped-def]
        order.append(("first", name, dict(value)))
        return OutputResult.output({**value, "x": value["x"] + 1})

    def second(name, ctx, value):  # type: ignore[no-untyped-def]
        order.append(("second", name, dict(value)))
        return OutputResult.output(value)

    script = Script([reply('{"x": 1, "y": 1}')])
    with Agent(script.model, output=OutputSpec.json_schema("point", POINT),
               output_validators=[first, second]).run("hi") as result:
        assert result.output == {"x": 2, "y": 1}
    assert order == [("first", "point", {"x": 1, "y": 1}), ("second", "point", {"x": 2, "y": 1})]

    breaking = lambda name, ctx, value: OutputResult.output({"x": "bad"})  # noqa: E731
    s2 = Script([reply('{"x": 1, "y": 1}'), reply('{"x": 1, "y": 1}')])
    with pytest.raises(OutputRetriesExceeded) as info:
        Agent(s2.model, output=OutputSpec.json_schema("point", POINT), output_validators=[breaking]).run("hi")
    assert "JSON Schema" in (info.value.last_error or "")


def test_validator_must_return_an_output_result() -> None:
    script = Script([reply("x")])
    with pytest.raises(InvalidOutputSpec):
        Agent(script.model, output_validators=[lambda n, c, v: v]).run("hi")


# -- end strategies -----------------------------------------------------------------------------


def _mixed_script() -> Script:
    return Script([reply(
        call("side", {"text": "before"}, "1"),
        call("point", {"x": 1, "y": 2}, "2"),
        call("side", {"text": "after"}, "3"),
        call("point", {"x": 5, "y": 5}, "4"),
    )])


def _run(strategy: EndStrategy) -> tuple[list[str], tuple]:  # type: ignore[type-arg]
    log: list[str] = []
    side = tool("side", "Side effect.", _noted(log, "side"))
    agent = Agent(_mixed_script().model, tools=[side], output=OutputSpec.tool([OutputChoice("point", POINT)]),
                  end_strategy=strategy)
    with agent.run("go") as result:
        assert result.output == {"x": 1, "y": 2}
        return log, result.messages[-1].parts


def test_graceful_runs_calls_before_the_first_output_and_skips_later_ones() -> None:
    log, parts = _run(EndStrategy.graceful)
    assert log == ["side:before"]
    assert [(p.tool_call_id, p.outcome) for p in parts] == [
        ("1", ToolOutcome.success), ("2", ToolOutcome.success),
        ("3", ToolOutcome.skipped), ("4", ToolOutcome.skipped),
    ]
    assert parts[0].content == "side" and parts[2].content.startswith("Tool not executed")


def test_early_skips_every_ordinary_call_once_an_output_succeeds() -> None:
    log, parts = _run(EndStrategy.early)
    assert log == []
    assert [p.outcome for p in parts] == [ToolOutcome.skipped, ToolOutcome.success,
                                          ToolOutcome.skipped, ToolOutcome.skipped]


def test_exhaustive_runs_every_call_and_keeps_the_first_output() -> None:
    log, parts = _run(EndStrategy.exhaustive)
    assert log == ["side:before", "side:after"]
    assert [p.outcome for p in parts] == [ToolOutcome.success, ToolOutcome.success,
                                          ToolOutcome.success, ToolOutcome.skipped]


def test_ordinary_calls_run_when_no_output_call_succeeds() -> None:
    log: list[str] = []
    side = tool("side", "Side effect.", _noted(log, "side"))
    script = Script([
        reply(call("side", {"text": "a"}, "1"), call("point", {"x": "bad"}, "2")),
        reply(call("point", {"x": 1, "y": 1}, "3")),
    ])
    agent = Agent(script.model, tools=[side], output=OutputSpec.tool([OutputChoice("point", POINT)]),
                  end_strategy=EndStrategy.early)
    with agent.run("go") as result:
        assert log == ["side:a"]
        assert isinstance(result.messages[2].parts[1], RetryPromptPart)


# -- typed output --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["native", "tool", "prompted"])
def test_run_typed_decodes_into_the_type_for_each_mode(mode: str) -> None:
    if mode == "tool":
        answer = reply(call("Point", {"x": 1, "y": 2}))
    else:
        answer = reply('{"x": 1, "y": 2}')
    script = Script([answer])
    with Agent(script.model).run_typed(Point, "hi", mode=mode) as result:  # type: ignore[arg-type]
        assert result.value == Point(1, 2)
        assert result.json == {"x": 1, "y": 2}
        assert result.output_name == "Point"
    with pytest.raises(Exception, match="after close"):
        result.value  # noqa: B018


def test_run_typed_with_test_model_defaults_to_native() -> None:
    with Agent(TestModel()).run_typed(Point, "hi") as result:
        assert isinstance(result.value, Point)
        assert result.json == {"x": result.value.x, "y": result.value.y}


def test_run_typed_wraps_scalar_types_in_tool_mode() -> None:
    script = Script([reply(call("int", {"value": 4}))])
    with Agent(script.model).run_typed(int, "hi", mode="tool") as result:
        assert result.value == 4
