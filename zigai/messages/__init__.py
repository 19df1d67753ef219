"""The durable, provider-neutral conversation model (layer 2: imports only leaves).

A :data:`Message` is either a :class:`RequestMessage` (request parts only) or a
:class:`ResponseMessage` (response parts only); each side has its own part union,
so a wrong role/part combination raises :class:`InvalidMessagePart` at
construction and cannot exist.  Every value here is a frozen, slotted dataclass
(or an immutable mapping); sequences are tuples; nothing does I/O, knows about
HTTP, settings or provider wire schemas.

Modules, one concept each: ``details`` (ProviderDetails, Metadata, ProviderPart,
UploadedFile), ``content`` (media sources and UserContent), ``request_parts``,
``response_parts``, ``messages`` (envelopes, FinishReason, short constructors),
``json_value`` (immutable JSON values).
"""

from __future__ import annotations

from zigai.messages._base import InvalidMessagePart
from zigai.messages.content import (
    MEDIA_SOURCE_TYPES,
    USER_CONTENT_TYPES,
    AudioContent,
    BinaryContent,
    BytesSource,
    CachePoint,
    DocumentContent,
    ImageContent,
    MediaSource,
    ProviderFileSource,
    TaggedText,
    TextContent,
    UploadedFileContent,
    UrlSource,
    UserContent,
    VideoContent,
)
from zigai.messages.details import (
    InvalidProviderDetails,
    Metadata,
    ProviderDetails,
    ProviderPart,
    UploadedFile,
)
from zigai.messages.json_value import FrozenDict, JsonValue
from zigai.messages.messages import (
    FinishReason,
    Message,
    RequestMessage,
    ResponseMessage,
    retry_prompt,
    system_prompt,
    text,
    user_prompt,
)
from zigai.messages.request_parts import (
    REQUEST_PART_TYPES,
    CapabilityLoadReturnPart,
    InstructionPart,
    RequestPart,
    RetryPromptPart,
    SpeechPromptPart,
    SystemPromptPart,
    ToolAvailabilityPart,
    ToolOutcome,
    ToolReturnPart,
    UserPromptPart,
)
from zigai.messages.response_parts import (
    RESPONSE_PART_TYPES,
    CapabilityLoadCallPart,
    CompactionPart,
    FilePart,
    NativeToolCallPart,
    NativeToolReturnPart,
    ResponsePart,
    SpeechPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolSearchCallPart,
    ToolSearchReturnPart,
)
from zigai.usage import RequestUsage

#: Short alias for rich user content accepted as prompt parts.
PromptPart = UserContent
#: Compatibility alias: ``Part`` is a response part.
Part = ResponsePart

__all__ = [
    # errors
    "InvalidMessagePart",
    "InvalidProviderDetails",
    # provider data and metadata
    "FrozenDict",
    "JsonValue",
    "Metadata",
    "ProviderDetails",
    "ProviderPart",
    "UploadedFile",
    # media sources
    "BytesSource",
    "MEDIA_SOURCE_TYPES",
    "MediaSource",
    "ProviderFileSource",
    "UrlSource",
    # user content
    "AudioContent",
    "BinaryContent",
    "CachePoint",
    "DocumentContent",
    "ImageContent",
    "PromptPart",
    "TaggedText",
    "TextContent",
    "USER_CONTENT_TYPES",
    "UploadedFileContent",
    "UserContent",
    "VideoContent",
    # request parts
    "CapabilityLoadReturnPart",
    "InstructionPart",
    "REQUEST_PART_TYPES",
    "RequestPart",
    "RetryPromptPart",
    "SpeechPromptPart",
    "SystemPromptPart",
    "ToolAvailabilityPart",
    "ToolOutcome",
    "ToolReturnPart",
    "UserPromptPart",
    # response parts
    "CapabilityLoadCallPart",
    "CompactionPart",
    "FilePart",
    "NativeToolCallPart",
    "NativeToolReturnPart",
    "Part",
    "RESPONSE_PART_TYPES",
    "ResponsePart",
    "SpeechPart",
    "TextPart",
    "ThinkingPart",
    "ToolCallPart",
    "ToolSearchCallPart",
    "ToolSearchReturnPart",
    # envelopes
    "FinishReason",
    "Message",
    "RequestMessage",
    "RequestUsage",
    "ResponseMessage",
    # short constructors
    "retry_prompt",
    "system_prompt",
    "text",
    "user_prompt",
]
