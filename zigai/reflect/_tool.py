"""Building a :class:`~zigai.tool.Tool` from an annotated Python function (private).

Argument shape:

* when the function (after an optional leading ``ToolRunContext`` parameter)
  takes exactly one parameter annotated with a dataclass or TypedDict, that
  type *is* the argument object: the model sends its members and the function
  receives one decoded instance (the spec's "one args struct" form);
* otherwise every parameter is one member of a closed argument object;
  parameters with defaults are optional and keep their Python default when
  the model omits them.

``*args``/``**kwargs`` and unannotated parameters are rejected: the schema
must say exactly what the function accepts.

Parameter descriptions come from ``Annotated[T, "text"]`` or, failing that, the docstring's
Google ``Args:``, NumPy ``Parameters`` or Sphinx ``:param x:`` entries (see ``_docstring``);
the tool description is the docstring without those entries.  A default that encodes as
JSON is shown as the parameter's ``default``.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

from zigai.reflect._docstring import parse_docstring
from zigai.reflect._types import FieldInfo, is_object_type, strip_annotated
from zigai.reflect.codec import EncodeError, decode, encode
from zigai.reflect.schema import json_schema, object_schema
from zigai.tool.context import RunContext, ToolOutput, ToolReturn, ToolRunContext
from zigai.tool.errors import ToolDefinitionError
from zigai.tool.limits import ReturnSchemaVisibility, ToolExecution, ToolLimits
from zigai.tool.tool import Tool

__all__ = ["build_tool"]


def _is_context_annotation(annotation: Any) -> bool:
    annotation = strip_annotated(annotation)
    annotation = typing.get_origin(annotation) or annotation  # ToolRunContext[Deps]
    # RunContext[Deps] is the PydanticAI spelling; the tool is given the call's ToolRunContext
    return isinstance(annotation, type) and issubclass(annotation, (ToolRunContext, RunContext))


def _return_schema(annotation: Any, name: str) -> dict[str, Any] | None:
    if annotation is inspect.Parameter.empty or annotation is ToolOutput:
        return None
    if typing.get_origin(annotation) is ToolReturn:
        args = typing.get_args(annotation)
        annotation = args[0] if args else Any
    elif annotation is ToolReturn:
        return None
    try:
        return json_schema(annotation)
    except ToolDefinitionError as exc:
        raise ToolDefinitionError(f"tool {name!r} return type: {exc}") from None


def _annotate_parameters(
    schema: dict[str, Any], params: list[inspect.Parameter], docs: Mapping[str, str]
) -> None:
    """Docstring descriptions (unless ``Annotated`` gave one) and JSON-encodable defaults."""
    properties = schema.get("properties", {})
    for param in params:
        prop = properties.get(param.name)
        if prop is None:
            continue
        if param.name in docs and "description" not in prop:
            prop["description"] = docs[param.name]
        if param.default is not inspect.Parameter.empty:
            try:
                prop["default"] = encode(param.default)
            except EncodeError:
                pass  # a default JSON cannot show stays out of the schema (it still applies)


def build_tool(
    name: str,
    description: str | None,
    fn: Callable[..., Any],
    *,
    takes_context: bool | None,
    execution: ToolExecution,
    max_retries: int | None,
    sequential: bool,
    limits: ToolLimits | None,
    strict: bool | None,
    return_schema_visibility: ReturnSchemaVisibility,
    metadata: Mapping[str, Any] | None,
) -> Tool:
    if not callable(fn):
        raise ToolDefinitionError(f"tool {name!r}: function must be callable")
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise ToolDefinitionError(
            f"tool {name!r} is an async function; zigai runs tools on worker threads and never "
            "awaits them: write it as a plain `def` (call async code inside with "
            "asyncio.run(...)), and wait cooperatively with ctx.sleep()/ctx.check()"
        )
    try:
        signature = inspect.signature(fn)
        hints = typing.get_type_hints(fn, include_extras=True)
    except (TypeError, ValueError, NameError) as exc:
        raise ToolDefinitionError(f"tool {name!r}: cannot read the signature: {exc}") from None
    params = list(signature.parameters.values())
    for param in params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(f"tool {name!r}: *args/**kwargs cannot be described as a schema")

    if takes_context is None:
        takes_context = bool(params) and _is_context_annotation(hints.get(params[0].name))
    if takes_context:
        if not params or params[0].kind is inspect.Parameter.KEYWORD_ONLY:
            raise ToolDefinitionError(f"tool {name!r}: takes_context needs a first positional parameter")
        params = params[1:]
    for param in params:
        if param.name not in hints:
            raise ToolDefinitionError(f"tool {name!r}: parameter {param.name!r} needs a type annotation")
        if _is_context_annotation(hints[param.name]):
            raise ToolDefinitionError(
                f"tool {name!r}: ToolRunContext must be the first parameter, not {param.name!r}"
            )

    summary, param_docs = parse_docstring(inspect.getdoc(fn))
    single = len(params) == 1 and is_object_type(hints[params[0].name]) and params[0].kind is not (
        inspect.Parameter.KEYWORD_ONLY
    )
    decode_arguments: Callable[[dict[str, Any]], Any]
    if single:
        object_type = hints[params[0].name]
        try:
            parameters = json_schema(object_type)
        except ToolDefinitionError as exc:
            raise ToolDefinitionError(f"tool {name!r} arguments: {exc}") from None

        def decode_arguments(value: dict[str, Any]) -> Any:
            return decode(object_type, value)

        def call(value: Any, ctx: ToolRunContext) -> Any:
            return fn(ctx, value) if takes_context else fn(value)
    else:
        fields = [
            FieldInfo(p.name, hints[p.name], p.default is inspect.Parameter.empty) for p in params
        ]
        try:
            parameters = object_schema(fields)
        except ToolDefinitionError as exc:
            raise ToolDefinitionError(f"tool {name!r} arguments: {exc}") from None
        _annotate_parameters(parameters, params, param_docs)
        positional_only = {p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_ONLY}
        order = [p.name for p in params]

        def decode_arguments(value: dict[str, Any]) -> Any:
            return {f.name: decode(f.annotation, value[f.name], f"$.{f.name}") for f in fields if f.name in value}

        def call(value: Any, ctx: ToolRunContext) -> Any:
            positional = [value[n] for n in order if n in positional_only and n in value]
            keywords = {n: v for n, v in value.items() if n not in positional_only}
            if takes_context:
                return fn(ctx, *positional, **keywords)
            return fn(*positional, **keywords)

    if description is None:
        description = summary
    return Tool(
        name=name,
        description=description,
        parameters_json_schema=parameters,
        invoke=call,
        takes_context=takes_context,
        decode_arguments=decode_arguments,
        function=fn,
        execution=execution,
        max_retries=max_retries,
        sequential=sequential,
        limits=limits,
        strict=strict,
        return_json_schema=_return_schema(hints.get("return", inspect.Parameter.empty), name),
        return_schema_visibility=return_schema_visibility,
        metadata=metadata,
    )
