"""Tool: every malformed definition is refused with a message naming the tool and the field;
the accessors report what was configured; context detection follows the signature."""

from __future__ import annotations

from typing import Any

import pytest

from zigai.tool import (
    InvalidToolArguments,
    ReturnSchemaVisibility,
    Tool,
    ToolDefinitionError,
    ToolExecution,
    ToolLimits,
    ToolRunContext,
)

OBJECT = {"type": "object", "properties": {"x": {"type": "integer"}}}


def _identity(args: dict[str, Any]) -> dict[str, Any]:
    return args


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"description": 3}, "description must be a string"),
        ({"parameters_json_schema": ["not", "a", "dict"]}, "parameters schema must be a JSON object"),
        ({"parameters_json_schema": {"type": "object", "default": float("nan")}}, "parameters schema is not JSON"),
        ({"parameters_json_schema": {"type": "array"}}, "must describe an object"),
        ({"return_json_schema": {"type": "object", "x": {1, 2}}}, "return schema is not JSON"),
        ({"invoke": "not callable"}, "function must be callable"),
        ({"max_retries": -1}, "max_retries must be None or an int >= 0"),
        ({"max_retries": True}, "max_retries must be None or an int >= 0"),
        ({"limits": {"timeout_ms": 5}}, "limits must be a ToolLimits"),
        ({"execution": "teleport"}, "'teleport'"),
        ({"return_schema_visibility": "loud"}, "'loud'"),
        ({"metadata": ["a"]}, "metadata must be a mapping"),
    ],
)
def test_a_malformed_tool_definition_is_refused_naming_the_tool(
    overrides: dict[str, Any], message: str
) -> None:
    options: dict[str, Any] = {
        "name": "calc",
        "description": "Calculate.",
        "parameters_json_schema": OBJECT,
        "invoke": lambda value, ctx: value,
        "takes_context": False,
    }
    options.update(overrides)
    with pytest.raises(ToolDefinitionError, match=message) as caught:
        Tool(**options)
    assert "'calc'" in str(caught.value)


def test_manual_refuses_a_function_that_is_not_callable() -> None:
    with pytest.raises(ToolDefinitionError, match="'calc': function must be callable"):
        Tool.manual("calc", "Calculate.", OBJECT, 42)  # type: ignore[arg-type]


def test_accessors_report_the_configuration() -> None:
    limits = ToolLimits(timeout_ms=250)
    made = Tool.manual(
        "calc", "Calculate.", OBJECT, _identity,
        limits=limits, strict=True, metadata={"team": "math"},
        return_json_schema={"type": "object"},
        return_schema_visibility=ReturnSchemaVisibility.local,
        execution=ToolExecution.immediate,
    )
    assert made.limits is limits and made.strict is True
    assert made.return_schema_visibility is ReturnSchemaVisibility.local
    assert dict(made.metadata or {}) == {"team": "math"}
    with pytest.raises(TypeError):
        made.metadata["team"] = "x"  # type: ignore[index]
    assert made.return_json_schema == {"type": "object"}
    assert "calc" in repr(made) and "immediate" in repr(made)
    with pytest.raises(AttributeError, match="immutable"):
        made.name = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del made.description  # type: ignore[misc]


def test_arguments_that_are_not_text_are_refused_with_a_message_for_the_model() -> None:
    made = Tool.manual("calc", "Calculate.", OBJECT, _identity)
    with pytest.raises(InvalidToolArguments, match="arguments must be JSON text") as caught:
        made.validate_arguments(12)  # type: ignore[arg-type]
    assert caught.value.tool_name == "calc"
    assert made.validate_arguments(b'{"x": 2}').value == {"x": 2}  # bytes are UTF-8 JSON text


def test_execute_needs_validated_arguments() -> None:
    made = Tool.manual("calc", "Calculate.", OBJECT, _identity)
    with pytest.raises(TypeError, match="ValidatedArgs"):
        made.execute({"x": 1}, None)  # type: ignore[arg-type]


def _with_context_by_name(args: dict[str, Any], ctx: ToolRunContext) -> str:
    return "ctx" if ctx is not None else "none"


def test_context_detection_follows_the_second_parameter() -> None:
    def one(args: dict[str, Any]) -> str:
        return "one"

    def optional_second(args: dict[str, Any], flag: int = 0) -> str:
        return "optional"

    def unresolved(args: dict[str, Any], ctx: NotImportedToolRunContext) -> str:  # type: ignore[name-defined]  # noqa: F821
        return "unresolved"

    def plain_second(args: dict[str, Any], other) -> str:  # type: ignore[no-untyped-def]
        return "plain"

    assert Tool.manual("a", "A.", OBJECT, one).takes_context is False
    assert Tool.manual("b", "B.", OBJECT, optional_second).takes_context is False
    assert Tool.manual("c", "C.", OBJECT, _with_context_by_name).takes_context is True
    # a forward reference that does not resolve is judged by its name
    assert Tool.manual("d", "D.", OBJECT, unresolved).takes_context is True
    # an unannotated required second parameter receives the context
    assert Tool.manual("e", "E.", OBJECT, plain_second).takes_context is True
    # a callable without a signature takes no context
    assert Tool.manual("f", "F.", OBJECT, dict).takes_context is False
