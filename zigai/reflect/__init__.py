"""Reflection: JSON Schemas, typed decoding and tools derived from Python annotations.

* :func:`json_schema` — the schema of a type (used for tool arguments, tool
  return values and the agent's typed output);
* :func:`decode` / :func:`encode` — JSON value <-> typed Python value for the
  same set of shapes (dataclass, TypedDict, Literal, Enum, Optional/Union,
  list/tuple/dict/set/frozenset, nested, int/float/str/bool/None, Any, datetime/date/time/
  timedelta, UUID, Decimal, bytes as base64, and pydantic models when pydantic is installed);
* :func:`tool` — a :class:`~zigai.tool.Tool` whose argument schema, decoding
  and return schema come from the function's annotations.

Invariants: schema derivation and decoding share one classification of
annotations (:mod:`zigai.reflect._types`), so every value ``decode`` accepts
satisfies the schema and vice versa; generated schemas stay within the local
JSON Schema dialect.  Importing this package does not import the tool layer
(``tool`` loads it on first use), which keeps ``zigai.tool`` free to use the codec.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, overload

from zigai.reflect.codec import DecodeError, EncodeError, decode, encode
from zigai.reflect.schema import json_schema

if TYPE_CHECKING:
    from zigai.tool import ReturnSchemaVisibility, Tool, ToolExecution, ToolLimits

__all__ = ["tool", "json_schema", "decode", "encode", "DecodeError", "EncodeError"]


@overload
def tool(name: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    name: str | None = None,
    description: str | None = None,
    fn: None = None,
    *,
    takes_context: bool | None = None,
    execution: ToolExecution | str = "immediate",
    max_retries: int | None = None,
    sequential: bool = False,
    limits: ToolLimits | None = None,
    strict: bool | None = None,
    return_schema_visibility: ReturnSchemaVisibility | str = "local",
    metadata: Mapping[str, Any] | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


@overload
def tool(
    name: str,
    description: str | None,
    fn: Callable[..., Any],
    *,
    takes_context: bool | None = None,
    execution: ToolExecution | str = "immediate",
    max_retries: int | None = None,
    sequential: bool = False,
    limits: ToolLimits | None = None,
    strict: bool | None = None,
    return_schema_visibility: ReturnSchemaVisibility | str = "local",
    metadata: Mapping[str, Any] | None = None,
) -> Tool: ...


def tool(
    name: Any = None,
    description: str | None = None,
    fn: Callable[..., Any] | None = None,
    *,
    takes_context: bool | None = None,
    execution: ToolExecution | str = "immediate",
    max_retries: int | None = None,
    sequential: bool = False,
    limits: ToolLimits | None = None,
    strict: bool | None = None,
    return_schema_visibility: ReturnSchemaVisibility | str = "local",
    metadata: Mapping[str, Any] | None = None,
) -> Any:
    """A tool calling ``fn`` with arguments decoded from its annotations.

    Three spellings: ``tool(name, description, fn)``; ``@tool`` on a function (name from the
    function, description from its docstring); ``@tool(name=..., description=..., ...)``.

    ``takes_context=None`` detects a first parameter annotated ``ToolRunContext``.
    ``description=None`` uses the function's docstring.  The return annotation
    (``T`` or ``ToolReturn[T]``) becomes ``return_json_schema``; it is shown to the
    model only with ``return_schema_visibility="model_description"``.
    Raises ToolDefinitionError for anything the schema cannot describe.
    """
    from zigai.reflect._tool import build_tool
    from zigai.tool.errors import ToolDefinitionError
    from zigai.tool.limits import ReturnSchemaVisibility, ToolExecution

    options: dict[str, Any] = dict(
        takes_context=takes_context, execution=execution, max_retries=max_retries,
        sequential=sequential, limits=limits, strict=strict,
        return_schema_visibility=return_schema_visibility, metadata=metadata,
    )
    if callable(name) and description is None and fn is None:  # bare @tool
        function = name
        return tool(function.__name__, None, function, **options)
    if fn is None:
        chosen, text = name, description

        def decorate(function: Callable[..., Any]) -> Tool:
            return tool(chosen or function.__name__, text, function, **options)

        return decorate

    try:
        execution = ToolExecution(execution)
        return_schema_visibility = ReturnSchemaVisibility(return_schema_visibility)
    except ValueError as exc:
        raise ToolDefinitionError(f"tool {name!r}: {exc}") from None
    return build_tool(
        name,
        description,
        fn,
        takes_context=takes_context,
        execution=execution,
        max_retries=max_retries,
        sequential=sequential,
        limits=limits,
        strict=strict,
        return_schema_visibility=return_schema_visibility,
        metadata=metadata,
    )
