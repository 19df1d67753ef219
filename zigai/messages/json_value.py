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
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeAlias

__all__ = ["FrozenDict", "JsonValue", "MAX_DEPTH", "canonical_json", "freeze_json", "thaw_json"]

#: Deepest container nesting accepted (the history JSON profile's depth).
MAX_DEPTH = 64

JsonValue: TypeAlias = (
    "None | bool | int | float | str | tuple[JsonValue, ...] | FrozenDict"
)


class FrozenDict(Mapping[str, Any]):
    """A hashable, immutable ``str``-keyed mapping holding frozen JSON values."""

    __slots__ = ("_data", "_hash")

    _data: dict[str, Any]
    _hash: int | None

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "_data", dict(items or {}))
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("FrozenDict is immutable")

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

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


def freeze_json(
    value: object,
    error: Callable[[str], Exception],
    path: str = "$",
    _depth: int = 0,
) -> Any:
    """Validate ``value`` as JSON and return an immutable deep copy; ``error(msg)`` on failure."""
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
            freeze_json(item, error, f"{path}[{index}]", _depth + 1)
            for index, item in enumerate(value)
        )
    if isinstance(value, Mapping):
        frozen: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise error(f"{path}: JSON object keys must be str, got {type(key).__name__}")
            frozen[key] = freeze_json(item, error, f"{path}.{key}", _depth + 1)
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
