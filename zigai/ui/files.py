"""Files a browser attaches to a user message, checked before they become ``UserContent``.

Job
    Turn one attached file — a Vercel ``file`` part (``mediaType`` + ``url``) or an AG-UI
    ``image`` / ``document`` part (``source`` of type ``data`` or ``url``) — into
    :class:`~zigai.messages.ImageContent` or :class:`~zigai.messages.DocumentContent`.

Invariants
    * Only the media types in :class:`FileLimits` are accepted; inline bytes must start the
      way their declared type does (PNG, JPEG, GIF, WebP and PDF signatures; UTF-8 for
      ``text/plain``), and a ``data:`` URL's own type must equal the declared one.
    * Inline bytes are bounded before they are decoded (``max_file_bytes``), and a message
      carries at most ``max_files`` files.
    * A URL is kept, never fetched here: it must be ``https`` (or what the app's
      :class:`~zigai.security.UrlPolicy` allows) and pass that policy, so the provider or
      adapter that later fetches it gets a URL the operator allowed.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

from zigai.messages import BytesSource, DocumentContent, ImageContent, UrlSource
from zigai.security import SecurityError, UrlPolicy
from zigai.ui.trust import ClientMessagesTooLarge, InvalidClientMessages

__all__ = ["DEFAULT_MEDIA_TYPES", "FileLimits", "agui_file", "client_file", "vercel_file"]

DEFAULT_MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp",
                                 "application/pdf", "text/plain"})
_SIGNATURES = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "application/pdf": (b"%PDF-",),
}


@dataclass(frozen=True, slots=True)
class FileLimits:
    """Which files a browser may attach, how large, how many per message, and URL rules."""

    media_types: frozenset[str] = DEFAULT_MEDIA_TYPES
    max_file_bytes: int = 2 * 1024 * 1024
    max_files: int = 8
    url_policy: UrlPolicy = field(default_factory=UrlPolicy)


def _looks_like(data: bytes, media_type: str) -> bool:
    if media_type == "image/webp":
        return data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    if media_type == "text/plain":
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True
    signatures = _SIGNATURES.get(media_type)
    return signatures is None or data.startswith(signatures)


def _decode(encoded: str, media_type: str, where: str, limits: FileLimits) -> bytes:
    if len(encoded) > (limits.max_file_bytes + 2) // 3 * 4:
        raise ClientMessagesTooLarge(f"{where} is over {limits.max_file_bytes} bytes")
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidClientMessages(f"{where}: the inline data is not valid base64") from None
    if len(data) > limits.max_file_bytes:
        raise ClientMessagesTooLarge(f"{where} is {len(data)} bytes; the limit is {limits.max_file_bytes}")
    if not _looks_like(data, media_type):
        raise InvalidClientMessages(f"{where}: the bytes are not {media_type}")
    return data


def client_file(media_type: Any, *, where: str, limits: FileLimits, data: str | None = None,
                url: str | None = None, filename: Any = None) -> Any:
    """One attached file as ``ImageContent`` / ``DocumentContent`` (see module docs)."""
    if not isinstance(media_type, str):
        raise InvalidClientMessages(f"{where} needs a media type")
    media_type = media_type.split(";")[0].strip().lower()
    if media_type not in limits.media_types:
        raise InvalidClientMessages(f"{where}: media type {media_type!r} is not accepted "
                                    f"(accepted: {', '.join(sorted(limits.media_types))})")
    title = filename if isinstance(filename, str) and filename else None
    source: Any
    if data is not None:
        source = BytesSource(_decode(data, media_type, where, limits), media_type)
    elif isinstance(url, str) and url.startswith("data:"):
        header, comma, payload = url[5:].partition(",")
        declared, *params = header.split(";")
        if not comma or "base64" not in params:
            raise InvalidClientMessages(f"{where}: a data URL must be base64 (data:<type>;base64,...)")
        if declared.strip().lower() != media_type:
            raise InvalidClientMessages(f"{where}: the data URL says {declared!r}, the part says {media_type!r}")
        source = BytesSource(_decode(payload, media_type, where, limits), media_type)
    elif isinstance(url, str):
        try:
            limits.url_policy.check(url)
        except SecurityError as exc:
            raise InvalidClientMessages(f"{where}: the file URL is refused: {exc}") from None
        source = UrlSource(url, media_type)
    else:
        raise InvalidClientMessages(f"{where} needs a url (data: or https:) or inline data")
    if media_type.startswith("image/"):
        return ImageContent(source)
    return DocumentContent(source, title)


def vercel_file(part: dict[str, Any], where: str, limits: FileLimits) -> Any:
    """A Vercel UI ``file`` part: ``{type: "file", mediaType, url, filename?}``."""
    url = part.get("url")
    if not isinstance(url, str):
        raise InvalidClientMessages(f"{where} needs a url string")
    return client_file(part.get("mediaType"), where=where, limits=limits, url=url,
                       filename=part.get("filename"))


def agui_file(part: dict[str, Any], where: str, limits: FileLimits) -> Any:
    """An AG-UI ``image`` / ``document`` part whose ``source`` is ``data`` or ``url``."""
    source = part.get("source")
    if not isinstance(source, dict) or source.get("type") not in ("data", "url") \
            or not isinstance(source.get("value"), str):
        raise InvalidClientMessages(f"{where}.source must be a data or url source with a string value")
    metadata = part.get("metadata")
    filename = metadata.get("filename") if isinstance(metadata, dict) else None
    media_type = source.get("mimeType")
    if source["type"] == "data":
        return client_file(media_type, where=where, limits=limits, data=source["value"], filename=filename)
    return client_file(media_type, where=where, limits=limits, url=source["value"], filename=filename)
