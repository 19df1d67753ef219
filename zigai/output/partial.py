"""Partial structured output: repair an incomplete JSON prefix, then check it monotonically.

A streaming run sees output-bearing text (native / prompted / JSON-object output) or
output-tool arguments arrive in pieces.  :func:`repair_json` turns the prefix received so
far into a valid JSON value of everything that is already certain:

* an unterminated string is closed (strings only grow, so the prefix is a useful value);
* open objects and arrays are closed;
* a trailing comma, a key without its value, an unterminated literal (``tru``) and a number
  at the very end of the text (``12`` may still become ``123``) are dropped;
* anything that cannot be the prefix of a JSON document returns ``None`` — no snapshot.

The repair is bounded: the text is capped at the provider-response document size and the
nesting depth at its depth limit; past either, ``None`` is returned.

:func:`partial_check` then applies only the schema assertions that later bytes cannot
undo: ``type`` (of present values), ``properties`` / ``items`` / ``prefixItems`` /
``additionalProperties`` of present members (``false`` forbids extras), ``maxLength``,
``maxItems``, ``maxProperties`` and local ``$ref``; ``allOf`` needs every arm and
``anyOf`` / ``oneOf`` at least one.  ``required``, minimum bounds, ``const``, ``enum``,
numeric limits, ``not`` and conditionals are deferred to final validation.

Invariant: both functions are pure and never raise for model input; a snapshot that fails
the partial check is simply not delivered (final validation decides what the model is told).
"""

from __future__ import annotations

import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

__all__ = ["repair_json", "partial_check", "strip_partial_fences", "MAX_PARTIAL_CHARS", "MAX_PARTIAL_DEPTH"]

MAX_PARTIAL_CHARS = 16 * 1024 * 1024
MAX_PARTIAL_DEPTH = 128

_WS = " \t\n\r"
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUMBER_CHARS = frozenset(".eE+-0123456789")
_LITERALS = {"true": True, "false": False, "null": None}


class _Invalid(Exception):
    """The text cannot be a prefix of a JSON document."""


class _Nothing:
    """Marker: the value at the end of the text is not usable yet."""


_NOTHING = _Nothing()


def _skip(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i


def _string(text: str, i: int) -> tuple[str, int, bool]:
    """Parse a string starting after its quote: (value, next index, complete)."""
    try:
        value, end = scanstring(text, i, True)
        return value, end, True
    except ValueError:
        pass
    # Either malformed (a terminating quote exists) or unterminated.
    j = i
    while True:
        k = text.find('"', j)
        if k == -1:
            break
        backslashes = 0
        m = k - 1
        while m >= i and text[m] == "\\":
            backslashes += 1
            m -= 1
        if backslashes % 2 == 0:
            raise _Invalid("malformed string")
        j = k + 1
    body = text[i:]
    # The text may end inside an escape sequence (at most ``\uXXX``): try shorter bodies.
    cuts = range(0, 6) if "\\" in body[-6:] else range(0, 1)
    for cut in cuts:
        candidate = body[: len(body) - cut]
        try:
            value, _ = scanstring(candidate + '"', 0, True)
        except ValueError:
            continue
        return value, len(text), False
    raise _Invalid("malformed string")


def _value(text: str, i: int, depth: int) -> tuple[Any, int, bool]:
    """Parse one value at ``text[i]`` (no leading whitespace): (value, next, complete)."""
    if depth > MAX_PARTIAL_DEPTH:
        raise _Invalid("too deep")
    n = len(text)
    ch = text[i]
    if ch == '"':
        return _string(text, i + 1)
    if ch == "{":
        return _object(text, i + 1, depth + 1)
    if ch == "[":
        return _array(text, i + 1, depth + 1)
    if ch == "-" or "0" <= ch <= "9":
        match = _NUMBER.match(text, i)
        if match is None:
            if text[i:] == "-":
                return _NOTHING, n, False
            raise _Invalid("malformed number")
        end = match.end()
        if end >= n:
            return _NOTHING, n, False  # a number at the end of the text may still grow
        if text[end] in _NUMBER_CHARS:
            if all(c in _NUMBER_CHARS for c in text[end:]):
                return _NOTHING, n, False  # "1." / "1e" / "1e+": still being written
            raise _Invalid("malformed number")
        token = match.group()
        number: Any = float(token) if ("." in token or "e" in token or "E" in token) else int(token)
        return number, end, True
    for word, literal in _LITERALS.items():
        if text.startswith(word, i):
            return literal, i + len(word), True
        if word.startswith(text[i:]):
            return _NOTHING, n, False
    raise _Invalid("unexpected character")


def _object(text: str, i: int, depth: int) -> tuple[Any, int, bool]:
    result: dict[str, Any] = {}
    n = len(text)
    i = _skip(text, i)
    if i >= n:
        return result, n, False
    if text[i] == "}":
        return result, i + 1, True
    while True:
        if text[i] != '"':
            raise _Invalid("expected a key")
        key, i, complete = _string(text, i + 1)
        if not complete:
            return result, n, False
        i = _skip(text, i)
        if i >= n:
            return result, n, False
        if text[i] != ":":
            raise _Invalid("expected ':'")
        i = _skip(text, i + 1)
        if i >= n:
            return result, n, False
        value, i, complete = _value(text, i, depth)
        if key in result:
            raise _Invalid("duplicate key")
        if value is not _NOTHING:
            result[key] = value
        if not complete:
            return result, n, False
        i = _skip(text, i)
        if i >= n:
            return result, n, False
        if text[i] == "}":
            return result, i + 1, True
        if text[i] != ",":
            raise _Invalid("expected ',' or '}'")
        i = _skip(text, i + 1)
        if i >= n:
            return result, n, False


def _array(text: str, i: int, depth: int) -> tuple[Any, int, bool]:
    result: list[Any] = []
    n = len(text)
    i = _skip(text, i)
    if i >= n:
        return result, n, False
    if text[i] == "]":
        return result, i + 1, True
    while True:
        value, i, complete = _value(text, i, depth)
        if value is not _NOTHING:
            result.append(value)
        if not complete:
            return result, n, False
        i = _skip(text, i)
        if i >= n:
            return result, n, False
        if text[i] == "]":
            return result, i + 1, True
        if text[i] != ",":
            raise _Invalid("expected ',' or ']'")
        i = _skip(text, i + 1)
        if i >= n:
            return result, n, False


def repair_json(text: str) -> tuple[Any, bool] | None:
    """``(value, complete)`` for a JSON prefix, or None when nothing valid can be made of it.

    ``complete`` is True when the text is one whole JSON document (trailing whitespace
    allowed).  A top-level scalar that may still grow yields None.
    """
    if len(text) > MAX_PARTIAL_CHARS:
        return None
    i = _skip(text, 0)
    if i >= len(text):
        return None
    try:
        value, end, complete = _value(text, i, 0)
    except (_Invalid, RecursionError):
        return None
    if value is _NOTHING:
        return None
    if complete and _skip(text, end) != len(text):
        return None  # trailing data: not a JSON document
    return value, complete


def strip_partial_fences(text: str) -> str:
    """Drop a leading Markdown code fence (and a finished closing one) from prompted output."""
    stripped = text.lstrip()
    if not stripped.startswith("```"):
        return text
    newline = stripped.find("\n")
    if newline == -1:
        return ""
    body = stripped[newline + 1:]
    end = body.rfind("```")
    if end != -1 and not body[end + 3:].strip():
        body = body[:end]
    return body


# -- monotonic schema assertions -------------------------------------------------------------


def _resolve(schema: Any, root: Any) -> Any:
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 32:
        ref = schema["$ref"]
        seen += 1
        if ref == "#":
            schema = root
        elif isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref[len("#/$defs/"):].replace("~1", "/").replace("~0", "~")
            schema = (root.get("$defs") or {}).get(name, True)
        else:
            return True
    return schema


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return True


def _check(value: Any, schema: Any, root: Any, depth: int) -> bool:
    if depth > MAX_PARTIAL_DEPTH:
        return False
    schema = _resolve(schema, root)
    if schema is True or not isinstance(schema, dict):
        return schema is not False
    kind = schema.get("type")
    if isinstance(kind, str) and not _type_ok(value, kind):
        return False
    if isinstance(kind, list) and not any(_type_ok(value, k) for k in kind if isinstance(k, str)):
        return False
    for arm in schema.get("allOf") or ():
        if not _check(value, arm, root, depth + 1):
            return False
    for key in ("anyOf", "oneOf"):
        arms = schema.get(key)
        if arms and not any(_check(value, arm, root, depth + 1) for arm in arms):
            return False
    if isinstance(value, dict):
        limit = schema.get("maxProperties")
        if isinstance(limit, int) and len(value) > limit:
            return False
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            if name in properties:
                if not _check(item, properties[name], root, depth + 1):
                    return False
            elif extra is False:
                return False
            elif isinstance(extra, dict) and not _check(item, extra, root, depth + 1):
                return False
    elif isinstance(value, list):
        limit = schema.get("maxItems")
        if isinstance(limit, int) and len(value) > limit:
            return False
        prefix = schema.get("prefixItems") or ()
        items = schema.get("items", True)
        for position, item in enumerate(value):
            sub = prefix[position] if position < len(prefix) else items
            if not _check(item, sub, root, depth + 1):
                return False
    elif isinstance(value, str):
        limit = schema.get("maxLength")
        if isinstance(limit, int) and len(value) > limit:
            return False
    return True


def partial_check(value: Any, schema: Any) -> bool:
    """True when no monotonic assertion of ``schema`` rules ``value`` out (see module docs)."""
    try:
        return _check(value, schema, schema, 0)
    except RecursionError:  # pragma: no cover - bounded by MAX_PARTIAL_DEPTH
        return False
