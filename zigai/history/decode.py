"""Decoding version-2 history values into message objects, with JSON-path errors.

Every decoder receives a plain JSON value (from ``zigai.json.parse``) and the JSON
path it came from.  Any shape problem — a missing or unknown field, a wrong JSON
type, bad base64, a naive or malformed timestamp, an unknown ``kind`` /
``part_kind``, or a value the message constructors reject — raises
:class:`InvalidHistory` whose ``path`` names the offending location, e.g.
``messages[3].parts[0].tool_call_id``.  Nothing else escapes.

Speed: every decoder has a *fast* twin (``_FAST``) that builds the same value
without computing JSON paths and raises :class:`_Mismatch` (or lets a
constructor error through) at the first doubt.  :func:`decode_message` tries
the fast twin first and, on any failure, re-decodes the message with the
path-tracking decoders, which then raise the exact error.  Both read one field
table per class (``SPECS``: field -> JSON decoder, plus the dataclass fields),
and both leave every message rule to the class: a record is built field by
field and the class's own ``__post_init__`` validates and normalizes it, as the
constructor would.  No code is generated.

Ownership: :func:`decode_message` takes over the JSON value it is given.  The dicts of
provider details and metadata become the storage of the frozen values built from them
(:func:`zigai.messages.json_value.adopt_parsed_json`), so the caller passes a tree it has
just parsed and does not use afterwards; tool-return content is frozen by its part.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Callable
from datetime import datetime
from typing import Any

from zigai import messages as m
from zigai.errors import MessageError
from zigai.history.errors import InvalidHistory
from zigai.json import type_name
from zigai.messages.json_value import NotAdoptable, adopt_parsed_json
from zigai.usage import RequestUsage

__all__ = ["decode_message"]

Decoder = Callable[[Any, str], Any]
FastDecoder = Callable[[Any], Any]


class _Mismatch(Exception):
    """Raised by a fast decoder: let the checked decoder find and name the problem."""


_MISSING = object()


_FAST: dict[Decoder, FastDecoder] = {}


def _fast_twin(fast: FastDecoder) -> Callable[[Decoder], Decoder]:
    def register(checked: Decoder) -> Decoder:
        _FAST[checked] = fast
        return checked
    return register


def _fast_string(value: Any) -> str:
    if type(value) is not str:
        raise _Mismatch
    return value


def _fast_boolean(value: Any) -> bool:
    if type(value) is not bool:
        raise _Mismatch
    return value


def _fast_integer(value: Any) -> int:
    if type(value) is not int:
        raise _Mismatch
    return value


def _fast_identity(value: Any) -> Any:
    return value


def _fast_obj(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise _Mismatch
    return value


def _fail(message: str, path: str) -> InvalidHistory:
    return InvalidHistory(message, path=path)


@_fast_twin(_fast_string)
def string(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _fail(f"expected a string, got {type_name(value)}", path)
    return value


# fast optional twin -> the fast twin it wraps, so generated record code can inline both
_OPTIONAL_OF: dict[FastDecoder, FastDecoder] = {}


def optional(decoder: Decoder) -> Decoder:
    inner = _FAST[decoder]

    def fast(value: Any) -> Any:
        return None if value is None else inner(value)

    _OPTIONAL_OF[fast] = inner

    @_fast_twin(fast)
    def decode(value: Any, path: str) -> Any:
        return None if value is None else decoder(value, path)
    return decode


@_fast_twin(_fast_boolean)
def boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(f"expected a boolean, got {type_name(value)}", path)
    return value


@_fast_twin(_fast_integer)
def integer(value: Any, path: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _fail(f"expected an integer, got {type_name(value)}", path)
    return value


def _fast_json_value(value: Any) -> Any:
    """Freeze the handed-over tree in place (no copy); the part then keeps it as it is."""
    try:
        return adopt_parsed_json(value)
    except NotAdoptable:
        return value  # the part's own freeze accepts a half-adopted tree or names the problem


@_fast_twin(_fast_json_value)
def json_value(value: Any, path: str) -> Any:
    return value  # already JSON; the part freezes it


@_fast_twin(_fast_obj)
def obj(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(f"expected an object, got {type_name(value)}", path)
    return value


# fast twin of a tagged() decoder -> (tag field, tag -> class), so that an array of tagged
# values dispatches each item straight to its class's fast record
_TAGGED: dict[FastDecoder, tuple[str, dict[str, type]]] = {}


def array_of(decoder: Decoder) -> Decoder:
    inner = _FAST[decoder]
    tagged_items = _TAGGED.get(inner)

    def fast(value: Any) -> tuple[Any, ...]:
        if type(value) is not list:
            raise _Mismatch
        return tuple(map(inner, value))

    if tagged_items is not None:
        tag_field, by_tag = tagged_items
        records: dict[str, FastDecoder] = {}  # every tag's fast record, compiled on first use

        def fast(value: Any) -> tuple[Any, ...]:
            # An item that is not an object, or lacks a known tag, fails the subscript
            # (TypeError / KeyError): decode_message then takes the checked path.
            if type(value) is not list:
                raise _Mismatch
            if not records:
                records.update({tag: _fast_record(cls, tag_field) for tag, cls in by_tag.items()})
            return tuple([records[item[tag_field]](item) for item in value])

    @_fast_twin(fast)
    def decode(value: Any, path: str) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise _fail(f"expected an array, got {type_name(value)}", path)
        return tuple(decoder(item, f"{path}[{index}]") for index, item in enumerate(value))
    return decode


def _fast_b64bytes(value: Any) -> bytes:
    return base64.b64decode(_fast_string(value).encode("ascii"), validate=True)


@_fast_twin(_fast_b64bytes)
def b64bytes(value: Any, path: str) -> bytes:
    text = string(value, path)
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise _fail("expected standard base64 text", path) from None


# The last timestamp text read and its value (one tuple: threads never see a torn pair);
# a request and the parts it carries usually share one timestamp.
_LAST_TIMESTAMP: tuple[str, datetime | None] = ("", None)


def _fast_timestamp(value: Any) -> datetime:
    global _LAST_TIMESTAMP
    if type(value) is not str:
        raise _Mismatch
    text, stamp = _LAST_TIMESTAMP
    if value == text and stamp is not None:
        return stamp
    stamp = datetime.fromisoformat(value)
    if stamp.tzinfo is None:
        raise _Mismatch
    _LAST_TIMESTAMP = (value, stamp)
    return stamp


@_fast_twin(_fast_timestamp)
def timestamp(value: Any, path: str) -> datetime:
    text = string(value, path)
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        raise _fail(f"expected an ISO-8601 timestamp, got {text[:40]!r}", path) from None
    if stamp.tzinfo is None:
        raise _fail("timestamp must carry a UTC offset (e.g. 'Z')", path)
    return stamp


def _json_object_of(kind: type[m.ProviderDetails] | type[m.Metadata]) -> Decoder:
    def fast(value: Any) -> Any:
        try:
            return kind._adopt_parsed(value)
        except NotAdoptable:  # not a fresh JSON tree (or not an object): copy it as given
            return kind.from_value(_fast_obj(value))

    @_fast_twin(fast)
    def decode(value: Any, path: str) -> Any:
        try:
            return kind.from_value(obj(value, path))
        except MessageError as exc:  # e.g. a number beyond the double range (1e999)
            raise _fail(str(exc), path) from exc
    return decode


provider_details = _json_object_of(m.ProviderDetails)
metadata = _json_object_of(m.Metadata)


def _fast_usage_details(value: Any) -> dict[str, int]:
    for item in _fast_obj(value).values():
        _fast_integer(item)
    return value


@_fast_twin(_fast_usage_details)
def usage_details(value: Any, path: str) -> dict[str, int]:
    return {key: integer(item, f"{path}.{key}") for key, item in obj(value, path).items()}


# class -> (discriminator field, {field: decoder}).  Every dataclass field but the
# discriminator is listed; fields with defaults may be absent from the document.
SPECS: dict[type, dict[str, Decoder]] = {}


_FIELD_TABLES: dict[type, tuple[tuple[str, bool], ...]] = {}


def _field_table(cls: type) -> tuple[tuple[str, bool], ...]:
    """(field name, required) pairs of a dataclass, computed once per class."""
    table = _FIELD_TABLES.get(cls)
    if table is None:
        table = tuple(
            (f.name, f.default is dataclasses.MISSING
             and f.default_factory is dataclasses.MISSING)
            for f in dataclasses.fields(cls)
        )
        _FIELD_TABLES[cls] = table
    return table


def _record(value: Any, path: str, cls: type, tag_field: str | None) -> Any:
    data = obj(value, path)
    spec = SPECS[cls]
    kwargs: dict[str, Any] = {}
    for key in data:
        if key != tag_field and key not in spec:
            raise _fail(f"unknown field for {cls.__name__}", f"{path}.{key}")
    for name, required in _field_table(cls):
        if name == tag_field:
            continue
        if name in data:
            kwargs[name] = spec[name](data[name], f"{path}.{name}")
        elif required:
            raise _fail(f"missing required field of {cls.__name__}", f"{path}.{name}")
    try:
        return cls(**kwargs)
    except (MessageError, TypeError, ValueError) as exc:
        raise _fail(str(exc), path) from exc


_FAST_RECORDS: dict[tuple[type, str | None], FastDecoder] = {}


_EXACT_TYPES: dict[FastDecoder, type] = {_fast_string: str, _fast_integer: int, _fast_boolean: bool}


def _fast_record(cls: type, tag_field: str | None) -> FastDecoder:
    """The fast twin of ``_record`` for ``cls``, built on first use (SPECS fill late).

    It reads the same field table as the checked decoder (``SPECS[cls]`` and the dataclass
    fields) and builds the instance the way the dataclass ``__init__`` does -- every field
    set (absent ones to their default) -- then calls the class's own ``__post_init__``, the
    one place each message rule is written.  It checks nothing a class checks; it only
    refuses (``_Mismatch``) what is not the plain JSON shape of a field: a wrong exact type
    where the table says string/integer/boolean, a missing required field, an unknown key.
    """
    compiled = _FAST_RECORDS.get((cls, tag_field))
    if compiled is not None:
        return compiled
    spec = SPECS[cls]
    plan = []  # (name, set slot, required, default, default factory, optional, exact type, convert)
    tags = []  # (set slot, default) of the discriminator, never read from the document
    for field, (name, required) in zip(dataclasses.fields(cls), _field_table(cls), strict=True):
        assert field.init, (cls, name)  # every message field is an __init__ parameter
        setter = getattr(cls, name).__set__  # the slot, past the frozen guard
        factory = None if field.default_factory is dataclasses.MISSING else field.default_factory
        if name == tag_field:
            tags.append((setter, field.default))
            continue
        convert = _FAST[spec[name]]
        optional = convert in _OPTIONAL_OF
        if optional:
            convert = _OPTIONAL_OF[convert]
        exact = _EXACT_TYPES.get(convert)
        plan.append((name, setter, required, field.default, factory, optional, exact,
                     None if exact is not None or convert is _fast_identity else convert))
    steps, discriminators = tuple(plan), tuple(tags)
    assert hasattr(cls, "__post_init__"), cls  # every message value validates itself there
    post_init, new = cls.__post_init__, object.__new__

    def decode(data: Any) -> Any:
        if type(data) is not dict:
            raise _Mismatch
        made: Any = new(cls)
        present = 0
        for name, setter, required, default, factory, optional, exact, convert in steps:
            value = data.get(name, _MISSING)
            if value is _MISSING:
                if required:
                    raise _Mismatch
                value = default if factory is None else factory()
            else:
                present += 1
                if value is None and optional:
                    pass
                elif exact is not None:
                    if type(value) is not exact:
                        raise _Mismatch
                elif convert is not None:
                    value = convert(value)
            setter(made, value)
        for setter, default in discriminators:
            setter(made, default)
        if present + (tag_field is not None and tag_field in data) != len(data):
            raise _Mismatch  # an unknown field
        post_init(made)
        return made

    _FAST_RECORDS[(cls, tag_field)] = decode
    return decode


def record(cls: type, tag_field: str | None = None) -> Decoder:
    expected = _tag_of(cls, tag_field) if tag_field else None

    def fast(value: Any) -> Any:
        if tag_field and tag_field in _fast_obj(value) and value[tag_field] != expected:
            raise _Mismatch
        return _fast_record(cls, tag_field)(value)

    @_fast_twin(fast)
    def decode(value: Any, path: str) -> Any:
        data = obj(value, path)
        if tag_field and tag_field in data and data[tag_field] != expected:
            raise _fail(f"expected {tag_field} {expected!r}", f"{path}.{tag_field}")
        return _record(data, path, cls, tag_field)
    return decode


def tagged(tag_field: str, by_tag: dict[str, type], what: str) -> Decoder:
    compiled: dict[str, FastDecoder] = {}  # tag -> its class's fast record, filled on first use

    def fast(value: Any) -> Any:
        if type(value) is not dict:
            raise _Mismatch
        tag = value.get(tag_field)
        if type(tag) is not str:
            raise _Mismatch
        decode = compiled.get(tag)
        if decode is None:
            cls = by_tag.get(tag)
            if cls is None:
                raise _Mismatch
            decode = compiled[tag] = _fast_record(cls, tag_field)
        return decode(value)

    _TAGGED[fast] = (tag_field, by_tag)

    @_fast_twin(fast)
    def decode(value: Any, path: str) -> Any:
        data = obj(value, path)
        if tag_field not in data:
            raise _fail(f"missing {tag_field!r} discriminator", f"{path}.{tag_field}")
        tag = data[tag_field]
        cls = by_tag.get(tag) if isinstance(tag, str) else None
        if cls is None:
            raise _fail(f"unknown {what} {tag!r}", f"{path}.{tag_field}")
        return _record(data, path, cls, tag_field)
    return decode


def _tag_of(cls: type, tag_field: str) -> str:
    for field in dataclasses.fields(cls):
        if field.name == tag_field:
            return str(field.default)
    raise AssertionError(cls)


_SOURCE_TYPES = (m.BytesSource, m.UrlSource, m.ProviderFileSource, m.UploadedFile)
source = tagged("kind", {_tag_of(c, "kind"): c for c in _SOURCE_TYPES}, "media source kind")
uploaded_file = record(m.UploadedFile, "kind")
provider_part = record(m.ProviderPart)
audio = record(m.AudioContent, "kind")
user_content = tagged(
    "kind", {_tag_of(c, "kind"): c for c in m.USER_CONTENT_TYPES}, "user content kind"
)
_user_content_array = array_of(user_content)


def _fast_prompt_content(value: Any) -> Any:
    if type(value) is str:
        return value
    return _FAST[_user_content_array](value)


@_fast_twin(_fast_prompt_content)
def prompt_content(value: Any, path: str) -> Any:
    if isinstance(value, str):
        return value
    return _user_content_array(value, path)


@_fast_twin(lambda value: _fast_record(RequestUsage, None)(value))
def usage(value: Any, path: str) -> RequestUsage:
    result: RequestUsage = _record(value, path, RequestUsage, None)
    return result


opt_str = optional(string)
opt_stamp = optional(timestamp)
str_tuple = array_of(string)

SPECS.update({
    m.BytesSource: {"data": b64bytes, "media_type": string},
    m.UrlSource: {"url": string, "media_type": opt_str},
    m.ProviderFileSource: {"file_id": string, "media_type": opt_str},
    m.UploadedFile: {"provider_name": string, "file_id": string, "media_type": opt_str},
    m.ProviderPart: {"provider_name": string, "id": opt_str,
                     "details": optional(provider_details)},
    m.TextContent: {"text": string},
    m.TaggedText: {"tag": string, "text": string},
    m.ImageContent: {"source": source, "detail": opt_str},
    m.AudioContent: {"source": source},
    m.VideoContent: {"source": source},
    m.DocumentContent: {"source": source, "title": opt_str},
    m.BinaryContent: {"data": b64bytes, "media_type": string},
    m.UploadedFileContent: {"file": uploaded_file},
    m.CachePoint: {"ttl": opt_str},
    RequestUsage: {name: integer for name in (
        "input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens",
        "input_audio_tokens", "output_audio_tokens", "reasoning_tokens")}
    | {"details": usage_details},
    # request parts
    m.SystemPromptPart: {"content": string, "timestamp": opt_stamp},
    m.UserPromptPart: {"content": prompt_content, "timestamp": opt_stamp},
    m.RetryPromptPart: {"content": string, "tool_name": opt_str, "tool_call_id": opt_str,
                        "timestamp": opt_stamp},
    m.InstructionPart: {"content": string, "dynamic": boolean, "timestamp": opt_stamp},
    m.SpeechPromptPart: {"audio": audio, "transcript": opt_str, "timestamp": opt_stamp},
    m.ToolAvailabilityPart: {"added": str_tuple, "removed": str_tuple, "tool_call_id": opt_str,
                             "timestamp": opt_stamp},
    m.ToolReturnPart: {"tool_name": string, "tool_call_id": string, "content": json_value,
                       "outcome": string, "timestamp": opt_stamp,
                       "metadata": optional(metadata)},
    m.CapabilityLoadReturnPart: {"tool_call_id": string, "capability_id": string,
                                 "outcome": string, "loaded": str_tuple,
                                 "instructions": str_tuple, "content": opt_str,
                                 "tool_name": string, "timestamp": opt_stamp},
    # response parts
    m.TextPart: {"content": string, "id": opt_str, "provider": optional(provider_part)},
    m.ThinkingPart: {"content": string, "id": opt_str, "signature": opt_str,
                     "provider": optional(provider_part)},
    m.CompactionPart: {"content": opt_str, "id": opt_str, "provider": optional(provider_part)},
    m.FilePart: {"source": source, "id": opt_str, "provider": optional(provider_part)},
    m.SpeechPart: {"audio": optional(audio), "transcript": opt_str, "id": opt_str,
                   "provider": optional(provider_part)},
    m.ToolCallPart: {"tool_name": string, "args": string, "tool_call_id": string,
                     "id": opt_str, "provider": optional(provider_part)},
    m.NativeToolCallPart: {"tool_name": string, "tool_call_id": string,
                           "provider": provider_part, "args": string},
    m.NativeToolReturnPart: {"tool_name": string, "tool_call_id": string,
                             "provider": provider_part, "content": json_value,
                             "outcome": string},
    m.ToolSearchCallPart: {"tool_call_id": string, "args": string, "id": opt_str,
                           "provider": optional(provider_part)},
    m.ToolSearchReturnPart: {"tool_call_id": string, "tool_names": str_tuple,
                             "outcome": string, "id": opt_str,
                             "provider": optional(provider_part)},
    m.CapabilityLoadCallPart: {"capability_id": string, "tool_call_id": string,
                               "tool_name": string, "id": opt_str,
                               "provider": optional(provider_part)},
})

request_part = tagged(
    "part_kind", {_tag_of(c, "part_kind"): c for c in m.REQUEST_PART_TYPES}, "request part_kind"
)
response_part = tagged(
    "part_kind", {_tag_of(c, "part_kind"): c for c in m.RESPONSE_PART_TYPES},
    "response part_kind",
)

SPECS.update({
    m.RequestMessage: {"parts": array_of(request_part), "instructions": opt_str,
                       "timestamp": opt_stamp, "metadata": optional(metadata)},
    m.ResponseMessage: {"parts": array_of(response_part), "usage": usage,
                        "model_name": opt_str, "provider_name": opt_str,
                        "provider_response_id": opt_str, "finish_reason": opt_str,
                        "raw_finish_reason": opt_str, "timestamp": opt_stamp,
                        "provider_details": optional(provider_details),
                        "metadata": optional(metadata)},
})

_message = tagged(
    "kind", {"request": m.RequestMessage, "response": m.ResponseMessage}, "message kind"
)


_fast_message = _FAST[_message]


def decode_message(value: Any, path: str) -> m.Message:
    """Decode one version-2 message object found at ``path``; ``value`` is handed over."""
    try:
        fast: m.Message = _fast_message(value)
        return fast
    except (_Mismatch, MessageError, TypeError, ValueError, KeyError):
        pass  # the checked decoders below find the problem and name its path
    result: m.Message = _message(value, path)
    return result


def _check_specs_cover_every_field() -> None:
    for cls, spec in SPECS.items():
        names = {f.name for f in dataclasses.fields(cls)} - {"kind", "part_kind"}
        if cls is m.UploadedFile or cls in _SOURCE_TYPES or cls in m.USER_CONTENT_TYPES:
            names.discard("kind")
        assert names == set(spec), (cls, names ^ set(spec))


_check_specs_cover_every_field()
