"""reflect.tool on the signatures the main tests leave out: return annotations (ToolReturn,
ToolOutput, none), refused signatures with the reason, context placement, and defaults that
JSON cannot show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from zigai.reflect import tool
from zigai.tool import ToolDefinitionError, ToolOutput, ToolReturn, ToolRunContext


def test_return_annotations_give_the_return_schema() -> None:
    def typed(x: int) -> ToolReturn[int]:
        return ToolReturn(x)

    def bare(x: int) -> ToolReturn:  # type: ignore[type-arg]
        return ToolReturn(x)

    def raw(x: int) -> ToolOutput:
        return ToolOutput(x)

    def unannotated(x: int):  # type: ignore[no-untyped-def]
        return x

    assert tool("typed", None, typed).return_json_schema == {"type": "integer"}
    assert tool("bare", None, bare).return_json_schema is None
    assert tool("raw", None, raw).return_json_schema is None
    assert tool("plain", None, unannotated).return_json_schema is None


class Opaque:
    pass


def test_an_unschemable_return_type_is_refused_naming_the_tool() -> None:
    def odd(x: int) -> Opaque:
        return Opaque()

    with pytest.raises(ToolDefinitionError, match="tool 'odd' return type"):
        tool("odd", None, odd)


@pytest.mark.parametrize(
    ("fn", "options", "message"),
    [
        ("not a function", {}, "function must be callable"),
        (lambda *items: None, {}, r"\*args/\*\*kwargs"),
        (lambda **items: None, {}, r"\*args/\*\*kwargs"),
        (lambda *, ctx: None, {"takes_context": True}, "takes_context needs a first positional parameter"),
        (lambda: None, {"takes_context": True}, "takes_context needs a first positional parameter"),
    ],
)
def test_a_signature_that_cannot_be_a_tool_is_refused(fn: Any, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=message):
        tool("t", None, fn, **options)


def test_the_context_must_come_first_and_every_parameter_needs_a_type() -> None:
    def late(x: int, ctx: ToolRunContext) -> int:
        return x

    def untyped(x: int, y) -> int:  # type: ignore[no-untyped-def]
        return x

    def broken(x: NotDefinedAnywhere) -> int:  # type: ignore[name-defined]  # noqa: F821
        return 1

    with pytest.raises(ToolDefinitionError, match="ToolRunContext must be the first parameter, not 'ctx'"):
        tool("late", None, late)
    with pytest.raises(ToolDefinitionError, match="parameter 'y' needs a type annotation"):
        tool("untyped", None, untyped)
    with pytest.raises(ToolDefinitionError, match="cannot read the signature"):
        tool("broken", None, broken)


@dataclass
class Query:
    text: str
    limit: int = 3


def test_a_single_object_parameter_with_context_is_decoded_and_called() -> None:
    def search(ctx: ToolRunContext, query: Query) -> str:
        return f"{query.text}:{query.limit}:{ctx.tool_name}"

    made = tool("search", None, search)
    assert made.takes_context is True
    assert made.parameters_json_schema["properties"]["text"] == {"type": "string"}
    ctx = ToolRunContext(deps=None, tool_name="search", tool_call_id="c1")
    assert made.call('{"text": "cats"}', ctx).content == "cats:3:search"


def test_positional_only_parameters_and_unshowable_defaults() -> None:
    marker = object()

    def pick(a: int, /, b: int = 2, c: Any = marker) -> list[Any]:
        return [a, b, c is marker]

    made = tool("pick", None, pick)
    properties = made.parameters_json_schema["properties"]
    assert properties["b"]["default"] == 2 and "default" not in properties["c"]
    ctx = ToolRunContext(deps=None, tool_name="pick", tool_call_id="c1")
    assert made.call('{"a": 1}', ctx).content == [1, 2, True]
