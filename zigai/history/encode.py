"""``stringify``: messages to the version-2 ZigAI history envelope.

Shape: ``{"version":2,"messages":[...]}``.  Every message object carries its
``kind`` (``"request"``/``"response"``) and every part its ``part_kind``; user
content items and media sources carry ``kind``.  *Every* dataclass field is
written, ``null`` included, so the document is self-describing.  Encodings:

* ``bytes`` → standard base64 text;
* ``datetime`` → ISO-8601 UTC with microseconds and a ``Z`` suffix;
* enums → their lowercase value; ``ProviderDetails``/``Metadata``/usage details
  → JSON objects; tool-return content → its JSON value.

The output is deterministic: object keys are sorted inside each message, so equal
message tuples always produce byte-identical text.  Before returning, the text is
checked against the history JSON profile so that anything ``stringify`` produces
can be parsed back (:class:`HistoryTooLarge` otherwise).
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
import json.encoder
import operator
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from zigai.history.errors import HistoryTooLarge, InvalidHistory
from zigai.messages import Message, Metadata, ProviderDetails, RequestMessage, ResponseMessage
from zigai.messages.json_value import FrozenDict
from zigai.usage import UsageDetails

__all__ = ["HISTORY_VERSION", "encode_message", "stringify"]

HISTORY_VERSION = 2


def format_timestamp(value: datetime) -> str:
    if value.tzinfo is not UTC:  # message timestamps are already normalized to UTC
        value = value.astimezone(UTC)
    return value.isoformat(timespec="microseconds").replace("+00:00", "Z")


_PLAIN = (type(None), bool, int, float, str)
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _encode(value: Any) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        return value
    names = _FIELD_NAMES.get(kind)
    if names is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _FIELD_NAMES[kind] = tuple(f.name for f in dataclasses.fields(value))
    if names is not None:
        return {name: _encode(getattr(value, name)) for name in names}
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime):
        return format_timestamp(value)
    if isinstance(value, Mapping):  # ProviderDetails, Metadata, FrozenDict, UsageDetails
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_encode(item) for item in value]
    raise InvalidHistory(f"cannot serialize a {type(value).__name__}")


def encode_message(message: Message) -> dict[str, Any]:
    """The JSON-ready dict of one message (``kind`` plus every field)."""
    if not isinstance(message, (RequestMessage, ResponseMessage)):
        raise InvalidHistory(
            f"history holds RequestMessage or ResponseMessage values, got {type(message).__name__}"
        )
    encoded: dict[str, Any] = _encode(message)
    return encoded


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False)


# _MESSAGE_ENCODER: the C JSON encoder walking a value itself, calling _as_json only for
# values it does not know (dataclasses, enums, bytes, datetimes, frozen mappings).  Each
# call converts one level; the encoder recurses.  Its text is byte-identical to
# _dumps(encode_message(m)); stringify uses it for frozen JSON values, and its emitters
# below are tested against it for every other value.
_CONVERTERS: dict[type, Callable[[Any], Any]] = {}


def _as_json(value: Any) -> Any:
    kind = type(value)
    convert = _CONVERTERS.get(kind)
    if convert is None:
        convert = _CONVERTERS[kind] = _converter_for(value)
    return convert(value)


def _converter_for(value: Any) -> Callable[[Any], Any]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _fields_getter(tuple(f.name for f in dataclasses.fields(value)))
    if isinstance(value, enum.Enum):
        return {member: member.value for member in type(value)}.__getitem__
    if type(value) in _INNER_DICT:  # the frozen mappings' own str-keyed dicts, read in place
        return operator.attrgetter(_INNER_DICT[type(value)])
    if isinstance(value, bytes):
        return _base64_text
    if isinstance(value, datetime):
        return format_timestamp
    if isinstance(value, Mapping):  # e.g. a subclass of ProviderDetails: copy it out
        return _plain_mapping
    raise InvalidHistory(f"cannot serialize a {type(value).__name__}")


# Frozen mappings whose str-keyed plain dict the encoder may read directly (never mutates it).
_INNER_DICT: dict[type, str] = {
    FrozenDict: "_data", UsageDetails: "_items", ProviderDetails: "_root._data", Metadata: "_root._data",
}


def _base64_text(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _plain_mapping(value: Mapping[Any, Any]) -> dict[str, Any]:
    return {str(k): v for k, v in value.items()}


def _attributes(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """``value -> (value.name, ...)`` for ``names`` in order (one C getter from two names on)."""
    if len(names) >= 2:
        return operator.attrgetter(*names)
    return lambda value: tuple([getattr(value, name) for name in names])


def _fields_getter(names: tuple[str, ...]) -> Callable[[Any], dict[str, Any]]:
    """``value -> {name: value.name, ...}`` in field order."""
    get = _attributes(names)
    return lambda value: dict(zip(names, get(value), strict=True))


_MESSAGE_ENCODER = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False,
    check_circular=False,  # frozen message values cannot form cycles; depth is bounded below
    default=_as_json,
)


# JSONEncoder.encode builds a fresh C encoder (and a float-formatting closure) on every
# call; stringify calls it once per JSON value, so it keeps the C encoder that encode() would
# build for _MESSAGE_ENCODER's exact settings.  Same object, same arguments: same text.
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_ENCODE_MESSAGE_CHUNKS: Callable[[Any, int], Iterable[str]] | None = (
    None if _c_make_encoder is None
    else _c_make_encoder(
        None, _MESSAGE_ENCODER.default, json.encoder.encode_basestring, None,
        _MESSAGE_ENCODER.key_separator, _MESSAGE_ENCODER.item_separator,
        _MESSAGE_ENCODER.sort_keys, _MESSAGE_ENCODER.skipkeys, _MESSAGE_ENCODER.allow_nan,
    )
)


def _encode_value_text(value: Any) -> str:
    """The C encoder's text for ``value`` (used for plain dicts and frozen JSON values)."""
    if _ENCODE_MESSAGE_CHUNKS is None:  # pragma: no cover - CPython always has the C encoder
        return _MESSAGE_ENCODER.encode(value)
    return "".join(_ENCODE_MESSAGE_CHUNKS(value, 0))


# stringify's text emitters: one function per type writes that value's JSON text directly,
# byte for byte what _MESSAGE_ENCODER writes (a test compares them for every kind).  A
# dataclass gets a generated emitter whose keys are pre-sorted literals and whose fields are
# read by attribute, so no per-message dict is built, sorted or walked by the C encoder;
# frozen JSON values (tool-return content, provider details ...) are still written by the
# C encoder, which sorts their keys.
_encode_str: Callable[[str], str] = json.encoder.encode_basestring  # the C function on CPython
_EMITTERS: dict[type, Callable[[Any], str]] = {}


def _emit(value: Any) -> str:
    emit = _EMITTERS.get(type(value))
    if emit is None:
        emit = _EMITTERS[type(value)] = _emitter_for(value)
    return emit(value)


def _emit_float(value: float) -> str:
    if value != value or value in (_INFINITY, -_INFINITY):
        raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
    return float.__repr__(value)


_INFINITY = float("inf")


def _emit_array(value: Any) -> str:
    return "[" + ",".join(map(_emit, value)) + "]"


# The last timestamp written and its text, as one tuple so that threads never see a torn
# pair: a request and the parts it carries usually share one timestamp.
_LAST_TIMESTAMP: tuple[datetime | None, str] = (None, "")


def _emit_timestamp(value: datetime) -> str:
    global _LAST_TIMESTAMP
    last, text = _LAST_TIMESTAMP
    if value == last:  # equal instants have equal UTC text
        return text
    if value.tzinfo is UTC:  # format_timestamp's text, without its slower keyword form
        text = value.isoformat()[:-6]  # drop "+00:00"; microseconds appear when non-zero
        text = f'"{text}Z"' if value.microsecond else f'"{text}.000000Z"'
    else:
        text = '"' + format_timestamp(value) + '"'  # ISO-8601 text never needs a JSON escape
    _LAST_TIMESTAMP = (value, text)
    return text


def _frozen_emitter(inner: Callable[[Any], dict[str, Any]]) -> Callable[[Any], str]:
    """The emitter of a frozen mapping type whose plain str-keyed dict ``inner`` reads."""
    if _ENCODE_MESSAGE_CHUNKS is None:  # pragma: no cover - CPython always has the C encoder
        return lambda mapping: _MESSAGE_ENCODER.encode(inner(mapping))
    chunks = _ENCODE_MESSAGE_CHUNKS

    def emit(mapping: Any) -> str:
        data = inner(mapping)
        return "".join(chunks(data, 0)) if data else "{}"
    return emit


def _emitter_for(value: Any) -> Callable[[Any], str]:
    # The same precedence as the C encoder: str, constants, int, float, list/tuple, dict,
    # and only then what the default hook (_as_json) converts.
    if isinstance(value, enum.Enum):
        if isinstance(value, (str, int, float)):  # the C encoder writes these as their base type
            return _emitter_for(value._value_)
        texts = {member._name_: _emit(member._value_) for member in type(value)}
        return lambda member: texts[member._name_]  # by name: an Enum's own hash is Python code
    if isinstance(value, str):
        return _encode_str
    if value is None:
        return lambda _: "null"
    if isinstance(value, bool):
        return {True: "true", False: "false"}.__getitem__
    if isinstance(value, int):
        return int.__repr__
    if isinstance(value, float):
        return _emit_float
    if isinstance(value, (list, tuple)):
        return _emit_array
    if isinstance(value, dict):
        return _encode_value_text
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dataclass_emitter(type(value))
    if type(value) in _INNER_DICT:
        return _frozen_emitter(operator.attrgetter(_INNER_DICT[type(value)]))
    if isinstance(value, datetime):
        return _emit_timestamp
    convert = _converter_for(value)  # bytes, other mappings: convert, then emit
    return lambda item: _emit(convert(item))


def _dataclass_emitter(cls: type) -> Callable[[Any], str]:
    """``value -> JSON text`` for one dataclass: its fields in sorted key order, read through
    one attribute getter and written into one ``%`` template of the keys (field names are
    identifiers: no JSON escape, no ``%``); strings, nulls, integers and timestamps inline,
    anything else by ``_emit``."""
    names = tuple(sorted(field.name for field in dataclasses.fields(cls)))
    template = "{" + ",".join(f'"{name}":%s' for name in names) + "}"
    get = _attributes(names)
    encode_str, emit_any, int_text, emit_timestamp = _encode_str, _emit, int.__repr__, _emit_timestamp

    def emit(value: Any) -> str:
        return template % tuple([
            encode_str(item) if (kind := type(item)) is str
            else "null" if item is None
            else int_text(item) if kind is int
            else emit_timestamp(item) if kind is datetime
            else emit_any(item)
            for item in get(value)
        ])
    return emit


def _encode_message_text(message: Message) -> str:
    return _emit(message)


def _dumps_message(message: Message) -> str:
    if not isinstance(message, (RequestMessage, ResponseMessage)):
        raise InvalidHistory(
            f"history holds RequestMessage or ResponseMessage values, got {type(message).__name__}"
        )
    try:
        return _encode_message_text(message)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidHistory(f"history is not representable as JSON: {exc!r}") from exc


_MESSAGE_TYPES = (RequestMessage, ResponseMessage)


def stringify(messages: Iterable[Message]) -> str:
    """Serialize messages as a deterministic version-2 history document."""
    emit = _emit
    try:
        texts = [emit(message) if type(message) in _MESSAGE_TYPES else _dumps_message(message)
                 for message in messages]
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidHistory(f"history is not representable as JSON: {exc!r}") from exc
    head = f'{{"version":{HISTORY_VERSION},"messages":['
    if texts:  # one join copies the (large) document once: glue the ends onto its pieces
        texts[0] = head + texts[0]
        texts[-1] += "]}"
        document = ",".join(texts)
    else:
        document = head + "]}"
    _check_limits(document)
    return document


def _check_limits(document: str) -> None:
    from zigai import json as zjson
    from zigai.json import JsonLimitExceeded, MalformedJson

    try:
        zjson.check_limits(document, zjson.defaults.history)
    except JsonLimitExceeded as exc:
        raise HistoryTooLarge(f"serialized history exceeds the history JSON limits: {exc}") from exc
    except MalformedJson as exc:  # e.g. a lone surrogate in a str: not representable as UTF-8
        raise InvalidHistory(f"history text is not representable as JSON: {exc}") from exc
