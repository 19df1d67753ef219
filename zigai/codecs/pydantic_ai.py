"""Lossless interchange with PydanticAI 2.31.0 "stable-v2" message-history JSON.

PydanticAI persists a conversation as the JSON written by
``pydantic_ai.messages.ModelMessagesTypeAdapter.dump_json``: an array of
``request``/``response`` messages whose parts are discriminated by
``part_kind``.  This module reads that format *without* importing PydanticAI
and without translating it into zigai's own message types: :func:`parse`
bounds the document with the history JSON profile, validates the decoded
graph against the 2.31.0 schema, and returns an :class:`Owned` holding the
graph exactly as decoded.  :func:`stringify` writes a graph back in one
canonical form.  Metadata, provider details, rich tool-return content and
extended usage are therefore carried through untouched instead of being
coerced into narrower zigai fields; ``zigai.history`` remains zigai's own,
separately versioned persistence envelope.

Invariants:

* ``stringify(parse(text))`` equals ``stringify(json.loads(text))``; for text
  already in canonical form the round trip is byte-identical;
* canonical form is ``json.dumps(value, sort_keys=True, indent=2,
  ensure_ascii=False, allow_nan=False)`` (no trailing newline);
* nothing invalid is ever returned or written: both :func:`parse` and
  :func:`stringify` validate and raise :class:`InvalidPydanticAiMessages`
  whose message and ``path`` attribute name the offending JSON location
  (``$[0].parts[1].part_kind``);
* validation rules (see ``zigai/codecs/_pydantic_ai_schema.py``): the
  discriminators ``kind`` and ``part_kind`` are required and closed; fields
  without a library default are required; present fields must have the JSON
  type the library writes (no lax coercion); unknown keys are accepted and
  preserved, as the library ignores them;
* inputs are never mutated or retained; an :class:`Owned` holds the only
  reference to the graph that :func:`parse` decoded, and using it after
  :meth:`Owned.close` raises :class:`ValueError`.

Conversion to and from zigai's own messages is separate and explicit:
:func:`to_zigai` gives :data:`~zigai.messages.Message` values and :func:`from_zigai` writes
zigai messages as the graph the library dumps.  Both are lossless or refuse: a value with no
form on the other side raises :class:`UnconvertiblePydanticAiMessages` naming its location
and kind (the mapping is documented in docs/codecs.md; private module
``zigai/codecs/_pydantic_ai_convert.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from zigai import json as zjson
from zigai._owner import Owner
from zigai.codecs._pydantic_ai_schema import SchemaViolation, check_messages
from zigai.errors import CodecError, JsonError

if TYPE_CHECKING:
    from zigai.messages import Message

__all__ = [
    "PYDANTIC_AI_VERSION",
    "SCHEMA_NAME",
    "InvalidPydanticAiMessages",
    "Owned",
    "UnconvertiblePydanticAiMessages",
    "from_zigai",
    "parse",
    "stringify",
    "to_zigai",
    "validate",
]

PYDANTIC_AI_VERSION = "2.31.0"
"""The PydanticAI release whose message schema this codec implements."""

SCHEMA_NAME = "stable-v2"
"""The name the specification gives that schema."""


class InvalidPydanticAiMessages(CodecError):
    """PydanticAI message JSON was malformed, over its limits, or broke the stable-v2 schema.

    ``path`` is the JSON location (``$`` is the document root) and ``reason`` the
    bare explanation; the message is ``"<path>: <reason>"``.
    """

    def __init__(self, message: str, *, path: str = "$", reason: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason or message


class UnconvertiblePydanticAiMessages(CodecError):
    """A valid message has a part or field with no lossless form on the other side.

    ``direction`` is ``"to_zigai"`` (``path`` is a PydanticAI JSON location such as
    ``$[3].parts[1]``) or ``"from_zigai"`` (``path`` indexes the zigai message list, such as
    ``messages[3].parts[1]``); ``kind`` is the part or content kind that has no form there
    (``retry-prompt``, ``tool-call/tool-search``, ``instruction`` ...) and ``reason`` says what
    is missing and what to do.  The message is ``"<path> (<kind>): <reason>"``.
    """

    def __init__(self, message: str, *, direction: str = "to_zigai", path: str = "$",
                 kind: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.direction = direction
        self.path = path
        self.kind = kind
        self.reason = reason or message


def _invalid(path: str, reason: str) -> InvalidPydanticAiMessages:
    return InvalidPydanticAiMessages(f"{path}: {reason}", path=path, reason=reason)


class Owned(Owner):
    """Owns one validated PydanticAI message graph until :meth:`close` (alias :meth:`deinit`).

    ``value`` is the decoded JSON exactly as read (a ``list`` of ``dict`` messages).
    It belongs to this owner: do not mutate it; copy what must outlive ``close()``.
    """

    __slots__ = ("_value",)

    def __init__(self, value: list[Any]) -> None:
        self._value: list[Any] = value
        super().__init__()

    def _use_after_close(self) -> Exception:
        return ValueError("codecs.pydantic_ai.Owned used after close()")

    def _release(self) -> None:
        self._value = []

    @property
    def value(self) -> list[Any]:
        """The owned message list; raises :class:`ValueError` after close."""
        self._check()
        return self._value

    def __len__(self) -> int:
        return len(self.value)

    def __repr__(self) -> str:
        if self._closed:
            return "<codecs.pydantic_ai.Owned closed>"
        return f"<codecs.pydantic_ai.Owned messages={len(self._value)}>"


def validate(value: Any) -> None:
    """Raise :class:`InvalidPydanticAiMessages` unless ``value`` is a valid message list graph."""
    try:
        check_messages(value)
    except SchemaViolation as violation:
        raise _invalid(violation.path, violation.reason) from None


def parse(data: str | bytes) -> Owned:
    """Decode ``data`` within the history JSON limits, validate it, and return its owner.

    Malformed JSON, a limit violation (document, value size, depth, items) and a
    schema violation all raise :class:`InvalidPydanticAiMessages`.
    """
    if not isinstance(data, (str, bytes)):
        raise TypeError(f"parse() takes str or bytes, not {type(data).__name__}")
    try:
        value = zjson.parse(data, zjson.defaults.history)
    except JsonError as exc:
        raise _invalid("$", f"invalid JSON document: {exc}") from exc
    validate(value)
    return Owned(value)


def stringify(value: Owned | list[Any]) -> str:
    """Validate a message graph (or an :class:`Owned`) and return its canonical JSON text."""
    graph = value.value if isinstance(value, Owned) else value
    validate(graph)
    try:
        return json.dumps(graph, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:  # a non-JSON value hidden in a free-form field
        raise _invalid("$", f"value is not representable as JSON: {exc}") from None


def to_zigai(value: str | bytes | Owned | list[Any]) -> list[Message]:
    """zigai messages of a PydanticAI history: JSON text (parsed within the history limits),
    an :class:`Owned`, or an already decoded graph (validated first).

    Raises :class:`InvalidPydanticAiMessages` for input that is not stable-v2 JSON and
    :class:`UnconvertiblePydanticAiMessages` for the first part or field zigai cannot hold.
    """
    from zigai.codecs import _pydantic_ai_convert as convert  # lazy: keeps parse() import-light

    if isinstance(value, (str, bytes)):
        graph = parse(value).value
    elif isinstance(value, Owned):
        graph = value.value
    else:
        validate(value)
        graph = value
    try:
        return convert.messages_to_zigai(graph)
    except convert.NoForm as missing:
        raise _unconvertible("to_zigai", missing) from None


def from_zigai(messages: Iterable[Message]) -> list[Any]:
    """The PydanticAI stable-v2 graph of zigai messages, as the library would dump it.

    The result is a fresh ``list`` of ``dict`` owned by the caller, already validated;
    :func:`stringify` writes it, and ``ModelMessagesTypeAdapter.validate_python`` (or
    ``validate_json`` of the text) reads it.  Raises :class:`UnconvertiblePydanticAiMessages`
    for the first zigai part or field with no PydanticAI form.
    """
    from zigai.codecs import _pydantic_ai_convert as convert

    try:
        graph = convert.messages_from_zigai(messages)
    except convert.NoForm as missing:
        raise _unconvertible("from_zigai", missing) from None
    try:
        validate(graph)
    except InvalidPydanticAiMessages as invalid:  # e.g. an UploadedFile provider it does not know
        raise UnconvertiblePydanticAiMessages(
            f"{invalid.path}: {invalid.reason}", direction="from_zigai", path=invalid.path,
            kind="value", reason=invalid.reason) from None
    return graph


def _unconvertible(direction: str, missing: Any) -> UnconvertiblePydanticAiMessages:
    return UnconvertiblePydanticAiMessages(
        f"{missing.path} ({missing.kind}): {missing.reason}", direction=direction,
        path=missing.path, kind=missing.kind, reason=missing.reason)
