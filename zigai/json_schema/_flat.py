"""A validity shortcut for flat object schemas, the usual shape of tool parameters.

Job: for a schema built only from ``type``, ``properties``, ``required``,
``additionalProperties: true|false``, array ``items`` and annotations, compile a plain
Python predicate that answers "is this instance valid?" without the general engine.

Invariants:

* Never looser: the predicate returns ``True`` only for instances the Draft 2020-12
  engine accepts.  ``False`` means "ask the engine" (it is returned for every instance the
  engine rejects, and for unusual but valid ones such as ``dict`` subclasses), so the
  engine still decides and words every failure.  ``tests/test_json_schema_flat.py``
  compares both on generated schemas and values.
* Any keyword outside that vocabulary (``enum``, bounds, ``$ref``, combinators, nested
  object ``properties`` ...) means no shortcut: :func:`compile_flat` returns ``None``.
* Draft 2020-12 types: ``integer`` accepts ``int`` and integral ``float``; ``number``
  accepts ``int`` and ``float``; ``bool`` is neither.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["compile_flat"]

Predicate = Callable[[Any], bool]

_ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "format", "readOnly", "writeOnly",
    "deprecated", "$comment",
})
_LEAF_KEYWORDS = _ANNOTATIONS | {"type", "items"}
_ROOT_KEYWORDS = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties"}


def _is_integer(value: Any) -> bool:
    kind = type(value)
    return kind is int or (kind is float and value.is_integer())


def _is_number(value: Any) -> bool:
    kind = type(value)
    return kind is int or kind is float


_TYPE_CHECKS: dict[str, Predicate] = {
    "integer": _is_integer,
    "number": _is_number,
    "string": lambda value: type(value) is str,
    "boolean": lambda value: type(value) is bool,
    "null": lambda value: value is None,
    "array": lambda value: type(value) is list,
    "object": lambda value: type(value) is dict,
}


def _type_check(declared: Any) -> Predicate | None:
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not names or not all(n in _TYPE_CHECKS for n in names):
        return None
    checks = [_TYPE_CHECKS[name] for name in names]
    if len(checks) == 1:
        return checks[0]
    return lambda value: any(check(value) for check in checks)


def _leaf(schema: Any) -> Predicate | None:
    """A property schema: ``type`` (one name or a list), optional ``items``, annotations."""
    if schema is True:
        return lambda value: True
    if not isinstance(schema, dict) or not schema.keys() <= _LEAF_KEYWORDS:
        return None
    if "type" not in schema:
        return None
    check = _type_check(schema["type"])
    if check is None:
        return None
    if "items" not in schema:
        return check
    item = _leaf(schema["items"])
    if item is None:
        return None
    type_check = check

    def with_items(value: Any) -> bool:
        if not type_check(value):
            return False
        return type(value) is not list or all(item(element) for element in value)

    return with_items


def compile_flat(schema: Any) -> Predicate | None:
    """The predicate for a flat object schema, or ``None`` when the shortcut does not apply."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None
    if not schema.keys() <= _ROOT_KEYWORDS:
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    additional = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    if not all(isinstance(name, str) for name in required) or not isinstance(additional, bool):
        return None
    checks: dict[str, Predicate] = {}
    for name, subschema in properties.items():
        check = _leaf(subschema)
        if check is None:
            return None
        checks[name] = check
    names = tuple(required)
    closed = not additional

    def valid(instance: Any) -> bool:
        if type(instance) is not dict:
            return False
        for name in names:
            if name not in instance:
                return False
        for key, value in instance.items():
            check = checks.get(key)
            if check is None:
                if closed:
                    return False
            elif not check(value):
                return False
        return True

    return valid
