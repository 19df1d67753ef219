"""Streamable HTTP request-metadata headers: value encoding and ``x-mcp-header`` parameters.

Job
    The one definition, shared by the client transport (emit) and the server (validate), of
    how body values are mirrored into HTTP headers: the ``=?base64?…?=`` sentinel encoding,
    the ``x-mcp-header`` schema annotation (where it may appear, which names and types are
    valid) and the ``Mcp-Param-{Name}`` headers a ``tools/call`` carries.

Invariants
    * :func:`encode_header_value` output is printable ASCII without edge whitespace, and
      :func:`decode_header_value` inverts it exactly; a malformed sentinel decodes to None so it
      never matches a body value by accident.
    * An annotation is honoured only on a property reachable from the schema root through a
      pure chain of ``properties`` keys, on a string/integer/boolean property, with an RFC 9110
      token name unique case-insensitively.  :func:`invalid_header_annotation` reports the first
      violation; such a tool must not be offered to a model over HTTP.
    * Integer values must be within the JavaScript safe range (|n| <= 2**53 - 1).
    * Schema walks use an explicit stack and never dereference ``$ref``: they terminate on any
      finite JSON value.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from zigai.mcp.errors import HeaderMismatch, InvalidMcpRequest
from zigai.mcp.wire.jsonrpc import HEADER_PARAM_PREFIX

__all__ = [
    "X_MCP_HEADER",
    "MAX_SAFE_INTEGER",
    "encode_header_value",
    "decode_header_value",
    "invalid_header_annotation",
    "header_parameters",
    "param_headers",
    "check_param_headers",
]

X_MCP_HEADER = "x-mcp-header"
MAX_SAFE_INTEGER = 2**53 - 1

_SENTINEL = re.compile(r"^=\?base64\?(?P<payload>.*)\?=$", re.S)
_PLAIN = re.compile(r"^[\x20-\x7e]*$")
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
_SINGLE = frozenset({"items", "contains", "unevaluatedItems", "additionalProperties", "propertyNames",
                     "unevaluatedProperties", "not", "if", "then", "else", "contentSchema"})
_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAPS = frozenset({"patternProperties", "dependentSchemas", "$defs", "definitions"})


def encode_header_value(value: str) -> str:
    """``value`` unchanged when it survives an HTTP field as is, else its base64 sentinel form."""
    if _PLAIN.match(value) and value == value.strip() and not _SENTINEL.match(value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def decode_header_value(value: str | None) -> str | None:
    """The body value a header carries; None for None or a malformed (non-canonical) sentinel."""
    if value is None:
        return None
    match = _SENTINEL.match(value)
    if match is None:
        return value
    payload = match.group("payload")
    try:
        raw = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return None
    if base64.b64encode(raw).decode("ascii") != payload:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _positions(schema: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every schema position with its pure ``properties`` path (None once off that chain)."""
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield path, node
        for keyword, value in node.items():
            if keyword == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    stack.append(((*path, name) if path is not None else None, sub))
            elif keyword in _SINGLE:
                stack.append((None, value))
            elif keyword in _LISTS and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif keyword in _MAPS and isinstance(value, dict):
                stack.extend((None, sub) for sub in value.values())


def invalid_header_annotation(input_schema: Any) -> str | None:
    """Why the schema's ``x-mcp-header`` annotations are invalid, or None when they are valid."""
    seen: dict[str, str] = {}
    for path, node in _positions(input_schema):
        if X_MCP_HEADER not in node:
            continue
        if not path:
            return f"{X_MCP_HEADER} is only allowed on properties reached through 'properties' keys"
        where = ".".join(path)
        name = node[X_MCP_HEADER]
        if not isinstance(name, str) or not _TOKEN.match(name):
            return f"property {where!r}: {X_MCP_HEADER} must be a non-empty HTTP token"
        kind = node.get("type")
        if not isinstance(kind, str) or kind not in _HEADER_TYPES:
            return f"property {where!r}: {X_MCP_HEADER} needs type string, integer or boolean"
        if name.lower() in seen:
            return f"property {where!r}: {X_MCP_HEADER} {name!r} repeats property {seen[name.lower()]!r}"
        seen[name.lower()] = where
    return None


def header_parameters(input_schema: Any) -> dict[tuple[str, ...], tuple[str, str]]:
    """Property path -> (header token, JSON type) for a schema that passed the check above."""
    found: dict[tuple[str, ...], tuple[str, str]] = {}
    for path, node in _positions(input_schema):
        name = node.get(X_MCP_HEADER)
        if path and isinstance(name, str):
            found[path] = (name, str(node.get("type")))
    return found


def _value_at(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = arguments
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _render(value: Any) -> str | None:
    """The header text of a mirrored scalar, or None when the value has no header form."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) <= MAX_SAFE_INTEGER else None
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return str(int(value))
    if isinstance(value, str):
        return value
    return None


def param_headers(parameters: Mapping[tuple[str, ...], tuple[str, str]],
                  arguments: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The ``Mcp-Param-*`` headers for a call's arguments (absent or null values: no header).

    A present value with no header form (an object, a fraction, an integer beyond the safe
    range) raises InvalidMcpRequest: the server would reject the call for a missing header.
    """
    headers = []
    for path, (token, _kind) in sorted(parameters.items()):
        value = _value_at(arguments, path)
        if value is None:
            continue
        rendered = _render(value)
        if rendered is None:
            raise InvalidMcpRequest(
                f"argument {'.'.join(path)!r} is mirrored into header {HEADER_PARAM_PREFIX}{token} "
                "and must be a string, a boolean or an integer within +/-(2**53 - 1)"
            )
        headers.append((f"{HEADER_PARAM_PREFIX}{token}", encode_header_value(rendered)))
    return tuple(headers)


_DECIMAL = re.compile(r"^-?[0-9]+(?:\.0+)?$")


def _matches(kind: str, value: Any, rendered: str, received: str) -> bool:
    if kind == "integer" and not isinstance(value, bool) and isinstance(value, (int, float)) and _DECIMAL.match(received):
        return int(received.split(".")[0]) == int(value)
    return received == rendered


def check_param_headers(input_schema: Any, arguments: Mapping[str, Any],
                        headers: Mapping[str, tuple[str, ...]]) -> None:
    """Raise :class:`HeaderMismatch` unless every annotated argument and its header agree.

    ``headers`` maps lowercased header names to all their values (duplicates are refused).
    A schema with invalid annotations validates nothing: conforming clients do not call it.
    """
    if invalid_header_annotation(input_schema) is not None:
        return
    for path, (token, kind) in header_parameters(input_schema).items():
        name = f"{HEADER_PARAM_PREFIX}{token}"
        received = headers.get(name.lower(), ())
        argument = ".".join(path)
        if len(received) > 1:
            raise HeaderMismatch(f"{name} header appears more than once")
        value = _value_at(arguments, path)
        if value is None:
            if received:
                raise HeaderMismatch(f"{name} header is present but argument {argument!r} is absent")
            continue
        rendered = _render(value)
        if rendered is None:
            if received:
                raise HeaderMismatch(f"{name} header does not match argument {argument!r}")
            continue
        if not received:
            raise HeaderMismatch(f"{name} header is missing but argument {argument!r} is present")
        decoded = decode_header_value(received[0])
        if decoded is None:
            raise HeaderMismatch(f"{name} header carries a malformed base64 value")
        if not _matches(kind, value, rendered, decoded):
            raise HeaderMismatch(f"{name} header does not match argument {argument!r}")


def _without_header_annotations(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_header_annotations(v) for k, v in schema.items() if k != "x-mcp-header"}
    if isinstance(schema, list):
        return [_without_header_annotations(v) for v in schema]
    return schema


def annotated_argument_problem(schema: Any, arguments: dict[str, Any]) -> str | None:
    """What is wrong with the arguments of a tool whose ``x-mcp-header`` annotations the local
    dialect refuses (None when nothing is, or when the schema carries no annotation).

    Such a tool is built with ``check_arguments=False``; the server still checks the
    arguments, against the schema with the header annotations (which assert nothing) removed.
    """
    if "x-mcp-header" not in json.dumps(schema):
        return None
    from zigai.errors import JsonSchemaError
    from zigai.json_schema import Validator

    try:
        failures = Validator(_without_header_annotations(schema)).errors(arguments)
    except JsonSchemaError:
        return None  # the schema is outside the local dialect for other reasons: the tool decides
    if not failures:
        return None
    return "; ".join(f"{path}: {reason}" for path, reason in failures[:8])
