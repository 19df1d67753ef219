"""OpenAI Files API: upload, inspect, download and delete through the OpenAI provider.

Endpoints (relative to the API root): ``POST files`` (``multipart/form-data`` with ``purpose``
then ``file``), ``GET files/{id}``, ``GET files/{id}/content`` and ``DELETE files/{id}``.
The purpose defaults to ``user_data`` when the input names none.  The API permits content
download only for some purposes (fine-tuning inputs, for example); other files answer with
the provider's normal error.

Invariants: limits and handles are checked before I/O (:mod:`zigai.provider.files`); ids are
percent-encoded as one path segment; every descriptor is validated against the request (same
id, the uploaded size and purpose) and deletion must be confirmed with ``deleted: true`` for
the same id.
"""

from __future__ import annotations

from typing import Any

from zigai.control import RunControl
from zigai.provider.files import (
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

__all__ = ["DEFAULT_FILE_LIMITS", "DEFAULT_PURPOSE", "delete_file", "download_file",
           "inspect_file", "upload_file"]

DEFAULT_PURPOSE = "user_data"
DEFAULT_FILE_LIMITS = ProviderFileLimits(max_upload_bytes=512_000_000)
"""OpenAI documents 512 MB per uploaded file."""


def _descriptor(provider_name: str, value: dict[str, Any], what: str,
                media_type: str | None = None) -> ProviderFile:
    file_id = value.get("id")
    if not isinstance(file_id, str) or not file_id:
        raise InvalidProviderFileResponse(f"{what} has no file 'id'")
    if value.get("object", "file") != "file":
        raise InvalidProviderFileResponse(f"{what}: 'object' is {value.get('object')!r}, not 'file'")
    size = opt_field(value, "bytes", int, what)
    if size is not None and size < 0:
        raise InvalidProviderFileResponse(f"{what}: 'bytes' is negative")
    return ProviderFile(
        provider_name=provider_name,
        file_id=file_id,
        filename=opt_field(value, "filename", str, what),
        media_type=media_type,
        size_bytes=size,
        purpose=opt_field(value, "purpose", str, what),
        created_at=opt_field(value, "created_at", int, what),
        expires_at=opt_field(value, "expires_at", int, what),
        status=opt_field(value, "status", str, what),
        metadata=frozen_metadata(value, what),
    )


def upload_file(provider: Any, file: ProviderFileInput, limits: ProviderFileLimits, *,
                control: RunControl | None, deadline: float | None) -> OwnedProviderFile:
    check_upload(file, limits)
    purpose = file.purpose if file.purpose is not None else DEFAULT_PURPOSE
    content_type, body = encode_multipart([("purpose", purpose)], "file", file, limits)
    response = provider.send(file_request(
        "files", method="POST", headers=(("Content-Type", content_type),), body=body,
        control=control, deadline=deadline,
    ))
    what = f"{provider.name} upload response"
    value = _descriptor(provider.name, file_metadata(response.body, what), what, file.media_type)
    check_uploaded_size(value, file, what)
    if value.purpose is not None and value.purpose != purpose:
        raise InvalidProviderFileResponse(f"{what} reports purpose {value.purpose!r}, not {purpose!r}")
    return OwnedProviderFile(value)


def inspect_file(provider: Any, handle: Any, *, control: RunControl | None,
                 deadline: float | None) -> OwnedProviderFile:
    uploaded = check_handle(handle, provider.name)
    response = provider.send(file_request(
        f"files/{encode_path_segment(uploaded.file_id)}", control=control, deadline=deadline,
    ))
    what = f"{provider.name} file descriptor"
    value = _descriptor(provider.name, file_metadata(response.body, what), what,
                        uploaded.media_type)
    check_same_file(value, uploaded.file_id, what)
    return OwnedProviderFile(value)


def download_file(provider: Any, handle: Any, *, control: RunControl | None,
                  deadline: float | None) -> OwnedProviderFileDownload:
    uploaded = check_handle(handle, provider.name)
    response = provider.send(file_request(
        f"files/{encode_path_segment(uploaded.file_id)}/content", headers=(("Accept", "*/*"),),
        control=control, deadline=deadline,
    ))
    descriptor = ProviderFile(provider.name, uploaded.file_id, media_type=uploaded.media_type,
                              size_bytes=len(response.body))
    return OwnedProviderFileDownload(descriptor, response.body)


def delete_file(provider: Any, handle: Any, *, control: RunControl | None,
                deadline: float | None) -> None:
    uploaded = check_handle(handle, provider.name)
    response = provider.send(file_request(
        f"files/{encode_path_segment(uploaded.file_id)}", method="DELETE", control=control,
        deadline=deadline,
    ))
    what = f"{provider.name} deletion acknowledgement"
    value = file_metadata(response.body, what)
    if value.get("deleted") is not True or value.get("id", uploaded.file_id) != uploaded.file_id:
        raise InvalidProviderFileResponse(
            f"{what} does not confirm that {uploaded.file_id!r} was deleted"
        )
