"""``parse``: a history document to an :class:`Owned` tuple of messages.

``parse`` first applies the history JSON profile (``zigai.json.defaults.history``:
16 MiB document, 1 MiB per value, depth 64, 65,536 items per collection) before
any value is built, then dispatches on ``version``:

* ``2`` — the envelope ``stringify`` writes (``zigai.history.decode``);
* ``1`` — role-based histories, migrated (``zigai.history.v1``);
* anything else — :class:`UnsupportedHistoryVersion`.

Failure mapping: limit breaches → :class:`HistoryTooLarge`; malformed JSON and
every structural problem → :class:`InvalidHistory` (with a JSON ``path``); the
underlying ``zigai.json`` error is chained as ``__cause__``.  No other exception
type escapes for any input ``str``/``bytes``.

:class:`Owned` holds the parsed messages; it is a context manager and, once
closed, every access raises :class:`HistoryClosed`.

Speed: decoding a large document allocates tens of thousands of acyclic objects (the
JSON tree, then the messages) that all stay alive until the end, which makes the cyclic
garbage collector run full collections over them again and again.  ``parse`` therefore
pauses the collector while it decodes (when it was enabled) and re-enables it afterwards,
also on error; reference counting still frees everything as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any, overload

from zigai._owner import Owner
from zigai.errors import MessageError
from zigai.history.decode import decode_message
from zigai.history.errors import (
    HistoryClosed,
    HistoryTooLarge,
    InvalidHistory,
    UnsupportedHistoryVersion,
)
from zigai.history.v1 import migrate_v1
from zigai.messages import Message

__all__ = ["Owned", "parse"]

_TOP_LEVEL_KEYS = {"version", "messages"}


class Owned(Owner):
    """Owns parsed history messages until :meth:`close` (alias :meth:`deinit`)."""

    __slots__ = ("_messages", "_version")

    def __init__(self, messages: tuple[Message, ...], *, source_version: int = 2) -> None:
        self._messages: tuple[Message, ...] = tuple(messages)
        self._version = source_version
        super().__init__()

    def _use_after_close(self) -> Exception:
        return HistoryClosed("history.Owned was used after close()")

    def _release(self) -> None:
        self._messages = ()

    @property
    def messages(self) -> tuple[Message, ...]:
        """The parsed (and, for version 1, migrated) messages."""
        self._check()
        return self._messages

    @property
    def source_version(self) -> int:
        """The version of the document this history was parsed from (1 or 2)."""
        self._check()
        return self._version

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        return self.messages[index]

    def __repr__(self) -> str:
        if self._closed:
            return "history.Owned(<closed>)"
        return f"history.Owned({len(self._messages)} messages, v{self._version})"


def _load_json(data: str | bytes) -> Any:
    from zigai import json as zjson
    from zigai.json import JsonLimitExceeded, MalformedJson

    if not isinstance(data, (str, bytes, bytearray, memoryview)):
        raise InvalidHistory(f"history must be str or bytes, got {type(data).__name__}")
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    try:
        return zjson.parse(data, zjson.defaults.history)
    except JsonLimitExceeded as exc:
        raise HistoryTooLarge(f"history exceeds the history JSON limits: {exc}") from exc
    except MalformedJson as exc:
        raise InvalidHistory(f"history is not well-formed JSON: {exc}") from exc


def parse(data: str | bytes) -> Owned:
    """Parse a version-2 (or migrate a version-1) history document into an :class:`Owned`."""
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        return _parse(data)
    finally:
        if collecting:
            gc.enable()


def _parse(data: str | bytes) -> Owned:
    document = _load_json(data)
    if not isinstance(document, dict):
        raise InvalidHistory("a history document must be a JSON object", path="$")
    if "version" not in document:
        raise InvalidHistory("missing required field", path="version")
    version = document["version"]
    if type(version) is not int or version not in (1, 2):
        raise UnsupportedHistoryVersion(
            f"unsupported history version {version!r} (this parser reads 1 and 2)",
            version=version,
        )
    for key in document:
        if key not in _TOP_LEVEL_KEYS:
            raise InvalidHistory("unknown top-level field", path=key)
    if "messages" not in document:
        raise InvalidHistory("missing required field", path="messages")
    items = document["messages"]
    if not isinstance(items, list):
        raise InvalidHistory("expected an array", path="messages")
    try:
        if version == 1:
            messages = migrate_v1(items)
        else:
            messages = tuple(
                decode_message(item, f"messages[{index}]") for index, item in enumerate(items)
            )
    except (MessageError, RecursionError) as exc:  # defensive: constructors reject late
        raise InvalidHistory(str(exc) or type(exc).__name__) from exc
    return Owned(messages, source_version=version)
