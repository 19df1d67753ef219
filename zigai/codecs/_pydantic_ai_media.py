"""User content and generated-file media of the PydanticAI conversion (private).

Job: map one PydanticAI user-content item (or a ``file`` part's ``BinaryContent``) to the
zigai content value and back, for ``zigai.codecs._pydantic_ai_convert``.  Both directions
raise :class:`NoForm` naming the location and the kind that has no equivalent; the caller
turns it into the public error.

Mapping (decided once, documented in docs/codecs.md):

* ``str`` item <-> :class:`TextContent`; ``cache-point`` <-> :class:`CachePoint` (the
  library default ``ttl`` ``"5m"`` is zigai's ``ttl=None``);
* ``image-url`` / ``audio-url`` / ``video-url`` / ``document-url`` <->
  ``Image``/``Audio``/``Video``/``DocumentContent`` over a :class:`UrlSource`;
* ``binary`` <-> ``Image``/``Audio``/``VideoContent`` over a :class:`BytesSource` when the
  media type is ``image/``, ``audio/`` or ``video/``, else :class:`BinaryContent`;
* ``uploaded-file`` <-> :class:`UploadedFileContent`;
* an image's ``vendor_metadata`` ``{"detail": ...}`` <-> ``ImageContent.detail``; any other
  ``vendor_metadata``, ``force_download`` other than ``false``, or an ``identifier`` that is
  not the library's derived default (first six hex digits of the SHA-1 of the URL, data or
  file id) has no zigai form.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

from zigai.messages import (
    AudioContent,
    BinaryContent,
    BytesSource,
    CachePoint,
    DocumentContent,
    ImageContent,
    TextContent,
    UploadedFile,
    UploadedFileContent,
    UrlSource,
    UserContent,
    VideoContent,
)

__all__ = ["NoForm", "binary_from", "binary_to", "content_from", "content_to"]

DEFAULT_TTL = "5m"
_URL_KINDS: dict[str, type] = {
    "image-url": ImageContent, "audio-url": AudioContent,
    "video-url": VideoContent, "document-url": DocumentContent,
}
_TYPED_BINARY: dict[str, type] = {"image/": ImageContent, "audio/": AudioContent, "video/": VideoContent}


class NoForm(Exception):
    """Internal: the value at ``path`` (of kind ``kind``) has no form on the other side."""

    def __init__(self, path: str, kind: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.kind = kind
        self.reason = reason


def derived_identifier(key: str | bytes) -> str:
    """The identifier PydanticAI derives for content without an explicit one."""
    raw = key.encode("utf-8") if isinstance(key, str) else key
    return hashlib.sha1(raw, usedforsecurity=False).hexdigest()[:6]


def decode_base64(text: str, path: str) -> bytes:
    """Bytes of a base64 field; both the URL-safe and the standard alphabet, padding optional."""
    unpadded = text.rstrip("=").translate(str.maketrans("-_", "+/"))
    try:
        return base64.b64decode(unpadded + "=" * (-len(unpadded) % 4), validate=True)
    except (binascii.Error, ValueError):  # pragma: no cover - the schema validated the alphabet
        raise NoForm(path, "binary", "data is not base64") from None


def encode_base64(data: bytes) -> str:
    """The library's byte serialization: URL-safe base64 with padding."""
    return base64.urlsafe_b64encode(data).decode("ascii")


# ---- PydanticAI -> zigai ------------------------------------------------------------------------

def _check_identifier(item: dict[str, Any], key: str | bytes, path: str, kind: str) -> None:
    identifier = item.get("identifier")
    if identifier is not None and identifier != derived_identifier(key):
        raise NoForm(path, kind, f"identifier {identifier!r} is not the derived default "
                                 f"{derived_identifier(key)!r}; zigai content has no identifier")


def _detail_of(item: dict[str, Any], path: str, kind: str, *, image: bool) -> str | None:
    vendor = item.get("vendor_metadata")
    if vendor is None:
        return None
    if image and set(vendor) == {"detail"} and isinstance(vendor["detail"], str) and vendor["detail"]:
        return vendor["detail"]
    allowed = "only {'detail': str} on images" if image else "none on this kind"
    raise NoForm(path, kind, f"vendor_metadata {vendor!r} has no zigai form ({allowed})")


def binary_to(item: dict[str, Any], path: str) -> BytesSource:
    """The bytes source of a ``binary`` object without vendor metadata (a ``file`` part's content)."""
    data = decode_base64(item["data"], f"{path}.data")
    _check_identifier(item, data, path, "binary")
    _detail_of(item, path, "binary", image=False)
    return BytesSource(data, item["media_type"])


def content_to(item: Any, path: str) -> UserContent:
    """One PydanticAI user-content item as zigai user content."""
    if isinstance(item, str):
        return TextContent(item)
    kind = item["kind"]
    if kind == "cache-point":
        ttl = item.get("ttl", DEFAULT_TTL)
        return CachePoint(None if ttl == DEFAULT_TTL else ttl)
    if kind in _URL_KINDS:
        url = item["url"]
        force = item.get("force_download", False)
        if force is not False:
            raise NoForm(path, kind, f"force_download {force!r} has no zigai form (only false)")
        _check_identifier(item, url, path, kind)
        detail = _detail_of(item, path, kind, image=kind == "image-url")
        source = UrlSource(url, item.get("media_type"))
        if kind == "image-url":
            return ImageContent(source, detail=detail)
        return _URL_KINDS[kind](source)
    if kind == "binary":
        data = decode_base64(item["data"], f"{path}.data")
        media_type = item["media_type"]
        _check_identifier(item, data, path, kind)
        typed = next((t for prefix, t in _TYPED_BINARY.items() if media_type.startswith(prefix)), None)
        detail = _detail_of(item, path, kind, image=typed is ImageContent)
        if typed is ImageContent:
            return ImageContent(BytesSource(data, media_type), detail=detail)
        if typed is not None:
            return typed(BytesSource(data, media_type))
        return BinaryContent(data, media_type)
    if kind == "uploaded-file":
        _check_identifier(item, item["file_id"], path, kind)
        _detail_of(item, path, kind, image=False)
        return UploadedFileContent(UploadedFile(item["provider_name"], item["file_id"],
                                                item.get("media_type")))
    raise NoForm(path, kind, f"user content {kind!r} has no zigai form "
                             "(zigai text content carries no metadata; use a plain string)")


# ---- zigai -> PydanticAI ------------------------------------------------------------------------

def binary_from(source: BytesSource, detail: str | None = None) -> dict[str, Any]:
    """A ``binary`` object exactly as the library writes it."""
    return {
        "data": encode_base64(source.data), "media_type": source.media_type,
        "vendor_metadata": None if detail is None else {"detail": detail},
        "kind": "binary", "identifier": derived_identifier(source.data),
    }


def _url_from(kind: str, source: UrlSource, detail: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "url": source.url, "force_download": False,
        "vendor_metadata": None if detail is None else {"detail": detail},
        "kind": kind, "identifier": derived_identifier(source.url),
    }
    if source.media_type is not None:  # else the library infers it from the URL when it writes
        item["media_type"] = source.media_type
    return item


def _typed_media(item: Any, path: str) -> Any:
    source = item.source
    kind = item.kind
    detail = getattr(item, "detail", None)
    if isinstance(item, DocumentContent) and item.title is not None:
        raise NoForm(path, kind, "DocumentContent.title has no PydanticAI form")
    if isinstance(source, UrlSource):
        return _url_from(f"{'image' if kind == 'image' else kind}-url", source, detail)
    if isinstance(source, BytesSource):
        prefix = f"{kind}/"
        if isinstance(item, DocumentContent) or not source.media_type.startswith(prefix):
            raise NoForm(path, kind, f"{type(item).__name__} over bytes of media type "
                                     f"{source.media_type!r} has no distinct PydanticAI form "
                                     "(use BinaryContent, or an image/, audio/ or video/ type)")
        return binary_from(source, detail)
    raise NoForm(path, kind, f"{type(item).__name__} over a {type(source).__name__} has no "
                             "PydanticAI form (use UploadedFileContent for provider files)")


def content_from(item: UserContent, path: str) -> Any:
    """One zigai user-content item as a PydanticAI user-content item."""
    if isinstance(item, TextContent):
        return item.text
    if isinstance(item, CachePoint):
        return {"kind": "cache-point", "ttl": DEFAULT_TTL if item.ttl is None else item.ttl}
    if isinstance(item, (ImageContent, AudioContent, VideoContent, DocumentContent)):
        return _typed_media(item, path)
    if isinstance(item, BinaryContent):
        if item.media_type.startswith(tuple(_TYPED_BINARY)):
            raise NoForm(path, item.kind, f"BinaryContent of media type {item.media_type!r} "
                                          "comes back as typed media; use ImageContent/AudioContent/"
                                          "VideoContent over a BytesSource")
        return binary_from(BytesSource(item.data, item.media_type))
    if isinstance(item, UploadedFileContent):
        file = item.file
        out: dict[str, Any] = {
            "file_id": file.file_id, "provider_name": file.provider_name, "vendor_metadata": None,
            "kind": "uploaded-file", "identifier": derived_identifier(file.file_id),
        }
        if file.media_type is not None:
            out["media_type"] = file.media_type
        return out
    raise NoForm(path, item.kind, f"{type(item).__name__} has no PydanticAI form")
