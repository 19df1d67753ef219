"""Anthropic Files API: upload, inspect, download and delete through the Anthropic provider.

Endpoints (relative to the API root): ``POST files`` (``multipart/form-data`` with one
``file`` part), ``GET files/{id}``, ``GET files/{id}/content`` and ``DELETE files/{id}``.  Every
request carries ``anthropic-version`` and the Files API beta header.  The API takes no
purpose, so an input that names one is refused before I/O.  Descriptors report
``downloadable``: files a caller uploaded are ``false`` (only files a tool generated can be
downloaded), and the application reads that flag before asking for content.

Invariants: limits and handles are checked before I/O; ids are percent-encoded as one path
segment; descriptors must be ``type: "file"`` for the requested id (and the uploaded size);
deletion must be acknowledged with ``type: "file_deleted"`` for the same id.
"""

from __future__ import annotations

from typing import Any

from zigai.control import RunControl
from zigai.provider.files import (
    InvalidProviderFileInput,
    InvalidProviderFileResponse,
    OwnedProviderFile,
    OwnedProviderFileDownload,
    ProviderFile,
    ProviderFileInput,
    ProviderFileLimits,
    check_handle,
    check_same_file,
    check_upload,
    check_uploaded_size,
    encode_multipart,
    encode_path_segment,
    file_metadata,
    file_request,
    frozen_metadata,
    opt_field,
)

__all__ = ["DEFAULT_FILE_LIMITS", "delete_file", "download_file", "inspect_file", "upload_file"]

DEFAULT_FILE_LIMITS = ProviderFileLimits(max_upload_bytes=500_000_000)
"""Anthropic documents 500 MB per uploaded file."""


def _descriptor(provider_name: str, value: dict[str, Any], what: str) -> ProviderFile:
    file_id = value.get("id")
    if not isinstance(file_id, str) or not file_id:
        raise InvalidProviderFileResponse(f"{what} has no file 'id'")
    if value.get("type") != "file":
        raise InvalidProviderFileResponse(f"{what}: 'type' is {value.get('type')!r}, not 'file'")
    size = opt_field(value, "size_bytes", int, what)
    if size is not None and size < 0:
        raise InvalidProviderFileResponse(f"{what}: 'size_bytes' is negative")
    return ProviderFile(
        provider_name=provider_name,
        file_id=file_id,
        filename=opt_field(value, "filename", str, what),
        media_type=opt_field(value, "mime_type", str, what),
        size_bytes=size,
        created_at=opt_field(value, "created_at", str, what),
        downloadable=opt_field(value, "downloadable", bool, what),
        metadata=frozen_metadata(value, what),
    )


def upload_file(provider: Any, file: ProviderFileInput, limits: ProviderFileLimits,
                headers: tuple[tuple[str, str], ...], *, control: RunControl | None,
                deadline: float | None) -> OwnedProviderFile:
    check_upload(file, limits)
    if file.purpose is not None:
        raise InvalidProviderFileInput(
            "Anthropic's Files API takes no purpose; leave ProviderFileInput.purpose None"
        )
    content_type, body = encode_multipart([], "file", file, limits)
    response = provider.send(file_request(
        "files", method="POST", headers=(*headers, ("Content-Type", content_type)), body=body,
        control=control, deadline=deadline,
    ))
    what = f"{provider.name} upload response"
    value = _descriptor(provider.name, file_metadata(response.body, what), what)
    check_uploaded_size(value, file, what)
    return OwnedProviderFile(value)


def inspect_file(provider: Any, handle: Any, headers: tuple[tuple[str, str], ...], *,
                 control: RunControl | None, deadline: float | None) -> OwnedProviderFile:
    uploaded = check_handle(handle, provider.name)
    response = provider.send(file_request(
        f"files/{encode_path_segment(uploaded.file_id)}", headers=headers, control=control,
        deadline=deadline,
    ))
    what = f"{provider.name} file descriptor"
    value = _descriptor(provider.name, file_metadata(response.body, what), what)
    check_same_file(value, uploaded.file_id, what)
    return OwnedProviderFile(value)


def download_file(provider: Any, handle: Any, headers: tuple[tuple[str, str], ...], *,
                  control: RunControl | None, deadline: float | None) -> OwnedProviderFileDownload:
    uploaded = check_handle(handle, provider.name)
    response = provider.send(file_request(
        f"files/{encode_path_segment(uploaded.file_id)}/content",
        headers=(*headers, ("Accept", "*/*")), control=control, deadline=deadline,
    ))
    descriptor = ProviderFile(provider.name, uploaded.file_id, media_type=uploaded.media_type,
                              size_bytes=len(response.body), downloadable=True)
    return OwnedProviderFileDownload(descriptor, response.body)


def delete_file(provider: Any, handle: Any, headers: tuple[tuple[str, str], ...], *,
                control: RunControl | None, deadline: float | None) -> None:
    uploaded = check_handle(handle, provider.name)
    response = provider.send(file_request(
        f"files/{encode_path_segment(uploaded.file_id)}", method="DELETE", headers=headers,
        control=control, deadline=deadline,
    ))
    what = f"{provider.name} deletion acknowledgement"
    value = file_metadata(response.body, what)
    if value.get("type") != "file_deleted" or value.get("id") != uploaded.file_id:
        raise InvalidProviderFileResponse(
            f"{what} does not confirm that {uploaded.file_id!r} was deleted"
        )
