"""Response parts: what a model produced.

The ``ResponsePart`` union: ``text``, ``thinking``, ``compaction``, ``file``,
``speech``, ``tool-call``, ``native-tool-call``, ``native-tool-return``,
``tool-search-call``, ``tool-search-return`` and ``capability-load-call``
(``part_kind`` discriminators).  Only these may appear in a
:class:`~zigai.messages.ResponseMessage`.

Provider-generated parts keep the provider's ids and opaque replay data in an
optional :class:`~zigai.messages.ProviderPart` (``provider``).  Provider-native tool
traffic (executed by the provider, e.g. web search) *requires* one, because only
the provider that produced it can interpret it.

Function tool calls keep ``args`` as the raw JSON argument text the model sent
(possibly invalid — validation belongs to the tool layer); :meth:`ToolCallPart.args_as_dict`
decodes it within the tool-payload JSON limits.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from zigai.messages._base import (
    InvalidMessagePart,
    coerce_enum,
    optional_str,
    require_instance,
    require_literal,
    require_str,
    require_tuple,
    set_field,
)
from zigai.messages.content import MEDIA_SOURCE_TYPES, AudioContent, MediaSource
from zigai.messages.details import ProviderPart
from zigai.messages.request_parts import ToolOutcome, freeze_content

__all__ = [
    "CapabilityLoadCallPart",
    "CompactionPart",
    "FilePart",
    "NativeToolCallPart",
    "NativeToolReturnPart",
    "RESPONSE_PART_TYPES",
    "ResponsePart",
    "SpeechPart",
    "TextPart",
    "ThinkingPart",
    "ToolCallPart",
    "ToolSearchCallPart",
    "ToolSearchReturnPart",
]


def _normalize_args(value: object, name: str = "args") -> None:
    """Accept raw JSON text, or a mapping that is encoded once to canonical JSON text."""
    args = getattr(value, name)
    if isinstance(args, Mapping):
        try:
            text = json.dumps(dict(args), sort_keys=True, separators=(",", ":"),
                              ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidMessagePart(
                f"{type(value).__name__}.{name} mapping is not JSON: {exc}"
            ) from None
        set_field(value, name, text)
    require_str(value, name, allow_empty=True)


def _args_as_dict(args: str, owner: str) -> dict[str, Any]:
    if not args.strip():
        return {}
    from zigai import json as zjson  # lazy: keeps the message contract import-light

    try:
        value = zjson.parse(args, zjson.defaults.tool_payload)
    except Exception as exc:  # zigai.json errors: malformed or over the tool-payload limits
        raise InvalidMessagePart(f"{owner}.args is not valid tool-payload JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise InvalidMessagePart(f"{owner}.args must encode a JSON object")
    return value


@dataclass(frozen=True, slots=True)
class TextPart:
    """Plain text output."""

    content: str
    id: str | None = None
    provider: ProviderPart | None = None
    part_kind: Literal["text"] = "text"

    def __post_init__(self) -> None:
        if (type(self.content) is str and self.id is None and self.provider is None
                and self.part_kind == "text"):
            return  # the common exact shape: every check below would pass unchanged
        self._check_fields()

    def _check_fields(self) -> None:
        """Every field check with its exact error (skipped for the common exact shape)."""
        require_str(self, "content", allow_empty=True)
        optional_str(self, "id")
        require_instance(self, "provider", ProviderPart, optional=True)
        require_literal(self, "part_kind", "text")


@dataclass(frozen=True, slots=True)
class ThinkingPart:
    """Reasoning output; ``signature`` is the provider's opaque replay token."""

    content: str
    id: str | None = None
    signature: str | None = None
    provider: ProviderPart | None = None
    part_kind: Literal["thinking"] = "thinking"

    def __post_init__(self) -> None:
        signature = self.signature
        if (type(self.content) is str and self.id is None and self.provider is None
                and (signature is None or (type(signature) is str and signature))
                and self.part_kind == "thinking"):
            return  # the common exact shape: every check below would pass unchanged
        self._check_fields()

    def _check_fields(self) -> None:
        """Every field check with its exact error (skipped for the common exact shape)."""
        require_str(self, "content", allow_empty=True)
        optional_str(self, "id")
        optional_str(self, "signature")
        require_instance(self, "provider", ProviderPart, optional=True)
        require_literal(self, "part_kind", "thinking")


@dataclass(frozen=True, slots=True)
class CompactionPart:
    """Provider-side context compaction: an optional readable summary plus opaque replay data."""

    content: str | None = None
    id: str | None = None
    provider: ProviderPart | None = None
    part_kind: Literal["compaction"] = "compaction"

    def __post_init__(self) -> None:
        optional_str(self, "content", allow_empty=True)
        optional_str(self, "id")
        require_instance(self, "provider", ProviderPart, optional=True)
        require_literal(self, "part_kind", "compaction")


@dataclass(frozen=True, slots=True)
class FilePart:
    """Generated media (an image, audio file ...) from one media source."""

    source: MediaSource
    id: str | None = None
    provider: ProviderPart | None = None
    part_kind: Literal["file"] = "file"

    def __post_init__(self) -> None:
        require_instance(self, "source", MEDIA_SOURCE_TYPES)
        optional_str(self, "id")
        require_instance(self, "provider", ProviderPart, optional=True)
        require_literal(self, "part_kind", "file")


@dataclass(frozen=True, slots=True)
class SpeechPart:
    """Spoken output: audio, transcript, or both (at least one)."""

    audio: AudioContent | None = None
    transcript: str | None = None
    id: str | None = None
    provider: ProviderPart | None = None
    part_kind: Literal["speech"] = "speech"

    def __post_init__(self) -> None:
        require_instance(self, "audio", AudioContent, optional=True)
        optional_str(self, "transcript", allow_empty=True)
        if self.audio is None and self.transcript is None:
            raise InvalidMessagePart("SpeechPart needs audio, a transcript, or both")
        optional_str(self, "id")
        require_instance(self, "provider", ProviderPart, optional=True)
        require_literal(self, "part_kind", "speech")


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """A function tool call; ``args`` is the raw JSON argument text the model produced."""

    tool_name: str
    args: str
    tool_call_id: str
    id: str | None = None
    provider: ProviderPart | None = None
    part_kind: Literal["tool-call"] = "tool-call"

    def __post_init__(self) -> None:
        tool_name, tool_call_id, id_ = self.tool_name, self.tool_call_id, self.id
        if (type(tool_name) is str and tool_name and type(self.args) is str
                and type(tool_call_id) is str and tool_call_id
                and (id_ is None or (type(id_) is str and id_)) and self.provider is None
                and self.part_kind == "tool-call"):
            return  # the common exact shape: every check below would pass unchanged
        self._check_fields()

    def _check_fields(self) -> None:
        """Every field check with its exact error (skipped for the common exact shape)."""
        require_str(self, "tool_name")
        _normalize_args(self)
        require_str(self, "tool_call_id")
        optional_str(self, "id")
        require_instance(self, "provider", ProviderPart, optional=True)
        require_literal(self, "part_kind", "tool-call")

    def args_as_dict(self) -> dict[str, Any]:
        """Decode ``args`` with the tool-payload JSON profile; empty text means ``{}``.

        Raises :class:`InvalidMessagePart` (chained to the JSON error) when the text is
        malformed, over the limits, or not a JSON object.
        """
        return _args_as_dict(self.args, "ToolCallPart")


@dataclass(frozen=True, slots=True)
class NativeToolCallPart:
    """A call of a provider-native tool (web search, code execution ...) run by the provider."""

    tool_name: str
    tool_call_id: str
    provider: ProviderPart
    args: str = "{}"
    part_kind: Literal["native-tool-call"] = "native-tool-call"

    def __post_init__(self) -> None:
        require_str(self, "tool_name")
        require_str(self, "tool_call_id")
        require_instance(self, "provider", ProviderPart)
        _normalize_args(self)
        require_literal(self, "part_kind", "native-tool-call")

    @property
    def provider_name(self) -> str:
        return self.provider.provider_name

    def args_as_dict(self) -> dict[str, Any]:
        """Decode ``args`` like :meth:`ToolCallPart.args_as_dict`."""
        return _args_as_dict(self.args, "NativeToolCallPart")


@dataclass(frozen=True, slots=True)
class NativeToolReturnPart:
    """The provider's own result of a provider-native tool call (immutable JSON content)."""

    tool_name: str
    tool_call_id: str
    provider: ProviderPart
    content: Any = None
    outcome: ToolOutcome = ToolOutcome.success
    part_kind: Literal["native-tool-return"] = "native-tool-return"

    def __post_init__(self) -> None:
        require_str(self, "tool_name")
        require_str(self, "tool_call_id")
        require_instance(self, "provider", ProviderPart)
        set_field(self, "content", freeze_content(self.content, "NativeToolReturnPart"))
        coerce_enum(self, "outcome", ToolOutcome)
        require_literal(self, "part_kind", "native-tool-return")

    @property
    def provider_name(self) -> str:
        return self.provider.provider_name


@dataclass(frozen=True, slots=True)
class ToolSearchCallPart:
    """The model searched the deferred tool catalog (``args`` raw JSON, e.g. a query)."""

    tool_call_id: str
    args: str = "{}"
    id: str | None = None
    provider: ProviderPart | None = None
    part_kind: Literal["tool-search-call"] = "tool-search-call"

    def __post_init__(self) -> None:
        require_str(self, "tool_call_id")
        _normalize_args(self)
        optional_str(self, "id")
        require_instance(self, "provider", ProviderPart, optional=True)
        require_literal(self, "part_kind", "tool-search-call")


@dataclass(frozen=True, slots=True)
class ToolSearchReturnPart:
    """Tool names a tool search revealed, matched to its call by ``tool_call_id``."""

    tool_call_id: str
    tool_names: tuple[str, ...] = ()
    outcome: ToolOutcome = ToolOutcome.success
    id: str | None = None
    provider: ProviderPart | None = None
    part_kind: Literal["tool-search-return"] = "tool-search-return"

    def __post_init__(self) -> None:
        require_str(self, "tool_call_id")
        require_tuple(self, "tool_names", str)
        coerce_enum(self, "outcome", ToolOutcome)
        optional_str(self, "id")
        require_instance(self, "provider", ProviderPart, optional=True)
        require_literal(self, "part_kind", "tool-search-return")


@dataclass(frozen=True, slots=True)
class CapabilityLoadCallPart:
    """A typed call of the framework-owned ``load_capability`` tool."""

    capability_id: str
    tool_call_id: str
    tool_name: str = "load_capability"
    id: str | None = None
    provider: ProviderPart | None = None
    part_kind: Literal["capability-load-call"] = "capability-load-call"

    def __post_init__(self) -> None:
        require_str(self, "capability_id")
        require_str(self, "tool_call_id")
        require_str(self, "tool_name")
        optional_str(self, "id")
        require_instance(self, "provider", ProviderPart, optional=True)
        require_literal(self, "part_kind", "capability-load-call")


ResponsePart: TypeAlias = (
    TextPart
    | ThinkingPart
    | CompactionPart
    | FilePart
    | SpeechPart
    | ToolCallPart
    | NativeToolCallPart
    | NativeToolReturnPart
    | ToolSearchCallPart
    | ToolSearchReturnPart
    | CapabilityLoadCallPart
)
RESPONSE_PART_TYPES: tuple[type, ...] = (
    TextPart,
    ThinkingPart,
    CompactionPart,
    FilePart,
    SpeechPart,
    ToolCallPart,
    NativeToolCallPart,
    NativeToolReturnPart,
    ToolSearchCallPart,
    ToolSearchReturnPart,
    CapabilityLoadCallPart,
)
