"""Table-driven validator for the PydanticAI 2.31.0 stable-v2 message JSON (private).

The tables below restate, as our own data, the field names, JSON types,
required fields and discriminators of the library's ``ModelMessagesTypeAdapter``
schema (``pydantic_ai.messages`` 2.31.0).  The validator only *reads* a JSON
value graph (``dict``/``list``/``str``/``int``/``float``/``bool``/``None``); it
never changes, copies or coerces it.

Contract decisions (applied everywhere, see ``zigai.codecs.pydantic_ai``):

* discriminators are required: ``kind`` on every message and on every object in
  a user-prompt content list, ``part_kind`` on every part; an unknown value is
  rejected.  A typed tool part is selected exactly like the library does, by
  the pair (``part_kind``, ``tool_kind``);
* every other field the library gives a default may be absent; a required
  field (no library default) must be present;
* a present field must have the JSON type the library writes for it: strings
  are never numbers, integers are never floats or booleans, timestamps are
  ISO-8601 strings, bytes are base64 strings.  The library's lax coercions
  (``"5"`` for an integer, epoch numbers for timestamps) are *not* accepted;
* unknown keys are accepted and preserved untouched (the library ignores extra
  keys, so rejecting them would refuse documents the library reads);
* free-form values (``metadata`` on parts and text content, tool-return
  ``content``, error ``input``) accept any JSON value; ``provider_details``,
  ``vendor_metadata`` and message ``metadata`` accept any JSON object.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

__all__ = ["SchemaViolation", "check_messages", "json_type"]


class SchemaViolation(Exception):
    """Internal: a value broke the schema at ``path`` (mapped to the public error)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def json_type(value: object) -> str:
    """The JSON type name of a decoded value (``integer`` and ``number`` kept apart)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def key_path(path: str, key: str) -> str:
    return f"{path}.{key}" if _IDENTIFIER.fullmatch(key) else f"{path}[{key!r}]"


class Spec:
    """One schema node: which top-level JSON types it handles and a deep check."""

    expected: str = "any JSON value"
    json_types: frozenset[str] = frozenset(
        {"null", "boolean", "integer", "number", "string", "array", "object"}
    )

    def check(self, value: Any, path: str) -> None:
        if json_type(value) not in self.json_types:
            raise SchemaViolation(path, f"expected {self.expected}, got {json_type(value)}")


class _Type(Spec):
    def __init__(self, expected: str, *types: str) -> None:
        self.expected = expected
        self.json_types = frozenset(types)


class _Enum(Spec):
    json_types = frozenset({"string"})

    def __init__(self, *values: str) -> None:
        self.values = values
        self.expected = "one of " + ", ".join(repr(v) for v in values)

    def check(self, value: Any, path: str) -> None:
        super().check(value, path)
        if value not in self.values:
            raise SchemaViolation(path, f"expected {self.expected}, got {value!r}")


_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)?)?"
)


class _Timestamp(Spec):
    expected = "an ISO-8601 timestamp string"
    json_types = frozenset({"string"})

    def check(self, value: Any, path: str) -> None:
        super().check(value, path)
        match = _TIMESTAMP.fullmatch(value)
        try:
            if match is None:
                raise ValueError(value)
            year, month, day, hour, minute, second = (int(g) if g else 0 for g in match.groups())
            datetime(year, month, day, hour, minute, second)  # noqa: DTZ001 -- field range check only
        except ValueError:
            raise SchemaViolation(path, f"expected {self.expected}, got {value!r}") from None


_BASE64 = re.compile(r"[A-Za-z0-9+/_-]*={0,2}")


class _Base64(Spec):
    expected = "a base64 string"
    json_types = frozenset({"string"})

    def check(self, value: Any, path: str) -> None:
        super().check(value, path)
        if not _BASE64.fullmatch(value) or len(value.rstrip("=")) % 4 == 1:
            raise SchemaViolation(path, f"expected {self.expected}")


_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class _DecimalString(Spec):
    expected = "a decimal number string"
    json_types = frozenset({"string"})

    def check(self, value: Any, path: str) -> None:
        super().check(value, path)
        if not _DECIMAL.fullmatch(value):
            raise SchemaViolation(path, f"expected {self.expected}, got {value!r}")


class _List(Spec):
    json_types = frozenset({"array"})

    def __init__(self, item: Spec) -> None:
        self.item = item
        self.expected = f"an array of {item.expected}"

    def check(self, value: Any, path: str) -> None:
        super().check(value, path)
        for index, element in enumerate(value):
            self.item.check(element, f"{path}[{index}]")


class _Map(Spec):
    json_types = frozenset({"object"})

    def __init__(self, item: Spec) -> None:
        self.item = item
        self.expected = f"an object of {item.expected}"

    def check(self, value: Any, path: str) -> None:
        super().check(value, path)
        for key, element in value.items():
            self.item.check(element, key_path(path, key))


class _Union(Spec):
    """Options are told apart by top-level JSON type (no two options share one)."""

    def __init__(self, *options: Spec) -> None:
        self.options = options
        self.expected = " or ".join(o.expected for o in options)
        self.json_types = frozenset().union(*(o.json_types for o in options))

    def check(self, value: Any, path: str) -> None:
        super().check(value, path)
        kind = json_type(value)
        for option in self.options:
            if kind in option.json_types:
                option.check(value, path)
                return


class Record(Spec):
    """A JSON object with known fields: ``{name: (spec, required)}``; extra keys pass."""

    json_types = frozenset({"object"})

    def __init__(self, name: str, fields: Mapping[str, tuple[Spec, bool]]) -> None:
        self.name = name
        self.fields = dict(fields)
        self.expected = f"a {name} object"

    def check(self, value: Any, path: str) -> None:
        super().check(value, path)
        for field, (spec, required) in self.fields.items():
            if field in value:
                spec.check(value[field], key_path(path, field))
            elif required:
                raise SchemaViolation(key_path(path, field), f"required field of {self.name} is missing")


class _Tagged(Spec):
    """A discriminated union of records on ``tag``, optionally refined by ``tool_kind``."""

    json_types = frozenset({"object"})

    def __init__(
        self,
        what: str,
        tag: str,
        table: Mapping[str, Record],
        typed: Mapping[tuple[str, str], Record] | None = None,
    ) -> None:
        self.what = what
        self.tag = tag
        self.table = dict(table)
        self.typed = dict(typed or {})
        self.expected = f"a {what} object"

    def check(self, value: Any, path: str) -> None:
        super().check(value, path)
        tag_path = key_path(path, self.tag)
        if self.tag not in value:
            raise SchemaViolation(tag_path, f"missing discriminator {self.tag!r} of a {self.what}")
        tag = value[self.tag]
        tool_kind = value.get("tool_kind")
        record = None
        if isinstance(tag, str) and isinstance(tool_kind, str):
            record = self.typed.get((tag, tool_kind))
        if record is None and isinstance(tag, str):
            record = self.table.get(tag)
        if record is None:
            known = ", ".join(repr(k) for k in self.table)
            raise SchemaViolation(tag_path, f"unknown {self.tag} {tag!r} for a {self.what} (known: {known})")
        record.check(value, path)


def _const(value: str) -> Spec:
    return _Enum(value)


# ---- scalar vocabulary ------------------------------------------------------------------------

ANY = Spec()
STR = _Type("a string", "string")
INT = _Type("an integer", "integer")
BOOL = _Type("a boolean", "boolean")
NUM = _Type("a number", "integer", "number")
NULL = _Type("null", "null")
OBJ = _Type("an object", "object")
TS = _Timestamp()


def opt(spec: Spec) -> Spec:
    return _Union(spec, NULL)


OSTR = opt(STR)
OOBJ = opt(OBJ)
TOOL_KIND = _Enum("tool-search", "capability-load")
OUTCOME = _Enum("success", "failed", "denied", "interrupted")


def req(spec: Spec) -> tuple[Spec, bool]:
    return (spec, True)


def may(spec: Spec) -> tuple[Spec, bool]:
    return (spec, False)


def _record(record_name: str, /, **fields: tuple[Spec, bool]) -> Record:
    return Record(record_name, fields)


# ---- user content ------------------------------------------------------------------------------

def _file_url(kind: str, name: str) -> Record:
    return _record(
        name,
        url=req(STR),
        kind=may(_const(kind)),
        force_download=may(_Union(BOOL, _const("allow-local"))),
        vendor_metadata=may(OOBJ),
        media_type=may(OSTR),
        identifier=may(OSTR),
    )


BINARY = _record(
    "BinaryContent",
    data=req(_Base64()),
    media_type=req(STR),
    kind=may(_const("binary")),
    vendor_metadata=may(OOBJ),
    identifier=may(OSTR),
)

UPLOADED_FILE_PROVIDERS = (
    "anthropic", "openai", "google", "google-cloud", "google-gla", "google-vertex", "bedrock", "xai",
)

USER_CONTENT = _Tagged("user content item", "kind", {
    "text-content": _record("TextContent", content=req(STR), metadata=may(ANY)),
    "image-url": _file_url("image-url", "ImageUrl"),
    "audio-url": _file_url("audio-url", "AudioUrl"),
    "document-url": _file_url("document-url", "DocumentUrl"),
    "video-url": _file_url("video-url", "VideoUrl"),
    "binary": BINARY,
    "uploaded-file": _record(
        "UploadedFile",
        file_id=req(STR),
        provider_name=req(_Enum(*UPLOADED_FILE_PROVIDERS)),
        media_type=may(OSTR),
        identifier=may(OSTR),
        vendor_metadata=may(OOBJ),
    ),
    "cache-point": _record("CachePoint", ttl=may(_Enum("5m", "1h"))),
})

# ---- request parts ---------------------------------------------------------------------------

ERROR_DETAILS = _record(
    "ErrorDetails",
    type=req(STR),
    loc=req(_List(_Union(INT, STR))),
    msg=req(STR),
    input=req(ANY),
    ctx=may(OBJ),
    url=may(STR),
)

TOOL_SEARCH_RETURN = _record(
    "ToolSearchReturnContent",
    discovered_tools=req(_List(_record("ToolSearchMatch", name=req(STR)))),
    message=may(STR),
)
TOOL_SEARCH_ARGS = _record("ToolSearchArgs", queries=req(_List(STR)))
LOAD_CAPABILITY_ARGS = _record("LoadCapabilityArgs", id=req(STR))
LOAD_CAPABILITY_RETURN = _record("LoadCapabilityReturn", instructions=may(STR))

_PROVIDER = {"provider_name": may(OSTR), "provider_details": may(OOBJ)}
_PART_ID = {"id": may(OSTR), **_PROVIDER}


def _tool_return(name: str, *, content: Spec, tool_name: Spec, tool_kind: Spec,
                 native: bool, required_name: bool) -> Record:
    fields: dict[str, tuple[Spec, bool]] = {
        "tool_name": (tool_name, required_name),
        "content": req(content),
        "tool_call_id": may(STR),
        "metadata": may(ANY),
        "timestamp": may(TS),
        "outcome": may(OUTCOME),
        "tool_kind": may(tool_kind),
    }
    if native:
        fields.update(_PROVIDER)
    return Record(name, fields)


def _tool_call(name: str, *, args: Spec, tool_name: Spec, tool_kind: Spec, required_name: bool) -> Record:
    return Record(name, {
        "tool_name": (tool_name, required_name),
        "args": may(args),
        "tool_call_id": may(STR),
        "tool_kind": may(tool_kind),
        **_PART_ID,
    })


SPEECH = _record(
    "SpeechPart",
    speaker=req(_Enum("user", "assistant")),
    transcript=may(OSTR),
    audio=may(opt(BINARY)),
    interrupted_at_ms=may(opt(INT)),
    **_PART_ID,
)

REQUEST_PART = _Tagged(
    "request part",
    "part_kind",
    {
        "system-prompt": _record("SystemPromptPart", content=req(STR), timestamp=may(TS),
                                 dynamic_ref=may(OSTR)),
        "user-prompt": _record("UserPromptPart", content=req(_Union(STR, _List(_Union(STR, USER_CONTENT)))),
                               timestamp=may(TS)),
        "speech": SPEECH,
        "tool-return": _tool_return("ToolReturnPart", content=ANY, tool_name=STR,
                                    tool_kind=opt(TOOL_KIND), native=False, required_name=True),
        "retry-prompt": _record("RetryPromptPart", content=req(_Union(STR, _List(ERROR_DETAILS))),
                                tool_name=may(OSTR), tool_call_id=may(STR), timestamp=may(TS)),
        "tool-availability-delta": _record("ToolAvailabilityDeltaPart", tools_added=may(_List(STR)),
                                           tool_call_id=may(OSTR)),
    },
    {
        ("tool-return", "tool-search"): _tool_return(
            "ToolSearchReturnPart", content=TOOL_SEARCH_RETURN, tool_name=_const("search_tools"),
            tool_kind=_const("tool-search"), native=False, required_name=False),
        ("tool-return", "capability-load"): _tool_return(
            "LoadCapabilityReturnPart", content=LOAD_CAPABILITY_RETURN, tool_name=_const("load_capability"),
            tool_kind=_const("capability-load"), native=False, required_name=False),
    },
)

# ---- response parts --------------------------------------------------------------------------

RESPONSE_PART = _Tagged(
    "response part",
    "part_kind",
    {
        "text": _record("TextPart", content=req(STR), **_PART_ID),
        "tool-call": _tool_call("ToolCallPart", args=_Union(STR, OBJ, NULL), tool_name=STR,
                                tool_kind=opt(TOOL_KIND), required_name=True),
        "builtin-tool-call": _tool_call("NativeToolCallPart", args=_Union(STR, OBJ, NULL), tool_name=STR,
                                        tool_kind=opt(TOOL_KIND), required_name=True),
        "builtin-tool-return": _tool_return("NativeToolReturnPart", content=ANY, tool_name=STR,
                                            tool_kind=opt(TOOL_KIND), native=True, required_name=True),
        "thinking": _record("ThinkingPart", content=req(STR), signature=may(OSTR), **_PART_ID),
        "compaction": _record("CompactionPart", content=may(OSTR), **_PART_ID),
        "file": _record("FilePart", content=req(BINARY), **_PART_ID),
        "speech": SPEECH,
    },
    {
        ("tool-call", "tool-search"): _tool_call(
            "ToolSearchCallPart", args=_Union(STR, TOOL_SEARCH_ARGS, NULL),
            tool_name=_const("search_tools"), tool_kind=_const("tool-search"), required_name=False),
        ("tool-call", "capability-load"): _tool_call(
            "LoadCapabilityCallPart", args=_Union(STR, LOAD_CAPABILITY_ARGS, NULL),
            tool_name=_const("load_capability"), tool_kind=_const("capability-load"), required_name=False),
        ("builtin-tool-call", "tool-search"): _tool_call(
            "NativeToolSearchCallPart", args=_Union(STR, TOOL_SEARCH_ARGS, NULL),
            tool_name=_const("tool_search"), tool_kind=_const("tool-search"), required_name=False),
        ("builtin-tool-return", "tool-search"): _tool_return(
            "NativeToolSearchReturnPart", content=TOOL_SEARCH_RETURN, tool_name=_const("tool_search"),
            tool_kind=_const("tool-search"), native=True, required_name=False),
    },
)

# ---- messages --------------------------------------------------------------------------------

_INT_FIELDS = (
    "input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens",
    "input_audio_tokens", "cache_audio_read_tokens", "output_audio_tokens",
)
REQUEST_USAGE = Record("RequestUsage", {
    **{name: may(INT) for name in _INT_FIELDS},
    "details": may(_Map(INT)),
    "cost": may(_Union(NUM, _DecimalString(), NULL)),
})

_MESSAGE_COMMON = {"run_id": may(OSTR), "conversation_id": may(OSTR), "metadata": may(OOBJ)}

MESSAGE = _Tagged("message", "kind", {
    "request": Record("ModelRequest", {
        "parts": req(_List(REQUEST_PART)),
        "timestamp": may(opt(TS)),
        "instructions": may(OSTR),
        "state": may(_Enum("complete", "interrupted")),
        **_MESSAGE_COMMON,
    }),
    "response": Record("ModelResponse", {
        "parts": req(_List(RESPONSE_PART)),
        "usage": may(REQUEST_USAGE),
        "model_name": may(OSTR),
        "timestamp": may(TS),
        "provider_name": may(OSTR),
        "provider_url": may(OSTR),
        "provider_details": may(OOBJ),
        "provider_response_id": may(OSTR),
        "finish_reason": may(opt(_Enum("stop", "length", "content_filter", "tool_call", "error"))),
        "state": may(_Enum("complete", "incomplete", "suspended", "interrupted")),
        **_MESSAGE_COMMON,
    }),
})

MESSAGES = _List(MESSAGE)
MESSAGES.expected = "an array of messages"


def check_messages(value: Any) -> None:
    """Raise :class:`SchemaViolation` unless ``value`` is a valid stable-v2 message list."""
    MESSAGES.check(value, "$")
