"""zigai.reflect: schemas for every supported shape, strict decoding, encoding, reflected tools."""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict, Union

import pytest

from zigai import json_schema as local_schema
from zigai import reflect
from zigai.reflect import DecodeError, EncodeError
from zigai.tool import InvalidToolArguments, ToolDefinitionError, ToolRunContext


class Color(enum.Enum):
    red = "red"
    green = "green"


class Level(enum.Enum):
    low = 1
    high = 2


@dataclass(frozen=True)
class Point:
    x: int
    y: int = 0


@dataclass
class Shape:
    name: Annotated[str, "what the shape is called"]
    points: list[Point]
    color: Color = Color.red
    tags: tuple[str, ...] = ()


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


@dataclass
class Node:
    value: int
    children: list[Node] = field(default_factory=list)


@dataclass
class Positive:
    n: int

    def __post_init__(self) -> None:
        if self.n <= 0:
            raise ValueError("n must be positive")


@pytest.mark.parametrize(
    ("tp", "schema"),
    [
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (str, {"type": "string"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (Any, {}),
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Literal[1], {"type": "integer", "const": 1}),
        (Literal["a", 1], {"enum": ["a", 1]}),
        (Color, {"type": "string", "enum": ["red", "green"]}),
        (Level, {"type": "integer", "enum": [1, 2]}),
        (Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}),  # noqa: UP045
        (Union[int, str], {"anyOf": [{"type": "integer"}, {"type": "string"}]}),  # noqa: UP007
        (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        (list[str], {"type": "array", "items": {"type": "string"}}),
        (Sequence[int], {"type": "array", "items": {"type": "integer"}}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (
            tuple[int, str],
            {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "items": False,
                "minItems": 2,
                "maxItems": 2,
            },
        ),
        (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (Mapping[str, bool], {"type": "object", "additionalProperties": {"type": "boolean"}}),
        (Annotated[int, "a count"], {"type": "integer", "description": "a count"}),
        (
            Point,
            {
                "type": "object",
                "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                "required": ["x"],
                "additionalProperties": False,
            },
        ),
        (
            Movie,
            {
                "type": "object",
                "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
                "required": ["title"],
                "additionalProperties": False,
            },
        ),
    ],
)
def test_json_schema_of_each_shape(tp: Any, schema: dict[str, Any]) -> None:
    assert reflect.json_schema(tp) == schema
    local_schema.validate_schema(schema)


def test_nested_dataclasses_are_inlined_with_descriptions() -> None:
    schema = reflect.json_schema(Shape)
    assert schema == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "what the shape is called"},
            "points": {"type": "array", "items": reflect.json_schema(Point)},
            "color": {"type": "string", "enum": ["red", "green"]},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["name", "points"],
        "additionalProperties": False,
    }


def test_recursive_types_use_defs_and_validate_locally() -> None:
    schema = reflect.json_schema(Node)
    assert schema == {
        "$ref": "#/$defs/Node",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
                "required": ["value"],
                "additionalProperties": False,
            }
        },
    }
    validator = local_schema.Validator(schema)
    assert validator.is_valid({"value": 1, "children": [{"value": 2}]})
    assert not validator.is_valid({"value": 1, "children": [{"value": "x"}]})


@pytest.mark.parametrize("tp", [complex, set, dict[int, str], list, object.__class__])
def test_unsupported_types_are_definition_errors(tp: Any) -> None:
    with pytest.raises(ToolDefinitionError):
        reflect.json_schema(tp)


def test_json_schema_returns_a_fresh_object_each_time() -> None:
    first = reflect.json_schema(Point)
    first["properties"]["x"]["type"] = "string"
    assert reflect.json_schema(Point)["properties"]["x"] == {"type": "integer"}


@pytest.mark.parametrize(
    ("tp", "value", "expected"),
    [
        (int, 3, 3),
        (int, 3.0, 3),
        (float, 2, 2.0),
        (str, "x", "x"),
        (bool, False, False),
        (None, None, None),
        (Any, {"a": [1]}, {"a": [1]}),
        (Literal["a", "b"], "b", "b"),
        (Color, "green", Color.green),
        (Level, 2, Level.high),
        (Optional[int], None, None),  # noqa: UP045
        (int | str, "s", "s"),
        (list[int], [1, 2], [1, 2]),
        (Sequence[int], [1, 2], (1, 2)),
        (tuple[int, ...], [1], (1,)),
        (tuple[int, str], [1, "a"], (1, "a")),
        (dict[str, int], {"a": 1}, {"a": 1}),
        (Point, {"x": 1}, Point(1, 0)),
        (Movie, {"title": "Up"}, {"title": "Up"}),
        (Node, {"value": 1, "children": [{"value": 2}]}, Node(1, [Node(2)])),
    ],
)
def test_decode_each_shape(tp: Any, value: Any, expected: Any) -> None:
    decoded = reflect.decode(tp, value)
    assert decoded == expected
    assert type(decoded) is type(expected)


@pytest.mark.parametrize(
    ("tp", "value", "path", "reason"),
    [
        (int, True, "$", "expected integer, got boolean"),
        (int, 1.5, "$", "expected integer, got number"),
        (float, "1", "$", "expected number, got string"),
        (str, 1, "$", "expected string, got number"),
        (bool, 0, "$", "expected boolean, got number"),
        (Literal[1], True, "$", "expected one of [1], got True"),
        (Color, "blue", "$", "expected one of ['red', 'green'], got 'blue'"),
        (tuple[int, str], [1], "$", "expected exactly 2 items, got 1"),
        (Point, {"y": 1}, "$.x", "required property is missing"),
        (Point, {"x": 1, "z": 2}, "$.z", "unexpected property"),
        (Shape, {"name": "s", "points": [{"x": 1}, {"x": "2"}]}, "$.points[1].x",
         "expected integer, got string"),
        (dict[str, int], {"a b": "x"}, "$['a b']", "expected integer, got string"),
        (Positive, {"n": 0}, "$", "Positive rejected the value: n must be positive"),
        # a string in the wrong form is quoted (cut at 40 characters), not called "string"
        (uuid.UUID, "nope", "$", "expected a UUID string, got 'nope'"),
        (datetime.date, "2025-13-01", "$", "expected an ISO 8601 date (YYYY-MM-DD), got '2025-13-01'"),
        (datetime.datetime, "x" * 40, "$", f"expected an ISO 8601 date-time, got {'x' * 40!r}"),
        (datetime.datetime, "x" * 41, "$",
         f"expected an ISO 8601 date-time, got {'x' * 40!r}... (41 characters)"),
        (decimal.Decimal, [1], "$", "expected a decimal number or decimal string, got array"),
    ],
)
def test_decode_failures_name_the_path(tp: Any, value: Any, path: str, reason: str) -> None:
    with pytest.raises(DecodeError) as info:
        reflect.decode(tp, value)
    assert info.value.path == path
    assert info.value.reason == reason
    assert str(info.value) == f"{path}: {reason}"


def test_union_failure_reports_the_deepest_arm() -> None:
    with pytest.raises(DecodeError) as info:
        reflect.decode(Point | None, {"x": "no"})
    assert info.value.path == "$.x"
    with pytest.raises(DecodeError) as info:
        reflect.decode(int | None, "no")
    assert info.value.path == "$"
    assert "none of the 2 allowed shapes" in info.value.reason


def test_encode_round_trips_typed_values() -> None:
    shape = Shape("tri", [Point(0, 0), Point(1, 2)], Color.green, ("a",))
    encoded = reflect.encode(shape)
    assert encoded == {
        "name": "tri",
        "points": [{"x": 0, "y": 0}, {"x": 1, "y": 2}],
        "color": "green",
        "tags": ["a"],
    }
    assert json.loads(json.dumps(encoded)) == encoded
    assert reflect.decode(Shape, encoded) == shape
    assert reflect.encode({"k": (Level.low, None, 1.5)}) == {"k": [1, None, 1.5]}


@pytest.mark.parametrize(
    ("value", "path"),
    [
        (float("nan"), "$"),
        ({"a": 1j}, "$.a"),
        ([1, 2j], "$[1]"),
        ({1: "x"}, "$"),
        (object(), "$"),
    ],
)
def test_encode_rejects_non_json(value: Any, path: str) -> None:
    with pytest.raises(EncodeError) as info:
        reflect.encode(value)
    assert info.value.path == path


def test_encode_rejects_cycles() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(EncodeError, match="nesting deeper"):
        reflect.encode(loop)


# -- reflected tools ---------------------------------------------------------------------


def search(query: str, limit: int = 5, exact: bool = False) -> list[str]:
    """Search the catalog."""
    return [query] * min(limit, 2)


def draw(shape: Shape) -> int:
    return len(shape.points)


def test_parameters_become_a_closed_object_schema() -> None:
    tool = reflect.tool("search", None, search)
    assert tool.description == "Search the catalog."
    assert tool.takes_context is False
    assert tool.parameters_json_schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "default": 5},
            "exact": {"type": "boolean", "default": False},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    assert tool.return_json_schema == {"type": "array", "items": {"type": "string"}}
    args = tool.validate_arguments('{"query":"q","limit":3}')
    assert args.value == {"query": "q", "limit": 3}
    assert tool.execute(args, ToolRunContext()).content == ["q", "q"]


def test_a_single_dataclass_parameter_is_the_argument_object() -> None:
    tool = reflect.tool("draw", "Draw it.", draw)
    assert tool.parameters_json_schema == reflect.json_schema(Shape)
    args = tool.validate_arguments('{"name":"l","points":[{"x":1},{"x":2,"y":3}]}')
    assert args.value == Shape("l", [Point(1), Point(2, 3)])
    assert tool.execute(args, ToolRunContext()).content == 2


def test_invalid_arguments_carry_paths_for_the_model() -> None:
    tool = reflect.tool("draw", "Draw it.", draw)
    with pytest.raises(InvalidToolArguments) as info:
        tool.validate_arguments('{"name":"l","points":[{"x":"1"}]}')
    assert info.value.tool_name == "draw"
    assert info.value.errors == (("$.points[0].x", "'1' is not of type 'integer'"),)
    assert "$.points[0].x" in str(info.value)
    with pytest.raises(InvalidToolArguments, match=r"\$: 'points' is a required property"):
        tool.validate_arguments('{"name":"l"}')
    with pytest.raises(InvalidToolArguments, match="must be a JSON object"):
        tool.validate_arguments("[1]")
    with pytest.raises(InvalidToolArguments, match="not valid JSON"):
        tool.validate_arguments('{"name":')


def test_decode_failures_after_the_schema_become_invalid_arguments() -> None:
    def take(p: Positive) -> int:
        return p.n

    tool = reflect.tool("take", "", take)
    with pytest.raises(InvalidToolArguments) as info:
        tool.validate_arguments('{"n":0}')
    assert info.value.errors == (("$", "Positive rejected the value: n must be positive"),)


def test_tool_payload_limit_is_exact() -> None:
    def echo(text: str) -> str:
        return text

    tool = reflect.tool("echo", "", echo)
    limit = 1 << 20
    prefix, suffix = '{"text":"', '"}'
    filler = "x" * (limit - len(prefix) - len(suffix))
    at_limit = prefix + filler + suffix
    assert len(at_limit.encode()) == limit
    assert tool.validate_arguments(at_limit).value == {"text": filler}
    over = prefix + filler + "x" + suffix
    with pytest.raises(InvalidToolArguments, match="tool payload"):
        tool.validate_arguments(over)


def test_empty_argument_text_means_no_arguments() -> None:
    def ping() -> str:
        return "pong"

    tool = reflect.tool("ping", "", ping)
    assert tool.parameters_json_schema == {
        "type": "object", "properties": {}, "additionalProperties": False
    }
    assert tool.validate_arguments("  ").arguments == {}
    assert tool.execute(tool.validate_arguments(""), ToolRunContext()).content == "pong"


def test_reflection_rejects_what_a_schema_cannot_describe() -> None:
    def untyped(x):  # type: ignore[no-untyped-def]
        return x

    def variadic(*items: int) -> int:
        return 0

    def late_context(x: int, ctx: ToolRunContext) -> int:
        return x

    for fn in (untyped, variadic, late_context):
        with pytest.raises(ToolDefinitionError):
            reflect.tool("bad", "", fn)
    with pytest.raises(ToolDefinitionError, match="must match"):
        reflect.tool("bad name", "", search)
    with pytest.raises(ToolDefinitionError):
        reflect.tool("x", "", search, execution="sometimes")


def test_argument_bytes_must_be_utf8_and_nesting_is_bounded() -> None:
    def anything(value: Any = None) -> Any:
        return value

    tool = reflect.tool("anything", "", anything)
    assert tool.validate_arguments(b'{"value":"\xc3\xa9"}').value == {"value": "\u00e9"}
    with pytest.raises(InvalidToolArguments):
        tool.validate_arguments(b'{"value":"\xff"}')
    nested_ok = '{"value":' + "[" * 63 + "]" * 63 + "}"  # depth 64: the tool-payload limit
    assert tool.validate_arguments(nested_ok).arguments["value"] is not None
    with pytest.raises(InvalidToolArguments, match="tool payload"):
        tool.validate_arguments('{"value":' + "[" * 64 + "]" * 64 + "}")


def test_call_validates_before_executing() -> None:
    ran: list[int] = []

    def count(n: int) -> int:
        ran.append(n)
        return n + 1

    tool = reflect.tool("count", "", count)
    assert tool.call('{"n":1}', ToolRunContext()).content == 2
    with pytest.raises(InvalidToolArguments):
        tool.call('{"n":"1"}', ToolRunContext())
    assert ran == [1]
