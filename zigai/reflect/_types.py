"""Shared type introspection for schema generation and decoding (private).

Normalizes a Python annotation into a small set of shapes so that the schema
generator and the decoder agree on what every supported annotation means.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import types
import typing
from typing import Any, Literal, NamedTuple, Union

from zigai.reflect._formats import FORMATTED_TYPES, is_pydantic_model

__all__ = ["Shape", "shape_of", "object_fields", "FieldInfo", "description_of", "is_object_type"]

NoneType = type(None)

_SEQUENCE_ORIGINS = (
    list,
    collections.abc.Sequence,
    collections.abc.MutableSequence,
    collections.abc.Iterable,
    collections.abc.Collection,
)
_MAPPING_ORIGINS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)
_SET_ORIGINS = (set, frozenset, collections.abc.Set, collections.abc.MutableSet)


class Shape(NamedTuple):
    """``kind`` is one of: any, null, bool, int, float, str, literal, enum, union,
    list, tuple_var, tuple_fixed, dict, set, dataclass, typeddict, pydantic, and the formatted
    scalars of :mod:`._formats` (datetime, date, time, timedelta, uuid, decimal, bytes).
    ``args`` depends on kind."""

    kind: str
    args: tuple[Any, ...] = ()
    description: str | None = None


class FieldInfo(NamedTuple):
    name: str
    annotation: Any
    required: bool


def description_of(metadata: tuple[Any, ...]) -> str | None:
    """The first string in ``Annotated`` metadata, used as a schema description."""
    for item in metadata:
        if isinstance(item, str):
            return item
    return None


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def is_object_type(tp: Any) -> bool:
    """True for dataclass types and TypedDicts (the 'one argument object' shapes)."""
    tp = strip_annotated(tp)
    return (isinstance(tp, type) and dataclasses.is_dataclass(tp)) or _is_typeddict(tp)


def strip_annotated(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = tp.__origin__
    return tp


def shape_of(tp: Any) -> Shape:
    """Classify ``tp``; raise TypeError (with a readable reason) for unsupported annotations."""
    try:
        return _cached_shape(tp)
    except TypeError as exc:
        if "unhashable" not in str(exc):
            raise
        return _shape_of(tp)  # Annotated metadata may be unhashable: classify without the cache


@functools.lru_cache(maxsize=1024)
def _cached_shape(tp: Any) -> Shape:
    return _shape_of(tp)


def _shape_of(tp: Any) -> Shape:
    description = None
    if typing.get_origin(tp) is typing.Annotated:
        description = description_of(tp.__metadata__)
        inner = shape_of(tp.__origin__)
        return inner._replace(description=description or inner.description)
    if typing.get_origin(tp) in (typing.Required, typing.NotRequired):
        return shape_of(typing.get_args(tp)[0])
    if tp is Any or tp is object:
        return Shape("any")
    if tp is None or tp is NoneType:
        return Shape("null")
    if tp is bool:
        return Shape("bool")
    if tp is int:
        return Shape("int")
    if tp is float:
        return Shape("float")
    if tp is str:
        return Shape("str")
    if isinstance(tp, type) and tp in FORMATTED_TYPES:
        return Shape(FORMATTED_TYPES[tp])
    if is_pydantic_model(tp):
        return Shape("pydantic", (tp,))
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        values = tuple(member.value for member in tp)
        for value in values:
            if value is not None and not isinstance(value, (str, int, float, bool)):
                raise TypeError(f"enum {tp.__qualname__} has a non-JSON value {value!r}")
        return Shape("enum", (tp,))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return Shape("dataclass", (tp,))
    if _is_typeddict(tp):
        return Shape("typeddict", (tp,))
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is Literal:
        for value in args:
            if value is not None and not isinstance(value, (str, int, bool)):
                raise TypeError(f"Literal value {value!r} is not a JSON scalar")
        return Shape("literal", args)
    if origin is Union or origin is types.UnionType:
        return Shape("union", args)
    if tp in (list, tuple, dict) or tp in _SEQUENCE_ORIGINS or tp in _MAPPING_ORIGINS or tp in _SET_ORIGINS:
        name = getattr(tp, "__name__", str(tp))
        if tp in _MAPPING_ORIGINS:
            example = "dict[str, int]"
        elif tp in _SET_ORIGINS:
            example = "frozenset[str]" if tp is frozenset else "set[str]"
        else:
            example = "tuple[int, ...]" if tp is tuple else "list[str]"
        raise TypeError(f"bare {name} needs item types (e.g. {example})")
    if origin in _SET_ORIGINS:
        frozen = origin is frozenset or origin is collections.abc.Set
        return Shape("set", (args[0] if args else Any, frozenset if frozen else set))
    if origin in _SEQUENCE_ORIGINS:
        return Shape("list", (args[0] if args else Any, origin))
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return Shape("tuple_var", (args[0],))
        if args == ((),):
            return Shape("tuple_fixed", ())
        return Shape("tuple_fixed", args)
    if origin in _MAPPING_ORIGINS:
        key, value = args if args else (str, Any)
        if strip_annotated(key) is not str:
            raise TypeError(f"mapping keys must be str, got {key!r}")
        return Shape("dict", (value,))
    raise TypeError(
        f"unsupported type {tp!r}; supported: str, int, float, bool, None, Any, Literal, Enum, "
        "unions, list/tuple/dict/set/frozenset of supported types, dataclasses, TypedDicts, "
        "datetime, date, time, timedelta, UUID, Decimal, bytes and pydantic models"
    )


@functools.lru_cache(maxsize=512)
def object_fields(tp: type) -> tuple[FieldInfo, ...]:
    """The JSON object members of a dataclass (init fields) or TypedDict, in declaration order."""
    hints = typing.get_type_hints(tp, include_extras=True)
    if dataclasses.is_dataclass(tp):
        found = []
        for f in dataclasses.fields(tp):
            if not f.init:
                continue
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            found.append(FieldInfo(f.name, hints.get(f.name, Any), required))
        return tuple(found)
    required_keys: frozenset[str] = getattr(tp, "__required_keys__", frozenset())
    found = []
    for name, hint in hints.items():
        # With postponed annotations the class cannot see Required/NotRequired; the hint can.
        marker = typing.get_origin(hint)
        if marker is typing.NotRequired:
            required = False
        elif marker is typing.Required:
            required = True
        else:
            required = name in required_keys
        found.append(FieldInfo(name, hint, required))
    return tuple(found)
