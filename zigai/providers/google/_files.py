"""Gemini Files API (Google AI Studio): resumable upload, inspect and delete.

Upload is Google's two-step resumable protocol on the *upload* root (default
``https://generativelanguage.googleapis.com/upload/v1beta``), a separate authenticated
configuration from the inference root:

1. ``POST files`` with ``X-Goog-Upload-Protocol: resumable``, ``X-Goog-Upload-Command: start``,
   the content length and type as ``X-Goog-Upload-Header-*`` and the JSON body
   ``{"file": {"display_name": ...}}``.  The session URL comes back in the
   ``X-Goog-Upload-URL`` response header, which a borrowed response-header sink copies while
   the response head is open (adapters only ever see it redacted).
2. ``POST <session URL>`` with ``X-Goog-Upload-Command: upload, finalize``,
   ``X-Goog-Upload-Offset: 0`` and the bytes; the answer is ``{"file": {...}}``.

The session URL is used only when its scheme, host and effective port equal the configured
upload root's (:class:`~zigai.provider.files.UploadSessionRejected` otherwise).  Inspect and
delete are ``GET``/``DELETE files/{name}`` on the inference root.  The handle's id is the
file ``uri`` Gemini requests reference.  Download stays unsupported: the Gemini Files API does
not let clients download stored files.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from zigai.control import RunControl
from zigai.provider.files import (
    InvalidProviderFileHandle,
    InvalidProviderFileInput,
    InvalidProviderFileResponse,
    OwnedProviderFile,
    ProviderFile,
    ProviderFileInput,
    ProviderFileLimits,
    UploadSessionRejected,
    check_handle,
    check_upload,
    check_uploaded_size,
    encode_path_segment,
    file_metadata,
    file_request,
    frozen_metadata,
    opt_field,
)
from zigai.transport.base import ResponseHeaderView

__all__ = [
    "DEFAULT_FILE_LIMITS",
    "UPLOAD_BASE",
    "delete_file",
    "inspect_file",
    "same_origin",
    "upload_file",
]

UPLOAD_BASE = "https://generativelanguage.googleapis.com/upload/v1beta"
DEFAULT_FILE_LIMITS = ProviderFileLimits(max_upload_bytes=2_000_000_000)
"""Google documents 2 GB per file."""
MAX_SESSION_URL_CHARS = 4096
_NAME = re.compile(r"^files/([a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?)$")
_DEFAULT_PORTS = {"https": 443, "http": 80}


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = -1  # an unparsable port never equals a configured one
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), port if port is not None else _DEFAULT_PORTS.get(scheme)


def same_origin(url: str, root: str) -> bool:
    """True when ``url`` has the scheme, host and effective port of ``root``."""
    return _origin(url) == _origin(root)


class _SessionUrl:
    """The response-header sink of the start request: copies one bounded session URL."""

    def __init__(self) -> None:
        self.value: str | None = None
        self.problem: str | None = None

    def __call__(self, view: ResponseHeaderView) -> None:
        values = view.get_all("x-goog-upload-url")
        if len(values) != 1:
            self.problem = f"{len(values)} X-Goog-Upload-URL headers"
        elif len(values[0]) > MAX_SESSION_URL_CHARS:
            self.problem = f"an X-Goog-Upload-URL longer than {MAX_SESSION_URL_CHARS} characters"
        else:
            self.value = values[0]


def _descriptor(provider_name: str, value: dict[str, Any], what: str) -> ProviderFile:
    name = value.get("name")
    if not isinstance(name, str) or _NAME.match(name) is None:
        raise InvalidProviderFileResponse(f"{what}: 'name' is not a files/<id> resource name")
    uri = value.get("uri")
    if not isinstance(uri, str) or not uri.endswith("/" + name) or urlsplit(uri).scheme not in _DEFAULT_PORTS:
        raise InvalidProviderFileResponse(f"{what}: 'uri' is not the URI of {name!r}")
    size_text = opt_field(value, "sizeBytes", str, what)
    if size_text is not None and not size_text.isdigit():
        raise InvalidProviderFileResponse(f"{what}: 'sizeBytes' is not a decimal count")
    return ProviderFile(
        provider_name=provider_name,
        file_id=uri,
        filename=opt_field(value, "displayName", str, what),
        media_type=opt_field(value, "mimeType", str, what),
        size_bytes=None if size_text is None else int(size_text),
        created_at=opt_field(value, "createTime", str, what),
        expires_at=opt_field(value, "expirationTime", str, what),
        status=opt_field(value, "state", str, what),
        downloadable=False,
        metadata=frozen_metadata(value, what),
    )


def file_path(uploaded_id: str, api_root: str) -> str:
    """``files/<id>`` for a handle holding a file URI on ``api_root``'s origin (or the bare
    ``files/<id>`` resource name)."""
    name = uploaded_id
    if "://" in uploaded_id:
        if not same_origin(uploaded_id, api_root):
            raise InvalidProviderFileHandle(
                f"file URI {uploaded_id!r} is not on the provider's API origin"
            )
        path = urlsplit(uploaded_id).path
        name = "files/" + path.rsplit("/files/", 1)[-1] if "/files/" in path else path
        if urlsplit(uploaded_id).query or urlsplit(uploaded_id).fragment:
            raise InvalidProviderFileHandle(f"file URI {uploaded_id!r} carries a query or fragment")
    match = _NAME.match(name)
    if match is None:
        raise InvalidProviderFileHandle(f"{uploaded_id!r} does not name a Gemini file")
    return "files/" + encode_path_segment(match.group(1))


def upload_file(provider: Any, upload: Any, upload_root: str, upload_prefix: str,
                file: ProviderFileInput, limits: ProviderFileLimits, *,
                control: RunControl | None, deadline: float | None) -> OwnedProviderFile:
    """Start a resumable session on ``upload`` (rooted at the upload origin), then send the
    bytes to the session URL it returned."""
    check_upload(file, limits)
    if file.purpose is not None:
        raise InvalidProviderFileInput(
            "the Gemini Files API takes no purpose; leave ProviderFileInput.purpose None"
        )
    session = _SessionUrl()
    upload.send(file_request(
        upload_prefix + "files", method="POST",
        headers=(
            ("X-Goog-Upload-Protocol", "resumable"),
            ("X-Goog-Upload-Command", "start"),
            ("X-Goog-Upload-Header-Content-Length", str(len(file.data))),
            ("X-Goog-Upload-Header-Content-Type", file.media_type),
        ),
        json_body={"file": {"display_name": file.filename}},
        control=control, deadline=deadline, response_header_sink=session,
    ))
    if session.value is None:
        raise UploadSessionRejected(
            f"{provider.name} did not return one usable upload session URL "
            f"({session.problem or 'no X-Goog-Upload-URL header'})"
        )
    url = session.value
    parts = urlsplit(url)
    if not same_origin(url, upload_root) or parts.fragment or not parts.path.startswith("/"):
        raise UploadSessionRejected(
            f"{provider.name} returned an upload session URL outside the configured upload "
            "origin; the file content was not sent"
        )
    relative = parts.path[1:] + (f"?{parts.query}" if parts.query else "")
    response = upload.send(file_request(
        relative, method="POST",
        headers=(("X-Goog-Upload-Command", "upload, finalize"), ("X-Goog-Upload-Offset", "0")),
        body=file.data, control=control, deadline=deadline,
    ))
    what = f"{provider.name} upload response"
    envelope = file_metadata(response.body, what)
    inner = envelope.get("file")
    if not isinstance(inner, dict):
        raise InvalidProviderFileResponse(f"{what} has no 'file' object")
    value = _descriptor(provider.name, inner, what)
    check_uploaded_size(value, file, what)
    return OwnedProviderFile(value)


def inspect_file(provider: Any, handle: Any, *, control: RunControl | None,
                 deadline: float | None) -> OwnedProviderFile:
    uploaded = check_handle(handle, provider.name)
    path = file_path(uploaded.file_id, provider.api_root)
    response = provider.send(file_request(path, control=control, deadline=deadline))
    what = f"{provider.name} file descriptor"
    value = _descriptor(provider.name, file_metadata(response.body, what), what)
    if file_path(value.file_id, value.file_id) != path:
        raise InvalidProviderFileResponse(f"{what} describes another file than {path!r}")
    return OwnedProviderFile(value)


def delete_file(provider: Any, handle: Any, *, control: RunControl | None,
                deadline: float | None) -> None:
    uploaded = check_handle(handle, provider.name)
    path = file_path(uploaded.file_id, provider.api_root)
    response = provider.send(file_request(path, method="DELETE", control=control,
                                          deadline=deadline))
    what = f"{provider.name} deletion acknowledgement"
    if file_metadata(response.body, what) != {}:
        raise InvalidProviderFileResponse(f"{what} is not the documented empty object")
