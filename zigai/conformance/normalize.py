"""The named request normalizations a scenario may ask for (never applied unless named).

Job
    Map a live request (URL target, headers, body) to the form a recording keeps, for the few
    things a recorder must not store or that change on every run:

    ``multipart_redaction``
        A ``multipart/form-data`` body (boundary taken from the request's own
        ``Content-Type``) is parsed strictly (CRLF framing, a header block per part); its
        boundary becomes :data:`REDACTED_BOUNDARY`, the content of the part that carries a
        ``filename`` becomes :data:`REDACTED_CONTENT`, and CRLF pairs become ``\\n`` (the line
        breaks of the YAML literal block).  A body with ``X-Goog-Upload-Command: upload`` is
        replaced by :data:`REDACTED_CONTENT` as a whole.  A body that does not parse is left as
        it is, so broken framing still fails the comparison.
    ``upload_session_url``
        An upload session target (``/upload/...?...upload_id=...``) becomes the upload path plus
        ``/REDACTED``.

Invariants
    Normalizations touch only the copy being compared, and only when the scenario names them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import parse_qs, urlsplit, urlunsplit

__all__ = ["NORMALIZATIONS", "REDACTED_BOUNDARY", "REDACTED_CONTENT", "normalize_body", "normalize_target",
           "redact_multipart", "redact_session_url"]

REDACTED_BOUNDARY = "zigai-redacted-boundary"
REDACTED_CONTENT = "[REDACTED FILE CONTENT]"
NORMALIZATIONS = frozenset({"multipart_redaction", "upload_session_url"})
_BOUNDARY = re.compile(r"^multipart/form-data;\s*boundary=([0-9A-Za-z'()+_,\-./:=?]{1,70})$")


def _header(headers: Sequence[tuple[str, str]], name: str) -> str | None:
    values = [v for k, v in headers if k.lower() == name]
    return values[0] if len(values) == 1 else None


def redact_multipart(body: bytes, boundary: str) -> bytes | None:
    """The recorded form of a multipart body, or None when its framing does not parse."""
    dash = b"--" + boundary.encode("ascii")
    opening, closing = dash + b"\r\n", b"\r\n" + dash + b"--\r\n"
    if not body.startswith(opening) or not body.endswith(closing):
        return None
    parts = []
    for part in body[len(opening):len(body) - len(closing)].split(b"\r\n" + dash + b"\r\n"):
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


def redact_session_url(url: str) -> str:
    """An upload session URL or target (``...?upload_id=...``) as a recording names it."""
    parts = urlsplit(url)
    if "upload_id" not in parse_qs(parts.query) or "/upload/" not in parts.path:
        return url
    return urlunsplit((parts.scheme, parts.netloc, f"{parts.path}/REDACTED", "", ""))


def normalize_body(body: bytes, headers: Sequence[tuple[str, str]], names: frozenset[str]) -> bytes:
    """``body`` after the named body normalizations."""
    if "multipart_redaction" not in names or not body:
        return body
    content_type = _header(headers, "content-type")
    match = _BOUNDARY.match(content_type) if content_type is not None else None
    if match is not None:
        redacted = redact_multipart(body, match.group(1))
        return body if redacted is None else redacted
    command = _header(headers, "x-goog-upload-command")
    if command is not None and "upload" in [c.strip() for c in command.split(",")]:
        return REDACTED_CONTENT.encode()
    return body


def normalize_target(target: str, names: frozenset[str]) -> str:
    """A request target (path and query) after the named URL normalizations."""
    return redact_session_url(target) if "upload_session_url" in names else target
