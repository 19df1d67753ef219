"""JSON Schema -> the Gemini ``Schema`` subset used by ``functionDeclarations[].parameters``.

The documented ``Schema`` object accepts only: type, format, title, description, nullable,
enum, maxItems, minItems, properties, required, minProperties, maxProperties, minLength,
maxLength, pattern, example, anyOf, propertyOrdering, default, items, minimum, maximum.
:func:`gemini_schema` keeps exactly those, recursively (through ``properties`` values,
``items`` and ``anyOf``), and rewrites the common JSON Schema spellings it can express:
local ``$ref`` into ``$defs``/``definitions`` is inlined (a recursive reference raises
:class:`GoogleEncodeError`), ``const`` becomes a one-value ``enum``, ``oneOf`` becomes
``anyOf``, and ``type: [T, "null"]`` becomes ``type: T`` with ``nullable: true``.
Everything else (``additionalProperties``, ``$schema``, ``exclusiveMinimum`` ...) is dropped.
Structured output uses ``responseJsonSchema`` instead, which takes full JSON Schema unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zigai.providers.google._errors import GoogleEncodeError

__all__ = ["SUPPORTED_KEYWORDS", "gemini_schema"]

SUPPORTED_KEYWORDS = frozenset(
    {
        "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
        "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
        "pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum",
        "maximum",
    }
)
_MAX_DEPTH = 64


def _resolve(ref: str, root: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix):
            table = root.get(prefix[2:-1])
            name = ref[len(prefix):]
            if isinstance(table, Mapping) and isinstance(table.get(name), Mapping):
                return table[name]
    raise GoogleEncodeError(f"{path}: unresolvable $ref {ref!r}", path=path)


def _convert(node: Any, root: Mapping[str, Any], path: str, refs: tuple[str, ...]) -> Any:
    if not isinstance(node, Mapping):
        return node
    if len(refs) > _MAX_DEPTH:
        raise GoogleEncodeError(f"{path}: schema nests too deeply", path=path)
    ref = node.get("$ref")
    if isinstance(ref, str):
        if ref in refs:
            raise GoogleEncodeError(f"{path}: recursive $ref {ref!r} is not expressible", path=path)
        merged = {**_resolve(ref, root, path), **{k: v for k, v in node.items() if k != "$ref"}}
        return _convert(merged, root, path, refs + (ref,))
    out: dict[str, Any] = {}
    for key, value in node.items():
        where = f"{path}.{key}"
        if key == "properties" and isinstance(value, Mapping):
            out[key] = {name: _convert(sub, root, f"{where}.{name}", refs)
                        for name, sub in value.items()}
        elif key == "items" and isinstance(value, Mapping):
            out[key] = _convert(value, root, where, refs)
        elif key in ("anyOf", "oneOf") and isinstance(value, list):
            out["anyOf"] = [_convert(v, root, f"{where}[{i}]", refs) for i, v in enumerate(value)]
        elif key == "const":
            out["enum"] = [value]
        elif key == "type" and isinstance(value, list):
            kinds = [v for v in value if v != "null"]
            if len(kinds) == 1:
                out["type"] = kinds[0]
            elif kinds:
                out["anyOf"] = [{"type": k} for k in kinds]
            if "null" in value:
                out["nullable"] = True
        elif key in SUPPORTED_KEYWORDS:
            out[key] = value
    return out


def gemini_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A new dict holding ``schema`` reduced to the Gemini Schema subset (input untouched)."""
    result: dict[str, Any] = _convert(schema, schema, "$", ())
    return result
