"""The provider-file redactions of the conformance recorder, as shared cassette filters (the
redactions themselves are :mod:`zigai.conformance.normalize`, which the conformance server
applies when a scenario names them).

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

from support.cassettes import CassetteFilters
from zigai.conformance.normalize import (
    REDACTED_BOUNDARY,
    REDACTED_CONTENT,
    normalize_body,
    redact_session_url,
)
from zigai.transport import TransportRequest

__all__ = [
    "REDACTED_BOUNDARY",
    "REDACTED_CONTENT",
    "REDACTED_SESSION",
    "file_filters",
    "redact_file_body",
    "redact_session_url",
]

REDACTED_SESSION = "REDACTED"
_NAMES = frozenset({"multipart_redaction"})


def redact_file_body(request: TransportRequest) -> bytes | None:
    """The request body as a file recording keeps it (unchanged when no redaction applies)."""
    if request.body is None:
        return None
    return normalize_body(request.body, request.headers, _NAMES)


def file_filters() -> CassetteFilters:
    """The shared recording/replay filters of provider-file cassettes."""
    return CassetteFilters(url=redact_session_url, request_body=redact_file_body)
