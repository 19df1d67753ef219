"""Immutable JSON values for message fields (tool return content, provider details, metadata).

``freeze_json`` validates that a Python value is JSON — ``None``, ``bool``, ``int``,
finite ``float``, ``str``, lists/tuples and dicts with ``str`` keys — and returns a
deep, immutable copy: lists become tuples and dicts become :class:`FrozenDict`.
``thaw_json`` returns a fresh mutable copy (``dict``/``list``) that shares nothing
with the frozen value.  Sets, bytes, NaN/infinity, non-string keys, arbitrary
objects and cycles (or nesting deeper than :data:`MAX_DEPTH`) are rejected with the
JSON path of the offending element.

``canonical_json`` is the deterministic text form (sorted keys, no whitespace,
UTF-8 kept as-is) used for equality, hashing and serialization.

``adopt_parsed_json`` is ``freeze_json`` for a tree a JSON decoder has just built and
nobody else holds: it reuses that tree's dicts instead of copying them (decoders only).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, ItemsView, Iterator, Mapping
from typing import Any, TypeAlias

__all__ = [
    "FrozenDict", "JsonValue", "MAX_DEPTH", "NotAdoptable", "adopt_parsed_json", "canonical_json",
    "freeze_json", "thaw_json",
]

#: Deepest container nesting accepted (the history JSON profile's depth).
MAX_DEPTH = 64

JsonValue: TypeAlias = (
    "None | bool | int | float | str | tuple[JsonValue, ...] | FrozenDict"
)


class FrozenDict(Mapping[str, Any]):
    """A hashable, immutable ``str``-keyed mapping holding frozen JSON values."""

    __slots__ = ("_data", "_hash", "_deep")

    _data: dict[str, Any]
    _hash: int | None
    _deep: bool  # built by this module's freezing from checked JSON: every value inside frozen

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "_data", dict(items or {}))
        object.__setattr__(self, "_hash", None)
        object.__setattr__(self, "_deep", False)  # items given by a caller: not known frozen

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("FrozenDict is immutable")

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def items(self) -> ItemsView[str, Any]:
        """The items as a C-level view (same set semantics, no Python generator per item)."""
        return self._data.items()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._data == dict(other.items())
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            object.__setattr__(self, "_hash", hash(canonical_json(self)))
        return self._hash  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (self._data,))


class _NotPlain(Exception):
    """Raised by the fast freeze: let the path-tracking freeze name the problem."""


_new_frozen = FrozenDict.__new__
_set_data = FrozenDict.__dict__["_data"].__set__  # the slots themselves, past __setattr__
_set_hash = FrozenDict.__dict__["_hash"].__set__
_set_deep = FrozenDict.__dict__["_deep"].__set__


def _frozen_dict(data: dict[str, Any]) -> FrozenDict:
    """A deep-frozen FrozenDict that adopts ``data`` (a fresh dict nobody else holds, whose
    values are already frozen JSON)."""
    frozen = _new_frozen(FrozenDict)
    _set_data(frozen, data)
    _set_hash(frozen, None)
    _set_deep(frozen, True)
    return frozen


_LEAVES = frozenset({str, int, bool, type(None)})


def _freeze_plain(value: object, depth: int) -> Any:
    """``freeze_json`` for exact built-in types without computing paths; stricter, never looser.

    Leaves are kept inline, floats too when finite (``x - x`` is ``0.0`` only for a finite
    ``x``; NaN and infinities take the call, which refuses them), so calls are per container.
    """
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is float:
        if not math.isfinite(value):  # type: ignore[arg-type]
            raise _NotPlain
        return value
    if depth >= MAX_DEPTH:
        raise _NotPlain
    inner = depth + 1
    if kind is dict or kind is FrozenDict:
        frozen: dict[str, Any] = {}
        for key, item in value.items():  # type: ignore[attr-defined]
            if type(key) is not str:
                raise _NotPlain
            item_kind = type(item)
            if item_kind in _LEAVES or (item_kind is float and item - item == 0.0):
                frozen[key] = item
            else:
                frozen[key] = _freeze_plain(item, inner)
        return _frozen_dict(frozen)
    if kind is list or kind is tuple:
        return tuple([
            item if type(item) in _LEAVES or (type(item) is float and item - item == 0.0)
            else _freeze_plain(item, inner)
            for item in value  # type: ignore[attr-defined]
        ])
    raise _NotPlain


class NotAdoptable(ValueError):
    """Raised by :func:`adopt_parsed_json` at the first doubt; nothing is reported in it."""


def adopt_parsed_json(value: object, _depth: int = 0) -> Any:
    """Freeze a freshly decoded JSON tree *in place*: its dicts become the frozen dicts' data.

    The caller hands the tree over: it must be the only holder of every container in it
    (true for what ``json.loads`` / ``zigai.json.parse`` just returned).  Keys are not
    checked (a JSON decoder only makes ``str`` keys).  Non-finite floats (``1e999``
    decodes to ``inf``) and nesting deeper than :data:`MAX_DEPTH` raise
    :class:`NotAdoptable`; the tree may then be half converted (some lists already
    tuples, some dicts holding frozen values), which ``freeze_json`` still accepts with
    the same result and errors, so a caller falls back to it.
    """
    kind = type(value)
    if kind is dict:
        if _depth >= MAX_DEPTH:
            raise NotAdoptable
        inner = _depth + 1
        for key, item in value.items():  # type: ignore[attr-defined]
            item_kind = type(item)
            if item_kind in _LEAVES:
                continue
            if item_kind is float:
                if item - item != 0.0:  # NaN or an infinity
                    raise NotAdoptable
                continue
            value[key] = adopt_parsed_json(item, inner)  # type: ignore[index]  # same size
        return _frozen_dict(value)  # type: ignore[arg-type]
    if kind is list:
        if _depth >= MAX_DEPTH:
            raise NotAdoptable
        inner = _depth + 1
        return tuple([
            item if type(item) in _LEAVES or (type(item) is float and item - item == 0.0)
            else adopt_parsed_json(item, inner)
            for item in value  # type: ignore[attr-defined]
        ])
    if kind in _LEAVES or (kind is float and value - value == 0.0):  # type: ignore[operator]
        return value
    raise NotAdoptable


def freeze_json(
    value: object,
    error: Callable[[str], Exception],
    path: str = "$",
    _depth: int = 0,
) -> Any:
    """Validate ``value`` as JSON and return an immutable deep copy; ``error(msg)`` on failure.

    A top-level FrozenDict this module built from checked JSON (a freeze or an adoption) is
    already that copy and is returned as it is.
    """
    if _depth == 0 and type(value) is FrozenDict and value._deep:
        return value
    try:
        return _freeze_plain(value, _depth)
    except (_NotPlain, RecursionError):
        return _freeze_checked(value, error, path, _depth)


def _freeze_checked(
    value: object,
    error: Callable[[str], Exception],
    path: str,
    _depth: int,
) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise error(f"{path}: JSON numbers must be finite, got {value!r}")
        return float(value)
    if _depth >= MAX_DEPTH:
        raise error(f"{path}: JSON nesting deeper than {MAX_DEPTH} (or a cycle)")
    if isinstance(value, (list, tuple)):
        return tuple(
            _freeze_checked(item, error, f"{path}[{index}]", _depth + 1)
            for index, item in enumerate(value)
        )
    if isinstance(value, Mapping):
        frozen: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise error(f"{path}: JSON object keys must be str, got {type(key).__name__}")
            frozen[key] = _freeze_checked(item, error, f"{path}.{key}", _depth + 1)
        return FrozenDict(frozen)
    raise error(f"{path}: {type(value).__name__} is not a JSON value")


def thaw_json(value: Any) -> Any:
    """A fresh, mutable deep copy (``dict``/``list``) of a frozen JSON value."""
    if isinstance(value, FrozenDict):
        return {key: thaw_json(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thaw_json(item) for item in value]
    return value


def canonical_json(value: Any) -> str:
    """Deterministic JSON text of a frozen (or plain) JSON value."""
    return json.dumps(
        thaw_json(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
        allow_nan=False,
    )
