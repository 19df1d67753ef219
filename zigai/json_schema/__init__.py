"""The local JSON Schema dialect: a fail-closed subset of Draft 2020-12.

Job: decide whether a hand-written schema is usable (``validate_schema``), and check
values against usable schemas (``Validator``) before zigai trusts structured output.

Supported assertions: ``type``, ``enum``, ``const``, ``allOf``/``anyOf``/``oneOf``/``not``,
``if``/``then``/``else``; ``$defs`` with ``#`` and single-segment ``#/$defs/<name>``
references (``~0``/``~1`` and percent escapes); ``properties``, ``required``,
``additionalProperties``, ``propertyNames``, ``dependentRequired``, ``min/maxProperties``;
``items``, ``prefixItems``, ``contains``, ``min/maxContains``, ``min/maxItems``,
``uniqueItems``; ``min/maxLength`` counted in Unicode code points; ``minimum``,
``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum`` and ``multipleOf``.  Annotations
(``title``, ``description``, ``default``, ``examples``, ``format``, ``readOnly``,
``writeOnly``, ``deprecated``, ``$comment``) are accepted and never assert; ``$schema`` must
be :data:`supported_dialect` and ``$id`` is accepted at the root only.

Invariants:

* Fail closed. Unknown keywords, regex keywords, anchors, dynamic and unevaluated
  keywords, and every reference other than ``#``/``#/$defs/<name>`` raise
  :class:`UnsupportedJsonSchema`; malformed supported vocabulary raises
  :class:`InvalidJsonSchema`.  No keyword is ever silently ignored.
* No I/O. References resolve inside the schema document only; the validator's reference
  registry refuses every retrieval, so nothing can reach the network or the file system.
* Draft 2020-12 semantics: ``1.0`` is an integer, booleans are not numbers, ``format``
  is an annotation, string lengths count code points, ``1`` equals ``1.0`` but not ``true``.
* Ownership: a :class:`Validator` keeps its own deep copy of the schema; later changes to
  the caller's object do not affect it, and it never mutates inputs.
* ``import zigai.json_schema`` does not import ``jsonschema``; the checking engine is
  loaded the first time a :class:`Validator` is built.  Compile once, validate many times.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from itertools import islice
from typing import Any

from zigai.json_schema._errors import (
    InvalidJsonSchema,
    OutputSchemaValidationFailed,
    UnsupportedJsonSchema,
)
from zigai.json_schema._flat import compile_flat
from zigai.json_schema._preflight import (
    SUPPORTED_DIALECT,
    UNSUPPORTED_KEYWORDS,
    check_json_value,
    preflight,
)

__all__ = [
    "supported_dialect",
    "validate_schema",
    "parse_schema",
    "Validator",
    "validate",
    "is_valid",
    "InvalidJsonSchema",
    "UnsupportedJsonSchema",
    "OutputSchemaValidationFailed",
    "UNSUPPORTED_KEYWORDS",
    "MAX_REPORTED_ERRORS",
]

supported_dialect: str = SUPPORTED_DIALECT
"""The one ``$schema`` URI the dialect accepts (omitting ``$schema`` means the same)."""

MAX_REPORTED_ERRORS = 16
"""At most this many failures are collected into OutputSchemaValidationFailed.errors."""

_MAX_MESSAGE_CHARS = 240
_CACHE_SIZE = 128


def validate_schema(schema: Any) -> None:
    """Preflight ``schema`` (a decoded JSON value); raise unless the dialect supports it."""
    preflight(schema)


def parse_schema(text: str | bytes) -> Any:
    """Decode ``text`` under the JSON Schema limits profile and preflight the result.

    Limit and syntax failures raise the ``zigai.json`` error (``DocumentTooLarge``,
    ``MalformedJson`` ...); dialect failures raise InvalidJsonSchema / UnsupportedJsonSchema.
    """
    from zigai import json as bounded_json

    schema = bounded_json.parse(text, bounded_json.defaults.json_schema)
    preflight(schema)
    return schema


_engine_lock = threading.Lock()
_engine: tuple[Any, Any] | None = None


def _load_engine() -> tuple[Any, Any]:
    """Import jsonschema lazily; return (validator class, refusing registry)."""
    global _engine
    with _engine_lock:
        if _engine is None:
            from jsonschema import Draft202012Validator
            from referencing import Registry
            from referencing.exceptions import NoSuchResource

            def refuse(uri: str) -> Any:
                raise NoSuchResource(ref=uri)  # type: ignore[call-arg]

            _engine = (Draft202012Validator, Registry(retrieve=refuse))  # type: ignore[call-arg]
        return _engine


def _json_path(path: Any) -> str:
    parts = ["$"]
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif step.isidentifier() and step.isascii():
            parts.append(f".{step}")
        else:
            parts.append(f"[{json.dumps(step, ensure_ascii=False)}]")
    return "".join(parts)


def _short(message: str) -> str:
    if len(message) <= _MAX_MESSAGE_CHARS:
        return message
    return message[: _MAX_MESSAGE_CHARS - 3] + "..."


class Validator:
    """A schema preflighted and compiled once; check many instances against it.

    Thread-safe: the compiled engine holds no per-call state.
    """

    __slots__ = ("_schema", "_engine", "_flat")

    def __init__(self, schema: Any) -> None:
        preflight(schema)
        owned = json.loads(json.dumps(schema, allow_nan=False))
        cls, registry = _load_engine()
        self._schema = owned
        self._engine = cls(owned, registry=registry)
        self._flat = compile_flat(owned)  # a shortcut for flat object schemas, else None

    @property
    def schema(self) -> Any:
        """A fresh copy of the compiled schema (the validator's own copy stays private)."""
        return json.loads(json.dumps(self._schema))

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` satisfies the schema."""
        if self._flat is not None and self._flat(instance):
            return True
        try:
            return bool(self._engine.is_valid(instance))
        except RecursionError:
            return False

    def errors(self, instance: Any) -> list[tuple[str, str]]:
        """Up to MAX_REPORTED_ERRORS ``(json_path, message)`` failures; empty when valid."""
        if self._flat is not None and self._flat(instance):
            return []
        try:
            found = list(islice(self._engine.iter_errors(instance), MAX_REPORTED_ERRORS))
        except RecursionError:
            return [("$", "value nests too deeply to validate")]
        return [(_json_path(error.absolute_path), _short(error.message)) for error in found]

    def validate(self, instance: Any) -> None:
        """Raise OutputSchemaValidationFailed unless ``instance`` satisfies the schema."""
        failures = self.errors(instance)
        if not failures:
            return
        path, message = failures[0]
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        raise OutputSchemaValidationFailed(
            f"value does not match the JSON Schema at {path}: {message}{more}", failures
        )


_cache_lock = threading.Lock()
_cache: OrderedDict[str, Validator] = OrderedDict()


def _cached(schema: Any) -> Validator:
    """Return a compiled Validator for schema, reusing one for an equal schema text.

    The plain-JSON check runs on every call, so a cache hit can never admit a value that
    preflight would reject for its Python types (tuples, non-string keys, NaN) even though
    ``json.dumps`` would render it like an accepted schema.
    """
    check_json_value(schema, 0)
    key = json.dumps(schema, sort_keys=True, allow_nan=False, separators=(",", ":"))
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    compiled = Validator(schema)
    with _cache_lock:
        _cache[key] = compiled
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return compiled


def validate(instance: Any, schema: Any) -> None:
    """Preflight (cached by schema text) and check; raise OutputSchemaValidationFailed."""
    _cached(schema).validate(instance)


def is_valid(instance: Any, schema: Any) -> bool:
    """Boolean form of :func:`validate`; still raises for an unusable schema."""
    return _cached(schema).is_valid(instance)
