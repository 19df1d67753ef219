"""Preflight of the local dialect: prove a schema uses only supported, well-formed vocabulary.

The walk visits every subschema exactly once (``$defs`` included, reachable or not) and
stops at the first problem.  Every keyword is classified: a supported assertion or
applicator is checked for shape (malformed -> ``InvalidJsonSchema``), an annotation is
checked for shape and ignored, and anything else -- a keyword on the explicit unsupported
list or one we have never heard of -- raises ``UnsupportedJsonSchema``.  Nothing is
silently ignored, which is what makes the dialect fail closed.

References may only be ``#`` or ``#/$defs/<name>`` (one pointer segment, ``~0``/``~1`` and
percent escapes decoded) and must name a definition of the *root* ``$defs``.  A cycle of
references that never descends into the instance (``{"$ref": "#"}`` at the root) could
never terminate and is rejected as ``InvalidJsonSchema``.

The walk itself is bounded: the schema value may nest at most ``MAX_SCHEMA_DEPTH``
containers (the JSON Schema profile of ``zigai.json``), so preflight cannot exhaust the
interpreter stack on a hostile Python object.
"""

from __future__ import annotations

import math
import re
from typing import Any
from urllib.parse import unquote

from zigai.json_schema._errors import InvalidJsonSchema, UnsupportedJsonSchema

SUPPORTED_DIALECT = "https://json-schema.org/draft/2020-12/schema"

# Container nesting bound of a schema value; equal to zigai.json.defaults.json_schema.max_depth.
MAX_SCHEMA_DEPTH = 64

_TYPE_NAMES = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})

# keyword -> how its value is shaped
_ONE_SCHEMA = frozenset(
    {"not", "if", "then", "else", "additionalProperties", "propertyNames", "items", "contains"}
)
_SCHEMA_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_MAP = frozenset({"properties", "$defs"})
_COUNTS = frozenset(
    {
        "minProperties", "maxProperties", "minItems", "maxItems", "minContains",
        "maxContains", "minLength", "maxLength",
    }
)
_NUMBERS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_STRING_ANNOTATIONS = frozenset({"title", "description", "format", "$comment"})
_BOOL_ANNOTATIONS = frozenset({"readOnly", "writeOnly", "deprecated"})

# Valid 2020-12 (or older-draft) vocabulary the dialect deliberately refuses, with the reason.
UNSUPPORTED_KEYWORDS: dict[str, str] = {
    "pattern": "regular expressions are not supported",
    "patternProperties": "regular expressions are not supported",
    "$dynamicRef": "dynamic references are not supported",
    "$dynamicAnchor": "dynamic references are not supported",
    "$recursiveRef": "dynamic references are not supported",
    "$recursiveAnchor": "dynamic references are not supported",
    "$anchor": "anchors are not supported; use #/$defs/<name> references",
    "unevaluatedItems": "unevaluated-value keywords are not supported",
    "unevaluatedProperties": "unevaluated-value keywords are not supported",
    "dependentSchemas": "dependentSchemas is not in the supported vocabulary",
    "contentEncoding": "content vocabulary is not supported",
    "contentMediaType": "content vocabulary is not supported",
    "contentSchema": "content vocabulary is not supported",
    "$vocabulary": "custom vocabularies are not supported",
    "definitions": "draft-07 definitions are not supported; use $defs",
    "dependencies": "draft-07 dependencies is not supported; use dependentRequired",
    "additionalItems": "draft-07 additionalItems is not supported; use prefixItems/items",
}

_URI_FORBIDDEN = re.compile(r"[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_BAD_TILDE = re.compile(r"~(?![01])")

ROOT = "#"  # ref-graph node name of the root schema


def _pointer(location: str, *tokens: str | int) -> str:
    for token in tokens:
        text = str(token).replace("~", "~0").replace("/", "~1")
        location = f"{location}/{text}"
    return location


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= 0
    return isinstance(value, float) and value.is_integer() and value >= 0


def check_json_value(value: Any, depth: int) -> None:
    """Raise InvalidJsonSchema unless value is plain JSON within the depth bound."""
    if value is None or isinstance(value, (bool, int, str)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidJsonSchema(f"schema contains the non-finite number {value!r}")
        return
    if isinstance(value, (list, dict)):
        if depth >= MAX_SCHEMA_DEPTH:
            raise InvalidJsonSchema(f"schema nests deeper than {MAX_SCHEMA_DEPTH} containers")
        if isinstance(value, list):
            for item in value:
                check_json_value(item, depth + 1)
            return
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidJsonSchema(f"schema contains the non-string object key {key!r}")
            check_json_value(item, depth + 1)
        return
    raise InvalidJsonSchema(f"schema contains a {type(value).__name__}, which is not JSON")


def check_uri_reference(text: str, keyword: str, location: str) -> None:
    if _URI_FORBIDDEN.search(text) or _BAD_PERCENT.search(text) or text.count("#") > 1:
        raise InvalidJsonSchema(f"{location}: {keyword} {text!r} is not a URI reference", location)


def parse_ref(ref: Any, location: str) -> str:
    """Return the ref-graph node a ``$ref`` names: ``#`` or the decoded ``$defs`` name.

    The returned ``$defs`` name is prefixed with ``#/$defs/`` so it cannot collide with ROOT.
    """
    if not isinstance(ref, str):
        raise InvalidJsonSchema(f"{location}: $ref must be a string", location)
    check_uri_reference(ref, "$ref", location)
    if ref == "#":
        return ROOT
    if not ref.startswith("#"):
        raise UnsupportedJsonSchema(
            f"{location}: $ref {ref!r} is not local; only '#' and '#/$defs/<name>' are supported",
            "$ref", location,
        )
    if not ref.startswith("#/"):
        raise UnsupportedJsonSchema(
            f"{location}: anchor reference {ref!r} is not supported", "$ref", location
        )
    try:
        pointer = unquote(ref[1:], errors="strict")
    except UnicodeDecodeError:
        raise InvalidJsonSchema(
            f"{location}: $ref {ref!r} percent-encodes invalid UTF-8", location
        ) from None
    tokens = pointer.split("/")[1:]
    for token in tokens:
        if _BAD_TILDE.search(token):
            raise InvalidJsonSchema(
                f"{location}: $ref {ref!r} has an invalid JSON Pointer escape", location
            )
    if len(tokens) != 2 or tokens[0] != "$defs":
        raise UnsupportedJsonSchema(
            f"{location}: general JSON Pointer reference {ref!r} is not supported; "
            "only '#/$defs/<name>' is",
            "$ref", location,
        )
    name = tokens[1].replace("~1", "/").replace("~0", "~")
    return "#/$defs/" + name


class _Walk:
    """One preflight pass; collects the reference graph while checking keywords."""

    def __init__(self) -> None:
        # node -> set of nodes its schema references *in place* (without consuming instance)
        self.edges: dict[str, set[str]] = {}
        self.refs: list[tuple[str, str]] = []  # (node, location)

    def schema(self, schema: Any, location: str, node: str | None, root: bool = False) -> None:
        """Check one subschema. ``node`` is the ref-graph node evaluated in place, or None."""
        if isinstance(schema, bool):
            return
        if not isinstance(schema, dict):
            raise InvalidJsonSchema(
                f"{location}: a schema must be an object or a boolean, "
                f"not {type(schema).__name__}",
                location,
            )
        for keyword, value in schema.items():
            self.keyword(keyword, value, location, node, root)

    def keyword(self, keyword: str, value: Any, location: str, node: str | None, root: bool) -> None:
        here = _pointer(location, keyword)
        if keyword in _ONE_SCHEMA:
            in_place = keyword in ("not", "if", "then", "else")
            self.schema(value, here, node if in_place else None)
        elif keyword in _SCHEMA_LIST:
            if not isinstance(value, list) or not value:
                raise InvalidJsonSchema(f"{here}: must be a non-empty array of schemas", here)
            in_place = keyword != "prefixItems"
            for index, item in enumerate(value):
                self.schema(item, _pointer(here, index), node if in_place else None)
        elif keyword in _SCHEMA_MAP:
            if not isinstance(value, dict):
                raise InvalidJsonSchema(f"{here}: must be an object of schemas", here)
            for name, item in value.items():
                target = "#/$defs/" + name if keyword == "$defs" and root else None
                self.schema(item, _pointer(here, name), target)
        elif keyword in _COUNTS:
            if not _is_count(value):
                raise InvalidJsonSchema(f"{here}: must be a non-negative integer", here)
        elif keyword in _NUMBERS:
            if not _is_number(value):
                raise InvalidJsonSchema(f"{here}: must be a number", here)
        elif keyword == "multipleOf":
            if not _is_number(value) or value <= 0:
                raise InvalidJsonSchema(f"{here}: must be a number greater than 0", here)
        elif keyword == "type":
            self.type_keyword(value, here)
        elif keyword == "enum":
            if not isinstance(value, list):
                raise InvalidJsonSchema(f"{here}: must be an array", here)
        elif keyword in ("const", "default"):
            pass  # any JSON value; plain-JSON-ness was checked up front
        elif keyword == "required":
            self.string_set(value, here)
        elif keyword == "dependentRequired":
            if not isinstance(value, dict):
                raise InvalidJsonSchema(f"{here}: must be an object of string arrays", here)
            for name, item in value.items():
                self.string_set(item, _pointer(here, name))
        elif keyword == "uniqueItems" or keyword in _BOOL_ANNOTATIONS:
            if not isinstance(value, bool):
                raise InvalidJsonSchema(f"{here}: must be a boolean", here)
        elif keyword in _STRING_ANNOTATIONS:
            if not isinstance(value, str):
                raise InvalidJsonSchema(f"{here}: must be a string", here)
        elif keyword == "examples":
            if not isinstance(value, list):
                raise InvalidJsonSchema(f"{here}: must be an array", here)
        elif keyword == "$ref":
            target = parse_ref(value, here)
            self.refs.append((target, here))
            if node is not None:
                self.edges.setdefault(node, set()).add(target)
        elif keyword == "$schema":
            self.dialect(value, here, root)
        elif keyword == "$id":
            self.identifier(value, here, root)
        elif keyword in UNSUPPORTED_KEYWORDS:
            raise UnsupportedJsonSchema(
                f"{here}: {UNSUPPORTED_KEYWORDS[keyword]}", keyword, location
            )
        else:
            raise UnsupportedJsonSchema(
                f"{here}: unknown keyword {keyword!r} is rejected (the dialect fails closed)",
                keyword, location,
            )

    @staticmethod
    def type_keyword(value: Any, here: str) -> None:
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names:
            raise InvalidJsonSchema(f"{here}: must be a type name or a non-empty array", here)
        for name in names:
            if not isinstance(name, str) or name not in _TYPE_NAMES:
                raise InvalidJsonSchema(f"{here}: {name!r} is not a JSON Schema type", here)
        if len(set(names)) != len(names):
            raise InvalidJsonSchema(f"{here}: type names must be unique", here)

    @staticmethod
    def string_set(value: Any, here: str) -> None:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise InvalidJsonSchema(f"{here}: must be an array of strings", here)
        if len(set(value)) != len(value):
            raise InvalidJsonSchema(f"{here}: strings must be unique", here)

    @staticmethod
    def dialect(value: Any, here: str, root: bool) -> None:
        if not isinstance(value, str):
            raise InvalidJsonSchema(f"{here}: must be a URI string", here)
        if not root:
            raise UnsupportedJsonSchema(
                f"{here}: $schema is only supported at the root", "$schema", here
            )
        if value != SUPPORTED_DIALECT:
            raise UnsupportedJsonSchema(
                f"{here}: dialect {value!r} is not supported; use {SUPPORTED_DIALECT!r}",
                "$schema", here,
            )

    @staticmethod
    def identifier(value: Any, here: str, root: bool) -> None:
        if not isinstance(value, str):
            raise InvalidJsonSchema(f"{here}: must be a URI-reference string", here)
        check_uri_reference(value, "$id", here)
        if "#" in value[:-1]:
            raise InvalidJsonSchema(f"{here}: $id must not contain a fragment", here)
        if not root:
            raise UnsupportedJsonSchema(
                f"{here}: $id below the root changes the base URI and is not supported",
                "$id", here,
            )
        if value.endswith("#"):
            raise UnsupportedJsonSchema(
                f"{here}: $id with an empty fragment is not supported", "$id", here
            )


def _find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """Return one cycle of the in-place reference graph, or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    for start in sorted(edges):
        if state.get(start):
            continue
        path = [start]
        stack = [iter(sorted(edges.get(start, ())))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(edges.get(nxt, ()))))
    return None


def preflight(schema: Any) -> None:
    """Raise InvalidJsonSchema / UnsupportedJsonSchema unless ``schema`` is in the dialect."""
    check_json_value(schema, 0)
    walk = _Walk()
    walk.schema(schema, "#", ROOT, root=True)
    definitions = schema.get("$defs", {}) if isinstance(schema, dict) else {}
    for target, location in walk.refs:
        if target != ROOT and target[len("#/$defs/"):] not in definitions:
            raise InvalidJsonSchema(
                f"{location}: $ref target {target!r} is not defined in the root $defs", location
            )
    cycle = _find_cycle(walk.edges)
    if cycle is not None:
        raise InvalidJsonSchema(
            "reference cycle never reaches a value: " + " -> ".join(cycle), cycle[0]
        )
