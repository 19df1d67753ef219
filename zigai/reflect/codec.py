"""Typed decoding of JSON values and JSON encoding of Python values.

``decode(tp, value)`` turns a decoded JSON value (``dict``/``list``/``str``/
``int``/``float``/``bool``/``None``) into an instance of ``tp`` for exactly the
shapes :func:`zigai.reflect.json_schema` describes; ``encode(value)`` does the
reverse for dataclasses, Enums, tuples, lists, mappings and JSON scalars.

Invariants:

* decoding is strict and never guesses: ``bool`` is not a number, a string is
  never parsed into a number, unknown object members are rejected, and an
  integral float (``3.0``) is accepted for ``int`` exactly as JSON Schema does;
* the first failure raises :class:`DecodeError` whose ``path`` is a JSON path
  (``$.items[2].name``) and whose message is safe to show to a model;
* ``encode`` returns fresh plain JSON (``dict``/``list``/scalars) and raises
  :class:`EncodeError` with the path of anything JSON cannot represent
  (NaN/infinity, bytes, sets, non-string keys, arbitrary objects, cycles).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from collections.abc import Mapping
from typing import Any

from zigai.errors import ToolError
from zigai.json import type_name
from zigai.reflect._formats import (
    FORMATTED_TYPES,
    FormatError,
    decode_formatted,
    encode_formatted,
)
from zigai.reflect._types import object_fields, shape_of

FORMATTED_KINDS = frozenset(FORMATTED_TYPES.values())

__all__ = ["decode", "encode", "DecodeError", "EncodeError", "MAX_ENCODE_DEPTH"]

#: Deepest nesting ``encode`` follows (the tool-payload profile's depth); deeper means a cycle.
MAX_ENCODE_DEPTH = 64


class DecodeError(ToolError):
    """A JSON value does not have the shape of the requested type (``path`` says where)."""

    def __init__(self, message: str, *, path: str = "$", reason: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason or message


class EncodeError(ToolError):
    """A Python value cannot be represented as JSON (``path`` says where)."""

    def __init__(self, message: str, *, path: str = "$") -> None:
        super().__init__(message)
        self.path = path


#: How much of a rejected string a formatted-value error quotes.
SHOWN_CHARS = 40


def _shown(value: Any) -> str:
    """A rejected value for an error message: a string (the right JSON type in the wrong
    form) is quoted, cut at :data:`SHOWN_CHARS`; anything else is named by its JSON type."""
    if not isinstance(value, str):
        return type_name(value)
    if len(value) <= SHOWN_CHARS:
        return repr(value)
    return f"{value[:SHOWN_CHARS]!r}... ({len(value)} characters)"


def _fail(path: str, reason: str) -> DecodeError:
    return DecodeError(f"{path}: {reason}", path=path, reason=reason)


def _member_path(path: str, name: str) -> str:
    return f"{path}.{name}" if name.isidentifier() and name.isascii() else f"{path}[{name!r}]"


def _same_scalar(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def decode(tp: Any, value: Any, path: str = "$") -> Any:
    """Decode a JSON ``value`` into ``tp``; raise DecodeError (with ``path``) on mismatch."""
    try:
        shape = shape_of(tp)
    except TypeError as exc:
        raise _fail(path, f"cannot decode into this type: {exc}") from None
    kind = shape.kind
    if kind == "any":
        return value
    if kind == "null":
        if value is not None:
            raise _fail(path, f"expected null, got {type_name(value)}")
        return None
    if kind == "bool":
        if not isinstance(value, bool):
            raise _fail(path, f"expected boolean, got {type_name(value)}")
        return value
    if kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise _fail(path, f"expected integer, got {type_name(value)}")
    if kind == "float":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise _fail(path, f"expected number, got {type_name(value)}")
    if kind == "str":
        if not isinstance(value, str):
            raise _fail(path, f"expected string, got {type_name(value)}")
        return value
    if kind == "literal":
        for option in shape.args:
            if _same_scalar(value, option):
                return option
        raise _fail(path, f"expected one of {list(shape.args)!r}, got {value!r}")
    if kind == "enum":
        enum_type: type[enum.Enum] = shape.args[0]
        for member in enum_type:
            if _same_scalar(value, member.value):
                return member
        raise _fail(path, f"expected one of {[m.value for m in enum_type]!r}, got {value!r}")
    if kind == "union":
        return _decode_union(shape.args, value, path)
    if kind in ("list", "tuple_var"):
        if not isinstance(value, list):
            raise _fail(path, f"expected array, got {type_name(value)}")
        items = [decode(shape.args[0], item, f"{path}[{i}]") for i, item in enumerate(value)]
        if kind == "tuple_var" or shape.args[1] is not list:
            return tuple(items)
        return items
    if kind == "tuple_fixed":
        if not isinstance(value, list):
            raise _fail(path, f"expected array, got {type_name(value)}")
        if len(value) != len(shape.args):
            raise _fail(path, f"expected exactly {len(shape.args)} items, got {len(value)}")
        return tuple(decode(arm, item, f"{path}[{i}]") for i, (arm, item) in enumerate(zip(shape.args, value, strict=True)))
    if kind == "dict":
        if not isinstance(value, dict):
            raise _fail(path, f"expected object, got {type_name(value)}")
        return {key: decode(shape.args[0], item, _member_path(path, key)) for key, item in value.items()}
    if kind == "set":
        return _decode_set(shape.args, value, path)
    if kind in FORMATTED_KINDS:
        try:
            return decode_formatted(kind, value)
        except FormatError as exc:
            raise _fail(path, f"{exc}, got {_shown(value)}") from None
    if kind == "pydantic":
        return _decode_pydantic(shape.args[0], value, path)
    return _decode_object(shape.args[0], kind, value, path)


def _decode_set(args: tuple[Any, ...], value: Any, path: str) -> Any:
    if not isinstance(value, list):
        raise _fail(path, f"expected array, got {type_name(value)}")
    seen: set[Any] = set()
    for index, item in enumerate(value):
        decoded = decode(args[0], item, f"{path}[{index}]")
        try:
            duplicate = decoded in seen
        except TypeError:
            raise _fail(f"{path}[{index}]", "set items must be hashable") from None
        if duplicate:
            raise _fail(f"{path}[{index}]", "duplicate item in a set")
        seen.add(decoded)
    return args[1](seen)


def _decode_pydantic(model: Any, value: Any, path: str) -> Any:
    try:
        return model.model_validate(value)
    except ValueError as exc:  # pydantic.ValidationError is a ValueError
        errors = getattr(exc, "errors", None)
        first = errors()[0] if callable(errors) and errors() else None
        reason = f"{first.get('msg')} at {first.get('loc')}" if first else str(exc)
        raise _fail(path, f"{model.__name__} rejected the value: {reason}") from None


def _decode_union(arms: tuple[Any, ...], value: Any, path: str) -> Any:
    failures = []
    for arm in arms:
        try:
            return decode(arm, value, path)
        except DecodeError as exc:
            failures.append(exc)
    # Report the failure that got deepest into the value: it is the most specific one.
    best = max(failures, key=lambda exc: len(exc.path))
    if best.path != path:
        raise best
    raise _fail(path, f"value matches none of the {len(arms)} allowed shapes ({best.reason})")


def _decode_object(tp: type, kind: str, value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        raise _fail(path, f"expected object, got {type_name(value)}")
    fields = object_fields(tp)
    known = {f.name for f in fields}
    for key in value:
        if key not in known:
            raise _fail(_member_path(path, key), "unexpected property")
    members: dict[str, Any] = {}
    for f in fields:
        if f.name in value:
            members[f.name] = decode(f.annotation, value[f.name], _member_path(path, f.name))
        elif f.required:
            raise _fail(_member_path(path, f.name), "required property is missing")
    if kind == "typeddict":
        return members
    try:
        return tp(**members)
    except (TypeError, ValueError) as exc:
        raise _fail(path, f"{tp.__name__} rejected the value: {exc}") from None


def encode(value: Any) -> Any:
    """Encode ``value`` as fresh plain JSON; raise EncodeError (with a path) otherwise."""
    return _encode(value, "$", 0)


def _encode(value: Any, path: str, depth: int) -> Any:
    if depth > MAX_ENCODE_DEPTH:
        raise EncodeError(f"{path}: nesting deeper than {MAX_ENCODE_DEPTH} (a cycle?)", path=path)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise EncodeError(f"{path}: {value!r} is not a JSON number", path=path)
        return float(value)
    if isinstance(value, enum.Enum):
        return _encode(value.value, path, depth + 1)
    try:
        formatted = encode_formatted(value)
    except FormatError as exc:
        raise EncodeError(f"{path}: {exc}", path=path) from None
    if formatted is not NotImplemented:
        return formatted
    if isinstance(value, (set, frozenset)):
        items = [_encode(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _encode(getattr(value, f.name), _member_path(path, f.name), depth + 1)
            for f in dataclasses.fields(value)
        }
    if isinstance(value, Mapping):
        encoded = {}
        for key, item in value.items():
            if isinstance(key, enum.Enum) and isinstance(key.value, str):
                key = key.value
            if not isinstance(key, str):
                raise EncodeError(f"{path}: object key {key!r} is not a string", path=path)
            encoded[key] = _encode(item, _member_path(path, key), depth + 1)
        return encoded
    if isinstance(value, (list, tuple)):
        return [_encode(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
    raise EncodeError(f"{path}: a {type(value).__name__} cannot be encoded as JSON", path=path)
