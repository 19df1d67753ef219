"""``Agent(output_type=...)`` and ``Agent(tools=[function, ...])``: what the familiar spellings mean.

Two small translations, both done once when the agent is built (no I/O, no model call):

* ``output_type`` names the Python shape of the final output.  A type (a class, a dataclass,
  a ``TypedDict``, a pydantic model when pydantic is installed, ``list[X]``, ``A | B``,
  ``Literal[...]``) makes every run typed, exactly like :meth:`Agent.run_typed` with that
  type: the schema comes from :func:`zigai.reflect.json_schema` and ``result.output`` is the
  decoded value.  A list or tuple of types means their union.  A plain function is an
  *output function*: its parameters become the output schema, the model's arguments are
  decoded into them, and its return value is the output (it may raise ``ModelRetry``, or
  return ``OutputResult.retry(...)``, to ask the model again).
* ``tools`` may hold plain functions next to :class:`~zigai.tool.Tool` values; each one is
  reflected by :func:`zigai.reflect.tool` (name, docstring description, per-argument docs,
  schema from annotations; a first parameter annotated ``RunContext[Deps]`` or
  ``ToolRunContext[Deps]`` receives the call's context).

Invariants: every refusal is an :class:`InvalidAgentConfiguration` (or the reflection's own
``ToolDefinitionError``) that names the zigai spelling; nothing here is retained per run.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Callable, Sequence
from typing import Any, Literal

from zigai.agent.errors import InvalidAgentConfiguration
from zigai.output import OutputChoice, OutputSpec
from zigai.tool import Tool
from zigai.toolset import Toolset

__all__ = ["coerce_tools", "resolve_output_type", "union_members", "OUTPUT_MODES"]

OUTPUT_MODES = ("native", "tool", "prompted")

_Mode = Literal["native", "tool", "prompted"]


def coerce_tools(value: Any) -> tuple[Tool, ...]:
    """``Agent.tools`` as Tool values: plain functions are reflected, anything else refused."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidAgentConfiguration("Agent.tools must be a sequence of Tool values or functions")
    tools: list[Tool] = []
    for index, item in enumerate(value):
        if isinstance(item, Tool):
            tools.append(item)
        elif isinstance(item, Toolset):
            raise InvalidAgentConfiguration(
                f"Agent.tools[{index}] is a Toolset: pass toolsets as Agent(toolsets=[...])"
            )
        elif callable(item) and not isinstance(item, type):
            from zigai.reflect import tool

            tools.append(tool(item))
        else:
            raise InvalidAgentConfiguration(
                f"Agent.tools must contain Tool values or plain functions, got {type(item).__name__}"
            )
    return tuple(tools)


def union_members(tp: Any) -> dict[str, Any]:
    """``{output tool name: member}`` when ``tp`` is a union of object types, else ``{}``.

    In tool mode such a union becomes one output tool per member (``final_result_Forecast``,
    ``final_result_Failure`` …), and the model's choice of tool says which member to decode.
    """
    import types

    if typing.get_origin(tp) not in (typing.Union, types.UnionType):
        return {}
    from zigai.reflect import json_schema

    members: dict[str, Any] = {}
    for member in typing.get_args(tp):
        if json_schema(member).get("type") != "object":
            return {}
        raw = getattr(member, "__name__", "") or "member"
        name = re.sub(r"[^A-Za-z0-9_-]", "_", f"final_result_{raw}")[:64]
        if name in members:
            return {}  # two members with one name: keep the single anyOf schema
        members[name] = member
    return members


def _is_output_function(value: Any) -> bool:
    return inspect.isfunction(value) or inspect.ismethod(value)


def _foreign_marker(value: Any) -> None:
    """PydanticAI's ToolOutput/NativeOutput/PromptedOutput wrappers: name the zigai spelling."""
    module = getattr(type(value), "__module__", "") or ""
    if module.split(".")[0] == "pydantic_ai":
        kind = type(value).__name__
        mode = {"ToolOutput": "tool", "NativeOutput": "native", "PromptedOutput": "prompted"}.get(kind)
        hint = f"Agent(output_type=X, output_mode={mode!r})" if mode else "Agent(output_type=X)"
        raise InvalidAgentConfiguration(
            f"Agent.output_type got a pydantic_ai {kind}; zigai spells it {hint}"
        )


def resolve_output_type(value: Any, mode: Any, output: OutputSpec) -> tuple[Any, OutputSpec]:
    """``(type for typed runs or None, the agent's OutputSpec)`` for ``Agent(output_type=...)``."""
    if mode is not None and mode not in OUTPUT_MODES:
        raise InvalidAgentConfiguration(
            f"Agent.output_mode must be one of {', '.join(OUTPUT_MODES)} (or None), got {mode!r}"
        )
    if value is None:
        return None, output
    _foreign_marker(value)
    if output != OutputSpec.text():
        raise InvalidAgentConfiguration(
            "give Agent(output=OutputSpec...) or Agent(output_type=...), not both"
        )
    if isinstance(value, (list, tuple)):
        if not value:
            raise InvalidAgentConfiguration("Agent.output_type=[] names no type")
        for item in value:
            _foreign_marker(item)
            if _is_output_function(item):
                raise InvalidAgentConfiguration(
                    "Agent.output_type lists a function; give one output function, or types only"
                )
        value = value[0] if len(value) == 1 else typing.Union[tuple(value)]  # noqa: UP007
    if _is_output_function(value):
        return None, _function_spec(value, mode or "tool")
    from zigai.reflect import json_schema
    from zigai.tool import ToolDefinitionError

    try:
        json_schema(value)
    except ToolDefinitionError as exc:
        raise InvalidAgentConfiguration(f"Agent.output_type {value!r}: {exc}") from None
    return value, output


def _function_spec(fn: Callable[..., Any], mode: _Mode) -> OutputSpec:
    """An output function as one structured output choice (schema from its parameters)."""
    from zigai.reflect import tool

    reflected = tool(fn)
    if reflected.takes_context:
        raise InvalidAgentConfiguration(
            f"output function {reflected.name!r} takes a context first; zigai's output functions "
            "take only the model's arguments (read dependencies through an output validator)"
        )
    names = list(inspect.signature(fn).parameters)
    # one dataclass/TypedDict parameter *is* the argument object (zigai.reflect's rule)
    single = len(names) == 1 and names[0] not in reflected.parameters_json_schema.get("properties", {})

    def call(ctx: Any, value: Any) -> Any:
        arguments = reflected.validate_arguments(json.dumps(value)).value
        return fn(arguments) if single else fn(**arguments)

    choice = OutputChoice(
        reflected.name, reflected.parameters_json_schema,
        description=reflected.description or None, function=call,
    )
    if mode == "native":
        return OutputSpec.native([choice])
    if mode == "prompted":
        return OutputSpec.prompted([choice])
    return OutputSpec.tool([choice])
