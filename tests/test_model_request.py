"""zigai.model.request: the value checks of ToolDefinition, OutputFormat and ModelRequest that
run before any adapter sees a request, each naming what is wrong."""

from __future__ import annotations

from typing import Any

import pytest

from zigai.messages import RequestMessage
from zigai.model import (
    InvalidToolDefinition,
    ModelRequest,
    OutputFormat,
    ToolDefinition,
    UnsupportedModelFeature,
)


@pytest.mark.parametrize(("fields", "message"), [
    ({"description": 3}, "description must be a string"),
    ({"parameters_json_schema": [("type", "object")]}, "parameters schema must be an object"),
    ({"kind": "builtin"}, "unknown kind 'builtin'"),
])
def test_tool_definitions_name_the_bad_field(fields: dict[str, Any], message: str) -> None:
    values: dict[str, Any] = {"name": "weather", "description": "", "parameters_json_schema": {"type": "object"}}
    with pytest.raises(InvalidToolDefinition, match=message):
        ToolDefinition(**{**values, **fields})


@pytest.mark.parametrize(("fields", "message"), [
    ({"kind": "xml"}, "unknown output format 'xml'"),
    ({"kind": "json_schema", "name": "answer"}, "needs a schema object"),
    ({"kind": "json_schema", "name": "bad name", "schema": {"type": "object"}}, "provider-safe name"),
    ({"kind": "json_object", "schema": ["type"]}, "schema hint must be an object"),
])
def test_output_formats_name_what_is_missing(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(UnsupportedModelFeature, match=message):
        OutputFormat(**fields)


def test_a_json_object_schema_hint_is_an_owned_copy() -> None:
    hint = {"type": "object", "properties": {"x": {"type": "integer"}}}
    fmt = OutputFormat("json_object", schema=hint)
    hint["properties"]["x"]["type"] = "string"
    assert fmt.schema == {"type": "object", "properties": {"x": {"type": "integer"}}}


def test_error_body_capture_bound_is_checked_at_zero_and_below() -> None:
    assert ModelRequest(messages=(RequestMessage.user("x"),), max_error_body_bytes=0).max_error_body_bytes == 0
    with pytest.raises(ValueError, match="max_error_body_bytes"):
        ModelRequest(messages=(RequestMessage.user("x"),), max_error_body_bytes=-1)
