"""The provider-file redactions of the conformance recorder, as shared cassette filters.

File recordings do not keep what changes on every run or must not be stored:

* the ``multipart/form-data`` boundary becomes :data:`REDACTED_BOUNDARY`;
* the content of the file part (and the whole body of a resumable-upload ``upload`` command)
  becomes :data:`REDACTED_CONTENT`;
* a resumable-upload session URL (an upload URL with an ``upload_id`` query) becomes the
  upload collection path plus ``/REDACTED``.

:func:`file_filters` applies exactly these to the request being matched or recorded and
nothing else.  A multipart body is first parsed strictly (CRLF framing, every part with a
header block, the boundary taken from the request's own ``Content-Type``); only a body that
parses is rewritten, so malformed framing still fails the match.  The recorder writes the body
as a YAML literal block, whose line breaks stand for the CRLF pairs of the wire form; the
rewritten form uses ``\\n`` accordingly.  Field values other than the file part are kept
verbatim and must be single-line.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit, urlunsplit

from support.cassettes import CassetteFilters
from zigai.transport import TransportRequest

__all__ = [
    "REDACTED_BOUNDARY",
    "REDACTED_CONTENT",
    "REDACTED_SESSION",
    "file_filters",
    "redact_file_body",
    "redact_session_url",
]

REDACTED_BOUNDARY = "zigai-redacted-boundary"
REDACTED_CONTENT = "[REDACTED FILE CONTENT]"
REDACTED_SESSION = "REDACTED"
_BOUNDARY = re.compile(r"^multipart/form-data;\s*boundary=([0-9A-Za-z'()+_,\-./:=?]{1,70})$")


def _header(request: TransportRequest, name: str) -> str | None:
    values = [v for k, v in request.headers if k.lower() == name]
    return values[0] if len(values) == 1 else None


def _multipart(body: bytes, boundary: str) -> bytes | None:
    dash = b"--" + boundary.encode("ascii")
    opening, closing = dash + b"\r\n", b"\r\n" + dash + b"--\r\n"
    if not body.startswith(opening) or not body.endswith(closing):
        return None
    inner = body[len(opening):len(body) - len(closing)]
    parts = []
    for part in inner.split(b"\r\n" + dash + b"\r\n"):
        head, separator, content = part.partition(b"\r\n\r\n")
        if not separator or not head:
            return None
        lines = head.split(b"\r\n")
        if any(b"\n" in line or b"\r" in line for line in lines):
            return None
        disposition = [line for line in lines if line.lower().startswith(b"content-disposition:")]
        if len(disposition) != 1:
            return None
        if b"filename=" in disposition[0]:
            content = REDACTED_CONTENT.encode()
        elif b"\r" in content or b"\n" in content:
            return None
        parts.append(b"\n".join(lines) + b"\n\n" + content)
    marker = b"--" + REDACTED_BOUNDARY.encode()
    return marker + b"\n" + (b"\n" + marker + b"\n").join(parts) + b"\n" + marker + b"--\n"


def redact_file_body(request: TransportRequest) -> bytes | None:
    """The request body as a file recording keeps it (unchanged when no redaction applies)."""
    body = request.body
    if body is None:
        return None
    content_type = _header(request, "content-type")
    match = _BOUNDARY.match(content_type) if content_type is not None else None
    if match is not None:
        redacted = _multipart(body, match.group(1))
        return body if redacted is None else redacted
    command = _header(request, "x-goog-upload-command")
    if command is not None and "upload" in [c.strip() for c in command.split(",")]:
        return REDACTED_CONTENT.encode()
    return body


def redact_session_url(url: str) -> str:
    """An upload session URL (``...?upload_id=...``) as the recording names it."""
    parts = urlsplit(url)
    if "upload_id" not in parse_qs(parts.query) or "/upload/" not in parts.path:
        return url
    return urlunsplit((parts.scheme, parts.netloc, f"{parts.path}/{REDACTED_SESSION}", "", ""))


def file_filters() -> CassetteFilters:
    """The shared recording/replay filters of provider-file cassettes."""
    return CassetteFilters(url=redact_session_url, request_body=redact_file_body)
