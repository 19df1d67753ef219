"""Deterministic, schema-valid JSON values generated from a JSON Schema of the local dialect.

Job: :func:`generate_from_schema` returns a fresh JSON value (``dict``, ``list``, ``str``,
``int``, ``float``, ``bool`` or ``None``) that satisfies a schema accepted by
:mod:`zigai.json_schema`.  ``TestModel`` uses it for tool arguments and structured output;
applications can use it to build fixtures.

Theory of operation: one *attempt* walks the schema top-down.  At every value it first
folds the combinators into one flat schema — ``$ref`` targets, every ``allOf`` member, one
chosen ``anyOf``/``oneOf`` branch and one ``if``/``then`` or ``else`` path are merged with
their sibling keywords (bounds tighten, ``required`` and ``properties`` unite, ``type`` and
``enum`` intersect) — and then builds the value keyword by keyword: every required and
optional property, arrays of ``minItems`` (at least one item near the root), strings and
numbers inside their bounds and on their ``multipleOf`` grid.  The finished value is
checked by the real validator.  What the constructive pass cannot guarantee (``not``,
``oneOf`` exclusivity, ``uniqueItems`` over tiny enums, ``maxContains`` ...) is handled by
further attempts that make different choices, up to ``max_attempts``.

Invariants:

* deterministic: the same schema and seed give the same value on every platform and
  Python version (an own SplitMix64 generator, not :mod:`random`);
* the first attempt prefers non-null alternatives, so optional values are filled in;
* every returned value has passed :class:`zigai.json_schema.Validator`; an unusable schema
  raises ``InvalidJsonSchema``/``UnsupportedJsonSchema`` and a schema no attempt could
  satisfy raises :class:`SchemaGenerationFailed`;
* the input schema is never mutated and the result shares no objects with it.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any
from urllib.parse import unquote

from zigai.errors import ModelError

__all__ = ["generate_from_schema", "SchemaGenerationFailed", "DEFAULT_MAX_ATTEMPTS"]

DEFAULT_MAX_ATTEMPTS = 32
"""Attempts :func:`generate_from_schema` makes before giving up."""

_MAX_DEPTH = 24  # nested values deeper than this make an attempt fail (runaway recursion)
_SHALLOW = 3  # below this depth only required properties and minItems items are produced
_MAX_FOLD_STEPS = 64
_MASK = (1 << 64) - 1
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_ALL_TYPES = ("string", "integer", "boolean", "number", "object", "array", "null")
_OBJECT_HINTS = ("properties", "required", "additionalProperties", "minProperties",
                 "maxProperties", "propertyNames", "dependentRequired")
_ARRAY_HINTS = ("items", "prefixItems", "contains", "minItems", "maxItems", "uniqueItems",
                "minContains", "maxContains")
_STRING_HINTS = ("minLength", "maxLength")
_NUMBER_HINTS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
# Readable values for common ``format`` annotations (used only when the length bounds allow).
_FORMAT_SAMPLES = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "00:00:00Z",
    "email": "user@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "duration": "P1D",
}


class SchemaGenerationFailed(ModelError):
    """No attempt produced a value satisfying the schema (it may be unsatisfiable)."""

    def __init__(self, message: str, attempts: int = 0) -> None:
        super().__init__(message)
        self.attempts = attempts


class _Unsatisfiable(Exception):
    """Internal: this attempt's choices cannot produce a valid value."""


class _SplitMix64:
    """Tiny deterministic generator, stable across Python versions."""

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self._state = seed & _MASK

    def next(self) -> int:
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A value in ``[0, n)``; ``n`` must be positive."""
        return self.next() % n


def generate_from_schema(schema: Any, seed: int = 0, *,
                         max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> Any:
    """A fresh JSON value that satisfies ``schema``, the same one for the same ``seed``.

    Raises the dialect's ``InvalidJsonSchema``/``UnsupportedJsonSchema`` for a schema
    :mod:`zigai.json_schema` refuses, and :class:`SchemaGenerationFailed` when
    ``max_attempts`` attempts all failed.
    """
    from zigai.json_schema import Validator

    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError("seed must be an int")
    if max_attempts < 1:
        raise ValueError("max_attempts must be >= 1")
    validator = Validator(schema)  # preflight: refuses schemas outside the dialect
    root = validator.schema  # the validator's private copy: generation never touches ``schema``
    for attempt in range(max_attempts):
        builder = _Builder(root, seed, attempt)
        try:
            value = builder.value(root, 0)
        except _Unsatisfiable:
            continue
        if validator.is_valid(value):
            return value
    raise SchemaGenerationFailed(
        f"no value satisfying the schema was found in {max_attempts} attempts "
        "(the schema may be unsatisfiable)",
        max_attempts,
    )


# --------------------------------------------------------------------------- helpers


def _json_key(value: Any) -> str:
    """Equality key with JSON Schema semantics: 1 == 1.0, but true != 1."""
    return json.dumps(_normalize_number(value), sort_keys=True, separators=(",", ":"))


def _normalize_number(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {k: _normalize_number(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalize_number(v) for v in value]
    return value


def _json_type_matches(value: Any, type_name: str) -> bool:
    if type_name == "null":
        return value is None
    if type_name == "boolean":
        return isinstance(value, bool)
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "array":
        return isinstance(value, list)
    if type_name == "object":
        return isinstance(value, dict)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if type_name == "integer":
        return isinstance(value, int) or float(value).is_integer()
    return type_name == "number"


def _types_of(schema: Mapping[str, Any]) -> list[str] | None:
    declared = schema.get("type")
    if declared is None:
        return None
    return [declared] if isinstance(declared, str) else list(declared)


def _intersect_types(a: list[str], b: list[str]) -> list[str]:
    out = [t for t in a if t in b]
    if "number" in a and "integer" in b and "integer" not in out:
        out.append("integer")
    if "integer" in a and "number" in b and "integer" not in out:
        out.append("integer")
    return out


def _as_fraction(value: Any) -> Fraction:
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float):
        return Fraction(repr(value))  # the decimal literal, not the binary approximation
    return Fraction(value)


def _lcm_fraction(a: Fraction, b: Fraction) -> Fraction:
    return Fraction(math.lcm(a.numerator, b.numerator), math.gcd(a.denominator, b.denominator))


def _both(a: Any, b: Any) -> Any:
    """A subschema that requires both ``a`` and ``b`` (booleans simplified)."""
    if a is True:
        return b
    if b is True:
        return a
    if a is False or b is False:
        return False
    return {"allOf": [a, b]}


def _is_nullish(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    if schema.get("type") == "null" or schema.get("type") == ["null"]:
        return True
    if "const" in schema and schema["const"] is None:
        return True
    enum = schema.get("enum")
    return isinstance(enum, list) and enum == [None]


_TAKE_MAX = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties",
             "minContains")
_TAKE_MIN = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties",
             "maxContains")
_BOTH_SUBSCHEMA = ("items", "additionalProperties", "contains", "propertyNames")
_DEFERRED = ("$ref", "anyOf", "oneOf", "not")


def _merge(a: Any, b: Any) -> Any:
    """One flat schema requiring ``a`` and ``b``; conflicts it cannot fold go to ``allOf``."""
    if a is True:
        return dict(b) if isinstance(b, Mapping) else b
    if b is True:
        return dict(a) if isinstance(a, Mapping) else a
    if a is False or b is False:
        return False
    out = dict(a)
    later: list[Any] = []
    for key, theirs in b.items():
        if key not in out:
            out[key] = theirs
            continue
        ours = out[key]
        if key == "type":
            types = _intersect_types(_types_of(out) or [], _types_of(b) or [])
            if not types:
                raise _Unsatisfiable
            out[key] = types
        elif key in _TAKE_MAX:
            out[key] = max(ours, theirs)
        elif key in _TAKE_MIN:
            out[key] = min(ours, theirs)
        elif key == "multipleOf":
            out[key] = _lcm_fraction(_as_fraction(ours), _as_fraction(theirs))
        elif key == "uniqueItems":
            out[key] = bool(ours) or bool(theirs)
        elif key == "required":
            out[key] = list(ours) + [n for n in theirs if n not in ours]
        elif key == "enum":
            keys = {_json_key(v) for v in theirs}
            kept = [v for v in ours if _json_key(v) in keys]
            if not kept:
                raise _Unsatisfiable
            out[key] = kept
        elif key == "const":
            if _json_key(ours) != _json_key(theirs):
                raise _Unsatisfiable
        elif key == "properties":
            merged = dict(ours)
            for name, sub in theirs.items():
                merged[name] = _both(merged[name], sub) if name in merged else sub
            out[key] = merged
        elif key == "prefixItems":
            longer, shorter = (ours, theirs) if len(ours) >= len(theirs) else (theirs, ours)
            out[key] = [
                _both(longer[i], shorter[i]) if i < len(shorter) else longer[i]
                for i in range(len(longer))
            ]
        elif key == "dependentRequired":
            merged_deps = {k: list(v) for k, v in ours.items()}
            for name, deps in theirs.items():
                current = merged_deps.setdefault(name, [])
                current.extend(d for d in deps if d not in current)
            out[key] = merged_deps
        elif key in _BOTH_SUBSCHEMA:
            out[key] = _both(ours, theirs)
        elif key == "allOf":
            out[key] = list(ours) + list(theirs)
        elif key in _DEFERRED:
            later.append({key: theirs})
        elif key == "if":
            later.append({k: b[k] for k in ("if", "then", "else") if k in b})
        # annotations, $defs, $schema, then/else (paired with a kept "if"): ours win
    if later:
        out["allOf"] = list(out.get("allOf", [])) + later
    return out


# --------------------------------------------------------------------------- the builder


class _Builder:
    """One attempt: folds combinators and builds a value with this attempt's choices."""

    __slots__ = ("_root", "_rng", "_attempt")

    def __init__(self, root: Any, seed: int, attempt: int) -> None:
        self._root = root
        self._attempt = attempt
        self._rng = _SplitMix64(seed * 0x100000001B3 + attempt * 0x9E3779B1)

    # -- choices

    def _pick(self, options: Sequence[Any], nullish: Callable[[Any], bool]) -> Any:
        """The first attempt prefers non-null options; later ones explore all of them."""
        if not options:
            raise _Unsatisfiable
        if self._attempt == 0:
            preferred = [o for o in options if not nullish(o)]
            if preferred:
                return preferred[self._rng.below(len(preferred))]
        return options[self._rng.below(len(options))]

    # -- folding

    def _resolve(self, ref: str) -> Any:
        if ref == "#":
            return self._root
        prefix = "#/$defs/"
        if not ref.startswith(prefix):
            raise _Unsatisfiable  # the dialect preflight refuses other references
        name = unquote(ref[len(prefix):]).replace("~1", "/").replace("~0", "~")
        defs = self._root.get("$defs", {}) if isinstance(self._root, Mapping) else {}
        if name not in defs:
            raise _Unsatisfiable
        return defs[name]

    def _fold(self, schema: Any) -> dict[str, Any]:
        if schema is True:
            return {}
        if schema is False:
            raise _Unsatisfiable
        flat: Any = dict(schema)
        for _ in range(_MAX_FOLD_STEPS):
            if "$ref" in flat:
                target = self._resolve(flat.pop("$ref"))
                flat = _merge(flat, target)
            elif "anyOf" in flat or "oneOf" in flat:
                key = "anyOf" if "anyOf" in flat else "oneOf"
                flat = _merge(flat, self._pick(flat.pop(key), _is_nullish))
            elif "if" in flat:
                condition = flat.pop("if")
                then = flat.pop("then", True)
                otherwise = flat.pop("else", True)
                paths = [_merge(condition, then) if condition is not False else False, otherwise]
                paths = [p for p in paths if p is not False]
                flat = _merge(flat, self._pick(paths, lambda _p: False))
            elif "allOf" in flat:  # last: members that clash with a pending choice wait for it
                members = flat.pop("allOf")
                for member in members:
                    flat = _merge(flat, member)
                    if flat is False:
                        raise _Unsatisfiable
            else:
                flat.pop("then", None)
                flat.pop("else", None)
                return dict(flat)
            if flat is False:
                raise _Unsatisfiable
        raise _Unsatisfiable

    # -- values

    def value(self, schema: Any, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise _Unsatisfiable
        flat = self._fold(schema)
        types = _types_of(flat)
        if "const" in flat:
            return copy.deepcopy(flat["const"])
        if "enum" in flat:
            candidates = [v for v in flat["enum"]
                          if types is None or any(_json_type_matches(v, t) for t in types)]
            return copy.deepcopy(self._pick(candidates, lambda v: v is None))
        if types is None:
            types = self._inferred_types(flat)
        chosen = self._pick(types, lambda t: t == "null")
        if chosen == "null":
            return None
        if chosen == "boolean":
            return self._rng.below(2) == 0
        if chosen == "string":
            return self._string(flat)
        if chosen == "integer":
            return self._integer(flat)
        if chosen == "number":
            return self._number(flat)
        if chosen == "array":
            return self._array(flat, depth)
        if chosen == "object":
            return self._object(flat, depth)
        raise _Unsatisfiable

    @staticmethod
    def _inferred_types(flat: Mapping[str, Any]) -> list[str]:
        if any(k in flat for k in _OBJECT_HINTS):
            return ["object"]
        if any(k in flat for k in _ARRAY_HINTS):
            return ["array"]
        if any(k in flat for k in _STRING_HINTS):
            return ["string"]
        if any(k in flat for k in _NUMBER_HINTS):
            return ["integer", "number"]
        return list(_ALL_TYPES)

    def _string(self, flat: Mapping[str, Any]) -> str:
        low = int(flat.get("minLength", 0))
        high = flat.get("maxLength")
        if high is not None and low > high:
            raise _Unsatisfiable
        sample = _FORMAT_SAMPLES.get(str(flat.get("format", "")))
        if sample is not None and low <= len(sample) and (high is None or len(sample) <= high):
            return sample
        length = max(low, 3 + self._rng.below(6))
        if high is not None:
            length = min(length, int(high))
        return "".join(_LETTERS[self._rng.below(len(_LETTERS))] for _ in range(length))

    @staticmethod
    def _bounds(flat: Mapping[str, Any]) -> tuple[Fraction | None, bool, Fraction | None, bool]:
        """(low, low_exclusive, high, high_exclusive) with the tighter of each pair."""
        low: Fraction | None = None
        low_excl = False
        if "minimum" in flat:
            low = _as_fraction(flat["minimum"])
        if "exclusiveMinimum" in flat:
            candidate = _as_fraction(flat["exclusiveMinimum"])
            if low is None or candidate >= low:
                low, low_excl = candidate, True
        high: Fraction | None = None
        high_excl = False
        if "maximum" in flat:
            high = _as_fraction(flat["maximum"])
        if "exclusiveMaximum" in flat:
            candidate = _as_fraction(flat["exclusiveMaximum"])
            if high is None or candidate <= high:
                high, high_excl = candidate, True
        return low, low_excl, high, high_excl

    def _grid_int(self, low: int | None, high: int | None, step: int) -> int | None:
        """An integer multiple of ``step`` in ``[low, high]`` near zero, or None."""
        first = None if low is None else -((-low) // step) * step
        last = None if high is None else (high // step) * step
        if first is not None and last is not None and first > last:
            return None
        anchor = 0
        if first is not None:
            anchor = max(anchor, first)
        if last is not None:
            anchor = min(anchor, last)
        room = max(0, 99 // step)  # stay within about a hundred of the anchor
        if last is not None:
            room = min(room, (last - anchor) // step)
        return anchor + step * self._rng.below(room + 1)

    @staticmethod
    def _int_range(low: Fraction | None, low_excl: bool, high: Fraction | None,
                   high_excl: bool) -> tuple[int | None, int | None]:
        int_low = None
        if low is not None:
            int_low = math.floor(low) + 1 if low_excl else math.ceil(low)
        int_high = None
        if high is not None:
            int_high = math.ceil(high) - 1 if high_excl else math.floor(high)
        return int_low, int_high

    def _integer(self, flat: Mapping[str, Any]) -> int:
        step = _as_fraction(flat["multipleOf"]).numerator if "multipleOf" in flat else 1
        int_low, int_high = self._int_range(*self._bounds(flat))
        value = self._grid_int(int_low, int_high, step)
        if value is None:
            raise _Unsatisfiable
        return value

    def _number(self, flat: Mapping[str, Any]) -> float:
        low, low_excl, high, high_excl = self._bounds(flat)
        multiple = _as_fraction(flat["multipleOf"]) if "multipleOf" in flat else None
        fractional = self._attempt > 0 and self._rng.below(2) == 0
        if not fractional:
            step = multiple.numerator if multiple is not None else 1
            value = self._grid_int(*self._int_range(low, low_excl, high, high_excl), step)
            if value is not None:
                return float(value)
        if multiple is not None:
            k = self._grid_int(
                *self._int_range(
                    None if low is None else low / multiple, low_excl,
                    None if high is None else high / multiple, high_excl,
                ),
                1,
            )
            if k is None:
                raise _Unsatisfiable
            return float(k * multiple)
        if low is not None and high is not None:
            if low > high or (low == high and (low_excl or high_excl)):
                raise _Unsatisfiable
            return float((low + high) / 2)
        base = Fraction(self._rng.below(100)) + Fraction(1, 2)
        if low is not None and base <= low:
            base = math.floor(low) + Fraction(3, 2)
        if high is not None and base >= high:
            base = math.ceil(high) - Fraction(3, 2)
        return float(base)

    def _array(self, flat: Mapping[str, Any], depth: int) -> list[Any]:
        prefix = list(flat.get("prefixItems", []))
        items = flat.get("items", True)
        low = int(flat.get("minItems", 0))
        high = flat.get("maxItems")
        if items is False:
            high = len(prefix) if high is None else min(int(high), len(prefix))
        contains = flat.get("contains")
        need = 0
        if contains is not None:
            need = int(flat.get("minContains", 1))
            if "maxContains" in flat:
                need = min(need, int(flat["maxContains"]))
        preferred = 0 if depth >= _SHALLOW else max(1, len(prefix))
        length = max(low, need, preferred)
        if high is not None:
            length = min(length, int(high))
        if length < low or length < need:
            raise _Unsatisfiable
        unique = bool(flat.get("uniqueItems"))
        seen: set[str] = set()
        result: list[Any] = []
        for index in range(length):
            sub = prefix[index] if index < len(prefix) else items
            if index < need:
                sub = _both(sub, contains)
            element = self.value(sub, depth + 1)
            if unique:
                for _ in range(8):
                    if _json_key(element) not in seen:
                        break
                    element = self.value(sub, depth + 1)
                seen.add(_json_key(element))
            result.append(element)
        return result

    def _object(self, flat: Mapping[str, Any], depth: int) -> dict[str, Any]:
        properties: Mapping[str, Any] = flat.get("properties", {})
        required = list(flat.get("required", []))
        extra_schema = flat.get("additionalProperties", True)
        names = list(required)
        if depth < _SHALLOW:
            # an optional property whose schema is false is one the value must not have
            names += [n for n in properties if n not in names and properties[n] is not False]
        dependent: Mapping[str, Sequence[str]] = flat.get("dependentRequired", {})
        changed = True
        while changed:
            changed = False
            for name in list(names):
                for dep in dependent.get(name, ()):
                    if dep not in names:
                        names.append(dep)
                        changed = True
        high = flat.get("maxProperties")
        if high is not None and len(names) > high:
            keep = set(required)
            names = [n for n in names if n in keep] + [n for n in names if n not in keep]
            names = names[: max(int(high), len(required))]
        result: dict[str, Any] = {}
        for name in names:
            sub = properties[name] if name in properties else extra_schema
            result[name] = self.value(sub, depth + 1)
        low = int(flat.get("minProperties", 0))
        name_schema = _merge({"type": "string"}, flat.get("propertyNames", True))
        tries = 0
        while len(result) < low:
            tries += 1
            if extra_schema is False or tries > low * 4 + 8:
                raise _Unsatisfiable
            name = self.value(name_schema, depth + 1)
            if name in result or name in properties:
                continue
            result[name] = self.value(extra_schema, depth + 1)
        return result
