"""Provider files: inputs, owner-qualified descriptors, owned results and the shared wire helpers.

Job
    The provider-neutral half of ``upload_file`` / ``inspect_file`` / ``download_file`` /
    ``delete_file``: the :class:`ProviderFileInput` an application uploads, the
    :class:`ProviderFile` descriptor every operation returns (always carrying its
    ``provider_name``), the owners :class:`OwnedProviderFile` and
    :class:`OwnedProviderFileDownload`, :class:`ProviderFileLimits`, and the helpers each
    provider module shares: handle checks, path-segment encoding, collision-safe
    ``multipart/form-data`` framing and bounded JSON metadata parsing.  Provider modules choose
    their own endpoints, headers and field mapping.

Invariants
    * Checked before any I/O: the upload's size, filename and multipart metadata against
      :class:`ProviderFileLimits` (exactly at a limit passes, one byte more raises
      :class:`ProviderFileTooLarge`), and every handle: a handle owned by another provider
      raises :class:`ForeignProviderFile`, an empty or unusable id
      :class:`InvalidProviderFileHandle` — neither reaches provider code.
    * A multipart boundary never occurs inside any part: it is random and re-drawn on a
      collision, so the framing cannot be broken by file content.
    * File ids are percent-encoded as one path segment; ``/``, ``\\``, NUL and dot segments are
      refused instead of being encoded into something a server might decode back.
    * Result descriptors are validated before they are returned (a different id, a size that
      contradicts the upload, a missing field): :class:`InvalidProviderFileResponse`.
    * Owners hold copies; after ``close()`` every accessor raises
      :class:`ProviderFileResultClosed`.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from zigai import json as zjson
from zigai._owner import Owner
from zigai.errors import JsonError, ProviderError
from zigai.messages import UploadedFile
from zigai.messages.json_value import FrozenDict, freeze_json, thaw_json

__all__ = [
    "FILE_METADATA_JSON",
    "MAX_FILE_ID_CHARS",
    "ForeignProviderFile",
    "InvalidProviderFileHandle",
    "InvalidProviderFileInput",
    "InvalidProviderFileResponse",
    "OwnedProviderFile",
    "OwnedProviderFileDownload",
    "ProviderFile",
    "ProviderFileError",
    "ProviderFileInput",
    "ProviderFileLimits",
    "ProviderFileResultClosed",
    "ProviderFileTooLarge",
    "UploadSessionRejected",
    "check_handle",
    "check_same_file",
    "check_upload",
    "check_uploaded_size",
    "encode_multipart",
    "encode_path_segment",
    "file_metadata",
    "file_request",
    "frozen_metadata",
    "opt_field",
]

MAX_FILE_ID_CHARS = 1024
"""The longest file id (or Google file URI) a handle may carry."""

_MEDIA_TYPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$")
_PURPOSE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_FIELD_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_VISIBLE = re.compile(r"^[\x21-\x7e]+$")
_FILENAME_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f\"\\/]")
_BOUNDARY_ATTEMPTS = 8


def _json_limits() -> Any:
    from zigai.json import Limits

    return Limits(1024 * 1024, 64 * 1024, 16, 1024)


FILE_METADATA_JSON = _json_limits()
"""JSON limits for one file descriptor or deletion acknowledgement (1 MiB, 64 KiB values,
depth 16, 1024 items): far above any documented descriptor, far below a response body."""


class ProviderFileError(ProviderError):
    """A provider file operation failed locally (input, handle, limit, result or lifetime)."""


class InvalidProviderFileInput(ProviderFileError):
    """An upload's filename, media type, purpose or data is unusable."""


class ProviderFileTooLarge(ProviderFileError):
    """An upload exceeds :class:`ProviderFileLimits` (``limit_name``, ``limit``, ``value``)."""

    def __init__(self, message: str, *, limit_name: str = "", limit: int = 0, value: int = 0) -> None:
        super().__init__(message)
        self.limit_name = limit_name
        self.limit = limit
        self.value = value


class ForeignProviderFile(ProviderFileError):
    """A file handle belongs to another provider (``owner``) than the one asked (``provider``)."""

    def __init__(self, message: str, *, owner: str = "", provider: str = "") -> None:
        super().__init__(message)
        self.owner = owner
        self.provider = provider


class InvalidProviderFileHandle(ProviderFileError):
    """A file handle's id is empty, too long, or cannot name one provider resource."""


class InvalidProviderFileResponse(ProviderFileError):
    """A provider's file descriptor or deletion acknowledgement is malformed or contradicts
    the request (another id, another size, an unconfirmed deletion)."""


class ProviderFileResultClosed(ProviderFileError):
    """An owned provider-file result was used after ``close()``."""


class UploadSessionRejected(ProviderFileError):
    """A resumable-upload session URL is missing, malformed or not on the configured upload
    origin (scheme, host and effective port), so the file content is not sent to it."""


@dataclass(frozen=True, slots=True)
class ProviderFileLimits:
    """Bounds checked before an upload touches the transport.

    ``max_upload_bytes`` bounds the file content; ``max_filename_bytes`` the UTF-8 filename;
    ``max_metadata_bytes`` everything else a multipart body carries (part headers, field
    values and framing).
    """

    max_upload_bytes: int = 512_000_000
    max_filename_bytes: int = 255
    max_metadata_bytes: int = 8 * 1024

    def __post_init__(self) -> None:
        for name in ("max_upload_bytes", "max_filename_bytes", "max_metadata_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ProviderFileLimits.{name} must be a positive int")


@dataclass(frozen=True, slots=True)
class ProviderFileInput:
    """One file to upload: ``filename``, the ``data`` bytes, their ``media_type`` and an
    optional provider ``purpose`` (OpenAI uses ``user_data`` when it is None)."""

    filename: str
    data: bytes
    media_type: str = "application/octet-stream"
    purpose: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.filename, str) or not self.filename.strip():
            raise InvalidProviderFileInput("filename must be a non-empty string")
        if _FILENAME_FORBIDDEN.search(self.filename) or self.filename in (".", ".."):
            raise InvalidProviderFileInput(
                "filename must not contain control characters, quotes, '/' or '\\'"
            )
        if not isinstance(self.data, bytes):
            raise InvalidProviderFileInput("data must be bytes")
        if not isinstance(self.media_type, str) or not _MEDIA_TYPE.match(self.media_type):
            raise InvalidProviderFileInput(
                f"media_type {self.media_type!r} is not a 'type/subtype' media type"
            )
        if self.purpose is not None and (
            not isinstance(self.purpose, str) or not _PURPOSE.match(self.purpose)
        ):
            raise InvalidProviderFileInput(
                f"purpose {self.purpose!r} must be 1-64 lowercase letters, digits, '_', '.' or '-'"
            )

    def __repr__(self) -> str:
        return (f"ProviderFileInput(filename={self.filename!r}, {len(self.data)} bytes, "
                f"media_type={self.media_type!r}, purpose={self.purpose!r})")


@dataclass(frozen=True, slots=True)
class ProviderFile:
    """A provider-stored file as the provider described it, qualified by ``provider_name``.

    ``file_id`` is the handle the provider's requests take (for Google, the file URI).
    ``downloadable`` is what the provider reported (Anthropic marks uploads ``False``), or
    None when it reports nothing.  ``metadata`` is the raw descriptor, frozen.
    """

    provider_name: str
    file_id: str
    filename: str | None = None
    media_type: str | None = None
    size_bytes: int | None = None
    purpose: str | None = None
    created_at: int | str | None = None
    expires_at: int | str | None = None
    status: str | None = None
    downloadable: bool | None = None
    metadata: FrozenDict = FrozenDict()

    def uploaded_file(self) -> UploadedFile:
        """The owner-qualified handle: accepted by inspect/download/delete and usable directly
        as rich prompt content (``UploadedFileContent``)."""
        media = self.media_type if self.media_type and _MEDIA_TYPE.match(self.media_type) else None
        return UploadedFile(self.provider_name, self.file_id, media)

    def metadata_value(self) -> dict[str, Any]:
        value: dict[str, Any] = thaw_json(self.metadata)
        return value


class OwnedProviderFile(Owner):
    """The descriptor ``upload_file``/``inspect_file`` returned; close it after use."""

    __slots__ = ("_value",)

    _closed_error = ProviderFileResultClosed

    def __init__(self, value: ProviderFile) -> None:
        super().__init__()
        self._value: ProviderFile | None = value

    def _release(self) -> None:
        self._value = None

    @property
    def value(self) -> ProviderFile:
        self._check()
        assert self._value is not None
        return self._value

    def uploaded_file(self) -> UploadedFile:
        return self.value.uploaded_file()

    def __repr__(self) -> str:
        return "OwnedProviderFile(closed)" if self._closed else f"OwnedProviderFile({self._value!r})"


class OwnedProviderFileDownload(Owner):
    """Downloaded bytes and their descriptor, released together by ``close()``."""

    __slots__ = ("_value", "_data")

    _closed_error = ProviderFileResultClosed

    def __init__(self, value: ProviderFile, data: bytes) -> None:
        super().__init__()
        if value.size_bytes is not None and value.size_bytes != len(data):
            raise InvalidProviderFileResponse(
                f"downloaded {len(data)} bytes but the descriptor says {value.size_bytes}"
            )
        self._value: ProviderFile | None = value
        self._data: bytes | None = data

    def _release(self) -> None:
        self._value = None
        self._data = None

    @property
    def value(self) -> ProviderFile:
        self._check()
        assert self._value is not None
        return self._value

    @property
    def data(self) -> bytes:
        self._check()
        assert self._data is not None
        return self._data

    def __repr__(self) -> str:
        if self._closed:
            return "OwnedProviderFileDownload(closed)"
        assert self._data is not None
        return f"OwnedProviderFileDownload({self._value!r}, {len(self._data)} bytes)"


# --------------------------------------------------------------------------- checks


def check_upload(file: ProviderFileInput, limits: ProviderFileLimits) -> None:
    """Raise before I/O when ``file`` is not an upload input or exceeds content/name limits."""
    if not isinstance(file, ProviderFileInput):
        raise InvalidProviderFileInput("upload_file takes a ProviderFileInput")
    if len(file.data) > limits.max_upload_bytes:
        raise ProviderFileTooLarge(
            f"{file.filename!r} has {len(file.data)} bytes; the upload limit is "
            f"{limits.max_upload_bytes} (ProviderFileLimits.max_upload_bytes)",
            limit_name="max_upload_bytes", limit=limits.max_upload_bytes, value=len(file.data),
        )
    name_bytes = len(file.filename.encode("utf-8"))
    if name_bytes > limits.max_filename_bytes:
        raise ProviderFileTooLarge(
            f"the filename has {name_bytes} UTF-8 bytes; the limit is "
            f"{limits.max_filename_bytes} (ProviderFileLimits.max_filename_bytes)",
            limit_name="max_filename_bytes", limit=limits.max_filename_bytes, value=name_bytes,
        )


def check_handle(handle: Any, provider_name: str) -> UploadedFile:
    """The :class:`UploadedFile` behind ``handle`` when ``provider_name`` owns it.

    Accepts an ``UploadedFile``, a :class:`ProviderFile` or an :class:`OwnedProviderFile`.
    """
    if isinstance(handle, (ProviderFile, OwnedProviderFile)):
        handle = handle.uploaded_file()
    if not isinstance(handle, UploadedFile):
        raise InvalidProviderFileHandle(
            f"expected an UploadedFile handle, got {type(handle).__name__}"
        )
    if handle.provider_name != provider_name:
        raise ForeignProviderFile(
            f"file {handle.file_id!r} belongs to {handle.provider_name!r}, not {provider_name!r}",
            owner=handle.provider_name, provider=provider_name,
        )
    if not handle.file_id or len(handle.file_id) > MAX_FILE_ID_CHARS or not _VISIBLE.match(
        handle.file_id
    ):
        raise InvalidProviderFileHandle(
            f"a {provider_name} file handle needs a non-empty id of at most {MAX_FILE_ID_CHARS} "
            "visible ASCII characters"
        )
    return handle


def encode_path_segment(value: str) -> str:
    """``value`` percent-encoded as exactly one URL path segment.

    Raises :class:`InvalidProviderFileHandle` for empty values, dot segments and values with
    ``/``, ``\\`` or NUL, which no file id legitimately contains.
    """
    if not isinstance(value, str) or not value or value in (".", ".."):
        raise InvalidProviderFileHandle(f"{value!r} cannot be a path segment")
    if any(c in value for c in "/\\\x00"):
        raise InvalidProviderFileHandle(f"file id {value!r} contains '/', '\\' or NUL")
    return quote(value, safe="-._~")


# --------------------------------------------------------------------------- multipart


def _disposition(name: str, filename: str | None) -> bytes:
    text = f'Content-Disposition: form-data; name="{name}"'
    if filename is not None:
        text += f'; filename="{filename}"'
    return text.encode("utf-8")


def encode_multipart(
    fields: Sequence[tuple[str, str]],
    file_field: str,
    file: ProviderFileInput,
    limits: ProviderFileLimits,
    *,
    boundary: str | None = None,
) -> tuple[str, bytes]:
    """``(content_type, body)`` of a ``multipart/form-data`` body: ``fields`` in order, then
    the file part.

    The boundary is random (``zigai-`` plus 32 hex digits) and re-drawn while it occurs in any
    part; a caller-supplied ``boundary`` that collides raises :class:`InvalidProviderFileInput`.
    Everything but the file content counts against ``limits.max_metadata_bytes``.
    """
    check_upload(file, limits)
    heads: list[tuple[bytes, bytes]] = []
    for name, value in fields:
        if not _FIELD_NAME.match(name) or not isinstance(value, str) or "\r" in value or "\n" in value:
            raise InvalidProviderFileInput(f"multipart field {name!r} is not a simple text field")
        heads.append((_disposition(name, None), value.encode("utf-8")))
    if not _FIELD_NAME.match(file_field):
        raise InvalidProviderFileInput(f"multipart file field {file_field!r} is not a simple name")
    file_head = _disposition(file_field, file.filename) + b"\r\nContent-Type: " + file.media_type.encode()
    contents = [encoded for _, encoded in heads] + [file.data]
    chosen = boundary
    for _ in range(_BOUNDARY_ATTEMPTS):
        candidate = chosen if chosen is not None else f"zigai-{secrets.token_hex(16)}"
        marker = candidate.encode("ascii")
        framing = [h for h, _ in heads] + [file_head]
        if not any(marker in part for part in contents) and not any(marker in h for h in framing):
            break
        if chosen is not None:
            raise InvalidProviderFileInput("the given multipart boundary occurs inside a part")
    else:  # pragma: no cover - 8 collisions of 128 random bits
        raise InvalidProviderFileInput("could not choose a multipart boundary")
    dash = b"--" + marker
    pieces: list[bytes] = []
    for head, encoded in heads:
        pieces += [dash, b"\r\n", head, b"\r\n\r\n", encoded, b"\r\n"]
    pieces += [dash, b"\r\n", file_head, b"\r\n\r\n"]
    metadata = sum(len(p) for p in pieces) + len(dash) + 6
    if metadata > limits.max_metadata_bytes:
        raise ProviderFileTooLarge(
            f"the multipart metadata needs {metadata} bytes; the limit is "
            f"{limits.max_metadata_bytes} (ProviderFileLimits.max_metadata_bytes)",
            limit_name="max_metadata_bytes", limit=limits.max_metadata_bytes, value=metadata,
        )
    body = b"".join(pieces) + file.data + b"\r\n" + dash + b"--\r\n"
    return f"multipart/form-data; boundary={candidate}", body


# --------------------------------------------------------------------------- responses


def file_metadata(body: bytes, what: str) -> dict[str, Any]:
    """One JSON object (a file descriptor or a deletion acknowledgement), bounded by
    :data:`FILE_METADATA_JSON`; anything else raises :class:`InvalidProviderFileResponse`."""
    try:
        value = zjson.parse(body, FILE_METADATA_JSON)
    except JsonError as exc:
        raise InvalidProviderFileResponse(f"{what} is not bounded JSON: {exc}") from None
    if not isinstance(value, dict):
        raise InvalidProviderFileResponse(f"{what} is not a JSON object")
    return value


def frozen_metadata(value: dict[str, Any], what: str) -> FrozenDict:
    """The raw descriptor, frozen (already bounded by :data:`FILE_METADATA_JSON`)."""
    frozen: FrozenDict = freeze_json(value, InvalidProviderFileResponse)
    return frozen


def check_uploaded_size(value: ProviderFile, file: ProviderFileInput, what: str) -> None:
    """Refuse a descriptor whose reported size contradicts the bytes just uploaded."""
    if value.size_bytes is not None and value.size_bytes != len(file.data):
        raise InvalidProviderFileResponse(
            f"{what} reports {value.size_bytes} bytes for a {len(file.data)}-byte upload"
        )


def check_same_file(value: ProviderFile, requested_id: str, what: str) -> None:
    """Refuse a descriptor of another file than the one requested."""
    if value.file_id != requested_id:
        raise InvalidProviderFileResponse(
            f"{what} describes {value.file_id!r}, not the requested {requested_id!r}"
        )


def opt_field(value: dict[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    """``value[key]`` when absent/None or of ``kind`` (``bool`` is not an ``int`` here);
    otherwise :class:`InvalidProviderFileResponse`."""
    item = value.get(key)
    if item is None:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(item, kinds) or (isinstance(item, bool) and bool not in kinds):
        raise InvalidProviderFileResponse(f"{what}: {zjson.wrong_type(key, item, kinds)}")
    return item


def file_request(
    path: str,
    *,
    method: str = "GET",
    headers: tuple[tuple[str, str], ...] = (),
    body: bytes | None = None,
    json_body: Any = None,
    control: Any = None,
    deadline: float | None = None,
    response_header_sink: Any = None,
) -> Any:
    """The :class:`~zigai.provider.ProviderHttpRequest` of one file operation."""
    from zigai.provider.http_request import ProviderHttpRequest

    return ProviderHttpRequest(
        path, json_body=json_body, method=method, headers=headers, body=body, control=control,
        deadline=deadline, response_header_sink=response_header_sink,
    )
