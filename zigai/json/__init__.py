"""Bounded JSON: the one place zigai turns untrusted JSON text into values.

Every zigai decoder of untrusted JSON (history, paused state, provider
responses, tool arguments, MCP messages, schemas, CLI manifests) calls this
module with one of the profiles in :mod:`zigai.json.defaults`, or with a custom
:class:`Limits`.  Standard library only; inside this package ``import json``
is the stdlib module.

Invariants:

* A preflight (:mod:`zigai.json._preflight`) checks the encoded document size,
  the decoded size of every string (object keys included) and the encoded size
  of every number token, the nesting depth and the item count of every
  collection -- without building or retaining a value graph -- *before* the
  stdlib decoder runs.  Exactly-at-limit is accepted; one more fails with
  :class:`DocumentTooLarge`, :class:`ValueTooLarge`, :class:`NestingTooDeep` or
  :class:`TooManyItems`.
* The input must be exactly one JSON document (RFC 8259) in UTF-8, optionally
  surrounded by JSON whitespace.  Everything else is :class:`MalformedJson`:
  invalid UTF-8, a byte-order mark, ``NaN``/``Infinity`` literals, control
  characters in strings, escaped UTF-16 surrogates that do not pair up,
  trailing data, an empty document.
* Duplicate object keys are rejected as :class:`MalformedJson` (compared after
  unescaping), so a document never means different things to different
  parsers.  :func:`validate` applies the same rule.  For a document large
  enough that the preflight counted its members (see
  :func:`_decode_counting_members`), :func:`parse` first decodes without the
  per-object duplicate hook and accepts the value only when the decoded
  objects hold exactly that many members; otherwise it decodes again with
  the hook, so values and errors are exactly those of the hooked decoder.
* :func:`parse` returns plain ``dict``/``list``/``str``/``int``/``float``/
  ``bool``/``None`` owned by the caller.  Numbers with a fraction or exponent
  become ``float`` (beyond the double range: ``inf``, as ``json.loads``
  does); integers become ``int``.  An integer token longer than the
  interpreter's ``sys.get_int_max_str_digits()`` (4300 by default) cannot be
  converted without quadratic cost and raises :class:`ValueTooLarge` even when
  it is within ``max_value_bytes``.
* :func:`dumps` writes compact canonical text (``","``/``":"`` separators,
  UTF-8 characters unescaped, insertion order kept, no NaN/Infinity) and raises
  :class:`MalformedJson` for values JSON cannot represent; :func:`bounded_copy`
  (:mod:`zigai.json._copy`) copies an in-memory value under a profile without recursing.
  :func:`encoded_size` counts the bytes of that text without building it
  (stopping once past a limit), so large values are measured, not copied.

The specification's ``parseLeaky`` (arena-owned decoding) has no separate
meaning in Python: :data:`parse_leaky` is :func:`parse`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from zigai.errors import JsonError
from zigai.json import defaults
from zigai.json._copy import check_shape
from zigai.json._errors import (
    DocumentTooLarge,
    JsonLimitExceeded,
    MalformedJson,
    NestingTooDeep,
    TooManyItems,
    ValueTooLarge,
)
from zigai.json._limits import Limits
from zigai.json._preflight import preflight, preflight_counting_members
from zigai.json._size import encoded_size, utf8_size

__all__ = [
    "Limits",
    "defaults",
    "validate",
    "validate_as",
    "check_limits",
    "is_valid",
    "parse",
    "parse_leaky",
    "dumps",
    "bounded_copy",
    "check_shape",
    "encoded_size",
    "utf8_size",
    "type_name",
    "expected_kinds",
    "wrong_type",
    "ValidationError",
    "MalformedJson",
    "JsonLimitExceeded",
    "DocumentTooLarge",
    "ValueTooLarge",
    "NestingTooDeep",
    "TooManyItems",
]

ValidationError = JsonError
"""The specification's ``json.ValidationError`` set: every error this module raises."""

JsonInput = bytes | bytearray | memoryview | str


class _Rejected(Exception):
    """Raised from decoder hooks; mapped to :class:`MalformedJson`."""


def _reject_constant(name: str) -> Any:
    raise _Rejected(f"{name} is not a JSON number")


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        _raise_duplicate(pairs)
    return obj


def _checked_object_discarded(pairs: list[tuple[str, Any]]) -> None:
    if len(pairs) > 1 and len(dict(pairs)) != len(pairs):
        _raise_duplicate(pairs)


def _raise_duplicate(pairs: list[tuple[str, Any]]) -> None:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _Rejected(f"duplicate object key {key[:64]!r}")
        seen.add(key)


_BUILDING = json.JSONDecoder(object_pairs_hook=_unique_object, parse_constant=_reject_constant)
# Validation discards every object as soon as it is complete, so at most the
# open containers on the current path are alive at any time.
_CHECKING = json.JSONDecoder(
    object_pairs_hook=_checked_object_discarded, parse_constant=_reject_constant
)


def _decode(decoder: json.JSONDecoder, text: str, limits: Limits) -> Any:
    try:
        return decoder.decode(text)
    except json.JSONDecodeError as exc:
        offset = exc.pos if text.isascii() else len(text[: exc.pos].encode("utf-8", "surrogatepass"))
        # The stdlib's own text sometimes ends in "at" ("Invalid control character at").
        reason = exc.msg.removesuffix(" at")
        raise MalformedJson(f"malformed JSON: {reason} at byte {offset}", offset=offset) from None
    except _Rejected as exc:
        raise MalformedJson(f"malformed JSON: {exc}") from None
    except RecursionError:
        raise NestingTooDeep(
            f"JSON nesting exceeds what this interpreter can decode recursively "
            f"(max_depth {limits.max_depth} is above its recursion limit)",
            limit=limits.max_depth,
        ) from None
    except ValueError as exc:
        # int() refuses integer literals longer than sys.get_int_max_str_digits().
        digits = sys.get_int_max_str_digits()
        raise ValueTooLarge(
            f"JSON integer has more than {digits} digits, the interpreter's conversion limit ({exc})",
            limit=digits,
            kind="number",
        ) from None


def _decode_counting_members(text: str, members: int) -> tuple[Any, bool]:
    """Decode without the duplicate-key hook; ``(value, True)`` only when no key was lost.

    ``members`` is the preflight's count of ``:`` outside strings.  When the
    stdlib accepts the text it is well-formed JSON, where each such ``:``
    separates exactly one object member, and its dicts keep the last of
    duplicate keys; so the dicts' sizes add up to ``members`` exactly when no
    object repeats a key, and the value then equals the hooked decoder's.  On
    any failure or shortfall the caller re-decodes with the hook, which
    reports exactly what it always reported.
    """
    sizes: list[int] = []
    record = sizes.append

    def keep(obj: dict[str, Any]) -> dict[str, Any]:
        record(len(obj))
        return obj

    decoder = json.JSONDecoder(object_hook=keep, parse_constant=_reject_constant)
    try:
        value = decoder.decode(text)
    except (ValueError, _Rejected, RecursionError):
        return None, False
    return value, sum(sizes) == members


def _detached(exc: JsonError) -> JsonError:
    """``exc`` without the stdlib error it was raised while handling.

    ``raise ... from None`` only hides the context: ``JSONDecodeError.doc`` and
    ``UnicodeDecodeError.object`` hold the whole (untrusted, maybe secret-bearing) document,
    and an error kept in a log, a result or a retry record would keep it reachable.
    """
    exc.__context__ = None
    exc.__cause__ = None
    return exc


def validate(data: JsonInput, limits: Limits) -> None:
    """Check that ``data`` is one JSON document within ``limits``; build no value graph.

    Raises :class:`MalformedJson` or one of the four limit errors.
    """
    try:
        text = preflight(data, limits)
        _decode(_CHECKING, text, limits)
    except JsonError as exc:
        raise _detached(exc) from None


def check_limits(data: JsonInput, limits: Limits) -> None:
    """The limit half of :func:`validate`, for text a JSON encoder (``dumps``,
    ``json.dumps``) has just written: size, strings, numbers, depth and items
    are checked exactly as :func:`validate` checks them, and ``str`` input must
    be encodable as UTF-8; the syntax is not re-checked, so never call this on
    text that came from outside the process.
    """
    try:
        preflight(data, limits)
    except JsonError as exc:
        raise _detached(exc) from None


def validate_as(data: JsonInput, limits: Limits, error: type[Exception]) -> None:
    """:func:`validate`, re-raising any JSON failure as ``error(message)`` from the original."""
    try:
        validate(data, limits)
    except JsonError as exc:
        raise error(str(exc)) from exc


def is_valid(data: JsonInput, limits: Limits) -> bool:
    """True when :func:`validate` would accept ``data``."""
    try:
        validate(data, limits)
    except JsonError:
        return False
    return True


def parse(data: JsonInput, limits: Limits, error: type[Exception] | None = None) -> Any:
    """Preflight ``data`` against ``limits``, then decode it into plain Python values.

    With ``error`` set, any JSON failure is re-raised as ``error(message)`` from
    the original named error (the boundary's stable error); otherwise the named
    error propagates.
    """
    try:
        text, members = preflight_counting_members(data, limits)
        if members is not None:
            value, complete = _decode_counting_members(text, members)
            if complete:
                return value
        return _decode(_BUILDING, text, limits)
    except JsonError as exc:
        if error is None:
            raise _detached(exc) from None
        raise error(str(exc)) from _detached(exc)


parse_leaky = parse
"""The specification's arena variant; identical to :func:`parse` in Python."""


def _mapping_as_dict(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")


_ENCODER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_mapping_as_dict
)


def dumps(value: Any) -> str:
    """Compact canonical JSON text for ``value``.

    Accepts dict (and other mappings), list, tuple, str, int, float, bool and
    None.  Keys that are int/float/bool/None are written as strings, as the
    stdlib does.  Raises :class:`MalformedJson` for anything else, for NaN and
    infinities and for circular references; :class:`NestingTooDeep` when the
    value nests beyond the interpreter's recursion limit.
    """
    try:
        return _ENCODER.encode(value)
    except RecursionError:
        raise NestingTooDeep("value nests too deeply to serialize") from None
    except (TypeError, ValueError) as exc:
        raise MalformedJson(f"not a JSON value: {exc}") from None


def bounded_copy(value: Any, limits: Limits) -> Any:
    """A plain ``dict``/``list``/scalar copy of an in-memory ``value`` within ``limits``.

    :func:`check_shape` walks it first without recursion (non-string keys, nesting, an
    exploding shared sub-value), then its :func:`dumps` text is parsed under ``limits``, so
    every bound is exact: at the limit is accepted, one more fails with the named error.
    """
    check_shape(value, limits)
    return parse(dumps(value), limits)


_KIND_WORDS = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array",
               tuple: "array", dict: "object", type(None): "null"}


def expected_kinds(kind: type | tuple[type, ...]) -> str:
    """The JSON words for Python types in a "wrong type" message (``int``/``float`` is ``number``)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    words: list[str] = []
    for item in kinds:
        word = "number" if item is float else _KIND_WORDS.get(item, item.__name__)
        if word not in words:
            words.append(word)
    if "number" in words and "integer" in words:
        words.remove("integer")
    return " or ".join(words)


def wrong_type(key: str, value: Any, kind: type | tuple[type, ...]) -> str:
    """``'key' has the wrong type: expected integer, got string`` for error messages."""
    return f"{key!r} has the wrong type: expected {expected_kinds(kind)}, got {type_name(value)}"


def type_name(value: Any) -> str:
    """The JSON type of a decoded value, for error messages (``null``, ``boolean``,
    ``number``, ``string``, ``array``, ``object``); any other value gives its Python type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
