"""zigai.json.bounded_copy / check_shape: in-memory values built by programs (tool schemas,
tool definitions, scripted output) are bounded like JSON text — deep nesting is a named
error, never a bare ``RecursionError`` (the defect class of issue 31, defect 4)."""

from __future__ import annotations

from typing import Any

import pytest

from zigai import json as zjson
from zigai.json import DocumentTooLarge, Limits, MalformedJson, NestingTooDeep
from zigai.model import InvalidToolDefinition, ToolDefinition
from zigai.testing import InvalidTestModelConfig, TestModel
from zigai.tool import Tool, ToolDefinitionError

SMALL = Limits(64, 16, 3, 4)


def _schema(depth: int, *, innermost_list: bool = False) -> dict[str, Any]:
    """An object schema nested ``depth`` times (``2 * depth + 1`` containers, one more with
    ``innermost_list``), built iteratively."""
    schema: dict[str, Any] = {"type": "object", "required": []} if innermost_list else {"type": "object"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def test_bounded_copy_is_exact_at_each_limit() -> None:
    assert zjson.bounded_copy({"a": [[1]]}, SMALL) == {"a": [[1]]}  # depth 3
    with pytest.raises(NestingTooDeep):
        zjson.bounded_copy({"a": [[[1]]]}, SMALL)
    assert zjson.bounded_copy(("x",), SMALL) == ["x"]
    with pytest.raises(MalformedJson, match="keys must be strings"):
        zjson.bounded_copy({1: "x"}, SMALL)
    with pytest.raises(MalformedJson):
        zjson.bounded_copy({"x": float("nan")}, SMALL)
    text = "x" * 16
    assert zjson.bounded_copy({"s": text}, SMALL) == {"s": text}
    with pytest.raises(zjson.ValueTooLarge):
        zjson.bounded_copy({"s": text + "x"}, SMALL)


def test_a_walk_longer_than_the_document_bound_stops_early() -> None:
    shared: list[Any] = [0]
    with pytest.raises(DocumentTooLarge):
        zjson.check_shape([shared] * 100, Limits(64, 16, 3, 1000))


@pytest.mark.parametrize("build", ["tool_manual", "tool_definition"])
def test_a_100000_deep_tool_schema_is_a_named_error(build: str) -> None:
    deep = _schema(100_000)
    if build == "tool_manual":
        with pytest.raises(ToolDefinitionError, match="json_schema JSON profile"):
            Tool.manual("t", "d", deep, lambda args: 1)
    else:
        with pytest.raises(InvalidToolDefinition, match="json_schema JSON profile"):
            ToolDefinition("t", "d", deep)


def test_tool_schemas_at_the_json_schema_depth_are_accepted() -> None:
    assert zjson.defaults.json_schema.max_depth == 64
    at_limit = _schema(31, innermost_list=True)  # 64 containers deep
    Tool.manual("t", "d", at_limit, lambda args: 1)
    ToolDefinition("t", "d", at_limit)
    one_more = _schema(32)  # 65
    with pytest.raises(ToolDefinitionError):
        Tool.manual("t", "d", one_more, lambda args: 1)
    with pytest.raises(InvalidToolDefinition):
        ToolDefinition("t", "d", one_more)


def test_test_model_custom_output_args_are_bounded() -> None:
    with pytest.raises(InvalidTestModelConfig, match="history profile"):
        TestModel(custom_output_args=_schema(100_000))
