"""Media sources and rich user content (the ``UserContent`` union).

Media uses one source union (:data:`MediaSource`): inline bytes
(:class:`BytesSource`), a URL (:class:`UrlSource`), a legacy provider file id
(:class:`ProviderFileSource`) or an owner-qualified :class:`UploadedFile`.

User content items carry a ``kind`` discriminator: ``text``, ``tagged-text``,
``image``, ``audio``, ``video``, ``document``, ``binary``, ``uploaded-file`` and
``cache-point``.  All are frozen; byte buffers are copied to ``bytes``.  URLs are
not fetched or policy-checked here (the agent validates them before network I/O).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from zigai.messages._base import (
    optional_str,
    require_bytes,
    require_instance,
    require_literal,
    require_media_type,
    require_str,
)
from zigai.messages.details import UploadedFile

__all__ = [
    "AudioContent",
    "BinaryContent",
    "BytesSource",
    "CachePoint",
    "DocumentContent",
    "ImageContent",
    "MEDIA_SOURCE_TYPES",
    "MediaSource",
    "ProviderFileSource",
    "TaggedText",
    "TextContent",
    "USER_CONTENT_TYPES",
    "UploadedFileContent",
    "UrlSource",
    "UserContent",
    "VideoContent",
]


@dataclass(frozen=True, slots=True)
class BytesSource:
    """Inline media bytes with their media type (base64 only at a wire boundary)."""

    data: bytes
    media_type: str
    kind: Literal["bytes"] = "bytes"

    def __post_init__(self) -> None:
        require_bytes(self, "data")
        require_media_type(self, "media_type")
        require_literal(self, "kind", "bytes")


@dataclass(frozen=True, slots=True)
class UrlSource:
    """Media the provider (or adapter) fetches from a URL."""

    url: str
    media_type: str | None = None
    kind: Literal["url"] = "url"

    def __post_init__(self) -> None:
        require_str(self, "url")
        require_media_type(self, "media_type", optional=True)
        require_literal(self, "kind", "url")


@dataclass(frozen=True, slots=True)
class ProviderFileSource:
    """Legacy provider file id without an owner; prefer :class:`UploadedFile`."""

    file_id: str
    media_type: str | None = None
    kind: Literal["provider-file"] = "provider-file"

    def __post_init__(self) -> None:
        require_str(self, "file_id")
        require_media_type(self, "media_type", optional=True)
        require_literal(self, "kind", "provider-file")


MediaSource: TypeAlias = BytesSource | UrlSource | ProviderFileSource | UploadedFile
MEDIA_SOURCE_TYPES: tuple[type, ...] = (BytesSource, UrlSource, ProviderFileSource, UploadedFile)


@dataclass(frozen=True, slots=True)
class TextContent:
    """Plain text inside a rich user prompt."""

    text: str
    kind: Literal["text"] = "text"

    def __post_init__(self) -> None:
        require_str(self, "text", allow_empty=True)
        require_literal(self, "kind", "text")


@dataclass(frozen=True, slots=True)
class TaggedText:
    """Text wrapped in a named tag (adapters render it e.g. as ``<tag>text</tag>``)."""

    tag: str
    text: str
    kind: Literal["tagged-text"] = "tagged-text"

    def __post_init__(self) -> None:
        require_str(self, "tag")
        require_str(self, "text", allow_empty=True)
        require_literal(self, "kind", "tagged-text")


@dataclass(frozen=True, slots=True)
class ImageContent:
    """An image; ``detail`` is an optional fidelity hint such as ``low``/``high``/``auto``."""

    source: MediaSource
    detail: str | None = None
    kind: Literal["image"] = "image"

    def __post_init__(self) -> None:
        require_instance(self, "source", MEDIA_SOURCE_TYPES)
        optional_str(self, "detail")
        require_literal(self, "kind", "image")


@dataclass(frozen=True, slots=True)
class AudioContent:
    """An audio clip."""

    source: MediaSource
    kind: Literal["audio"] = "audio"

    def __post_init__(self) -> None:
        require_instance(self, "source", MEDIA_SOURCE_TYPES)
        require_literal(self, "kind", "audio")


@dataclass(frozen=True, slots=True)
class VideoContent:
    """A video clip."""

    source: MediaSource
    kind: Literal["video"] = "video"

    def __post_init__(self) -> None:
        require_instance(self, "source", MEDIA_SOURCE_TYPES)
        require_literal(self, "kind", "video")


@dataclass(frozen=True, slots=True)
class DocumentContent:
    """A document (PDF, plain text, ...); ``title`` is an optional display name."""

    source: MediaSource
    title: str | None = None
    kind: Literal["document"] = "document"

    def __post_init__(self) -> None:
        require_instance(self, "source", MEDIA_SOURCE_TYPES)
        optional_str(self, "title")
        require_literal(self, "kind", "document")


@dataclass(frozen=True, slots=True)
class BinaryContent:
    """Arbitrary binary data of any media type."""

    data: bytes
    media_type: str
    kind: Literal["binary"] = "binary"

    def __post_init__(self) -> None:
        require_bytes(self, "data")
        require_media_type(self, "media_type")
        require_literal(self, "kind", "binary")


@dataclass(frozen=True, slots=True)
class UploadedFileContent:
    """A provider-stored file referenced by its owner-qualified handle."""

    file: UploadedFile
    kind: Literal["uploaded-file"] = "uploaded-file"

    def __post_init__(self) -> None:
        require_instance(self, "file", UploadedFile)
        require_literal(self, "kind", "uploaded-file")


@dataclass(frozen=True, slots=True)
class CachePoint:
    """Marks the end of a cacheable prompt prefix; ``ttl`` e.g. ``"5m"`` or ``"1h"``."""

    ttl: str | None = None
    kind: Literal["cache-point"] = "cache-point"

    def __post_init__(self) -> None:
        optional_str(self, "ttl")
        require_literal(self, "kind", "cache-point")


UserContent: TypeAlias = (
    TextContent
    | TaggedText
    | ImageContent
    | AudioContent
    | VideoContent
    | DocumentContent
    | BinaryContent
    | UploadedFileContent
    | CachePoint
)
USER_CONTENT_TYPES: tuple[type, ...] = (
    TextContent,
    TaggedText,
    ImageContent,
    AudioContent,
    VideoContent,
    DocumentContent,
    BinaryContent,
    UploadedFileContent,
    CachePoint,
)
