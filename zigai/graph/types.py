"""The declared types of a graph and the runtime check every boundary value passes.

A :class:`GraphTypes` names five types: ``state`` (the mutable application object every
step sees), ``deps`` (read-only dependencies), ``input`` (what a run starts from),
``value`` (the one intermediate type every node consumes and produces) and ``output``
(what a finished run returns).  Type hints make the graph generic for a type checker;
:func:`conforms` makes the same promise hold at run time.

The check is deliberately shallow and predictable: ``Any``/``object`` accept everything,
``None`` accepts only ``None``, unions accept any member, ``Literal`` compares values, and
a parameterized generic (``list[int]``, ``dict[str, Any]``) is checked against its origin
class only -- element types are the application's promise.
"""

from __future__ import annotations

import types as _pytypes
import typing
from dataclasses import dataclass
from typing import Any

from zigai.graph.errors import GraphTypeMismatch, InvalidGraphDefinition

__all__ = ["GraphTypes", "conforms", "type_label", "check_value"]


def _checkable(tp: Any) -> bool:
    if tp is Any or tp is None or tp is type(None):
        return True
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is _pytypes.UnionType:
        return all(_checkable(arg) for arg in typing.get_args(tp))
    if origin is typing.Literal:
        return True
    if origin is not None:
        return isinstance(origin, type)
    return isinstance(tp, type)


def conforms(value: Any, tp: Any) -> bool:
    """True when ``value`` is acceptable where ``tp`` is declared (see module docstring)."""
    if tp is Any or tp is object:
        return True
    if tp is None or tp is type(None):
        return value is None
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is _pytypes.UnionType:
        return any(conforms(value, arg) for arg in typing.get_args(tp))
    if origin is typing.Literal:
        return any(value == arg and type(value) is type(arg) for arg in typing.get_args(tp))
    if origin is not None:
        return isinstance(value, origin)
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, tp)


def type_label(tp: Any) -> str:
    """A stable text name of a declared type (it enters the definition digest)."""
    if tp is None or tp is type(None):
        return "None"
    if tp is Any:
        return "Any"
    if isinstance(tp, type) and typing.get_origin(tp) is None:
        if tp.__module__ == "builtins":
            return tp.__qualname__
        return f"{tp.__module__}.{tp.__qualname__}"
    return repr(tp).replace("typing.", "")


@dataclass(frozen=True, slots=True)
class GraphTypes:
    """The five declared types of one graph (``Any`` where the application does not care)."""

    state: Any = Any
    deps: Any = Any
    input: Any = Any
    value: Any = Any
    output: Any = Any

    def __post_init__(self) -> None:
        for name in ("state", "deps", "input", "value", "output"):
            if not _checkable(getattr(self, name)):
                raise InvalidGraphDefinition(
                    f"GraphTypes.{name} must be a class, None, Any, a Union, a Literal or a "
                    f"parameterized generic of a class; got {getattr(self, name)!r}"
                )

    def labels(self) -> dict[str, str]:
        return {name: type_label(getattr(self, name))
                for name in ("state", "deps", "input", "value", "output")}


def check_value(types: GraphTypes, boundary: str, value: Any, node: str | None = None) -> Any:
    """Return ``value`` when it conforms to the declared ``boundary`` type, else raise."""
    declared = getattr(types, boundary)
    if not conforms(value, declared):
        where = f" from node {node!r}" if node is not None else ""
        raise GraphTypeMismatch(
            f"graph {boundary} must be {type_label(declared)}, got {type(value).__name__}{where}",
            boundary=boundary, node=node,
        )
    return value
