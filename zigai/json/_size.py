"""Measure the encoded size of a value without building its encoding.

:func:`encoded_size` answers "how many UTF-8 bytes would ``zigai.json.dumps(value)``
take?" by walking the value: strings are escaped and encoded a slice at a time,
so a 16 MiB tool result is measured with a few kilobytes of scratch memory
instead of a full ``str`` plus a full ``bytes`` copy.  With a ``limit`` the walk
stops as soon as the count passes it and returns a number greater than
``limit`` (not the full size), so an oversized value costs no more than
``limit + 1`` bytes of counting.

Invariants: for every value :func:`zigai.json.dumps` accepts, the size counted
to the end equals ``len(dumps(value).encode("utf-8"))``; values ``dumps``
refuses raise the same named errors (:class:`MalformedJson`,
:class:`NestingTooDeep`) once the walk reaches them; a string holding a lone
surrogate raises ``UnicodeEncodeError``, as encoding its text would.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from json.encoder import encode_basestring
from typing import Any

from zigai.json._errors import MalformedJson, NestingTooDeep

__all__ = ["encoded_size", "utf8_size"]

_SLICE = 1 << 16
_SCALAR = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


class _Over(Exception):
    """The count passed the caller's limit; the walk stops."""


def utf8_size(text: str) -> int:
    """Bytes of ``text`` encoded as UTF-8, encoding at most one slice at a time."""
    if text.isascii():
        return len(text)
    return sum(len(text[i:i + _SLICE].encode("utf-8")) for i in range(0, len(text), _SLICE))


def _string_size(text: str) -> int:
    """Bytes of ``text`` as a JSON string literal (quotes and escapes included)."""
    if len(text) <= _SLICE:
        return utf8_size(encode_basestring(text))
    inner = sum(utf8_size(encode_basestring(text[i:i + _SLICE])) - 2 for i in range(0, len(text), _SLICE))
    return inner + 2


def _key_size(key: Any) -> int:
    if isinstance(key, str):
        return _string_size(key)
    if key is None or isinstance(key, (bool, int, float)):
        return len(_SCALAR.encode(key)) + 2  # written as a string: digits, true/false/null
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


class _Counter:
    def __init__(self, limit: int | None) -> None:
        self.total = 0
        self.limit = limit
        self.open: set[int] = set()

    def add(self, size: int) -> None:
        self.total += size
        if self.limit is not None and self.total > self.limit:
            raise _Over

    def value(self, value: Any) -> None:
        if isinstance(value, str):
            self.add(_string_size(value))
        elif isinstance(value, (list, tuple)):
            self._container(value, self._items)
        elif isinstance(value, Mapping):
            self._container(value, self._members)
        else:
            self.add(len(_SCALAR.encode(value)))  # numbers, booleans, null (all ASCII)

    def _container(self, value: Any, walk: Any) -> None:
        marker = id(value)
        if marker in self.open:
            raise ValueError("Circular reference detected")
        self.open.add(marker)
        self.add(2)  # the brackets or braces
        walk(value)
        self.open.discard(marker)

    def _items(self, items: Any) -> None:
        for index, item in enumerate(items):
            if index:
                self.add(1)
            self.value(item)

    def _members(self, members: Mapping[Any, Any]) -> None:
        for index, (key, item) in enumerate(members.items()):
            self.add(_key_size(key) + (2 if index else 1))  # the colon, and a comma after the first
            self.value(item)


def encoded_size(value: Any, limit: int | None = None) -> int:
    """UTF-8 bytes of ``dumps(value)``; with ``limit``, any number above it once passed.

    Raises :class:`MalformedJson` for values :func:`zigai.json.dumps` refuses and
    :class:`NestingTooDeep` beyond the interpreter's recursion limit.
    """
    counter = _Counter(limit)
    try:
        counter.value(value)
    except _Over:
        pass
    except RecursionError:
        raise NestingTooDeep("value nests too deeply to serialize") from None
    except UnicodeEncodeError:
        raise
    except (TypeError, ValueError) as exc:
        raise MalformedJson(f"not a JSON value: {exc}") from None
    return counter.total
