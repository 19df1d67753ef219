"""Factual response metadata: Retry-After, the Date header, request ids and rate-limit counts.

Job
    Turn response headers into the provider-neutral facts the retry layer and error observers
    use.  Nothing here decides *whether* to retry.

Invariants
    * ``Retry-After`` is accepted as non-negative delay-seconds (digits only) or as an
      IMF-fixdate; a date is measured against the response's own ``Date`` header (so client
      clock skew does not matter) and only falls back to the local wall clock when the response
      carries no usable ``Date``.  Past dates give ``0.0``; anything else unparseable gives None.
    * A request id is copied from the first present header of :data:`REQUEST_ID_HEADERS`,
      must be printable ASCII, and is truncated to :data:`MAX_REQUEST_ID_BYTES` bytes.
    * Rate-limit values are plain integers: :func:`extract_rate_limits` keeps each header
      named with a :data:`RATE_LIMIT_PREFIXES` prefix (OpenAI, Groq, Cerebras, OpenRouter and
      compatible gateways ``x-ratelimit-*``; Anthropic ``anthropic-ratelimit-*``; the IETF
      draft's ``ratelimit-*``) whose value is a non-negative decimal integer of at most 18
      digits, under its lowercased name, at most :data:`MAX_RATE_LIMIT_VALUES` of them.
      Reset times written as durations (``6m0s``) or dates are not counts and are left out
      (``retry_after_s`` carries the server's wait).
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

from zigai.transport.base import MAX_REQUEST_ID_BYTES, Headers

__all__ = [
    "MAX_RATE_LIMIT_VALUES",
    "RATE_LIMIT_PREFIXES",
    "REQUEST_ID_HEADERS",
    "extract_rate_limits",
    "extract_request_id",
    "parse_http_date",
    "parse_retry_after",
    "response_metadata",
]

# Documented provider request-id headers, in lookup order: OpenAI and most OpenAI-compatible
# gateways (x-request-id), Anthropic (request-id), AWS Bedrock (x-amzn-requestid), Azure
# (apim-request-id, x-ms-request-id).
REQUEST_ID_HEADERS: tuple[str, ...] = (
    "x-request-id",
    "request-id",
    "x-amzn-requestid",
    "apim-request-id",
    "x-ms-request-id",
)

_MONTHS = {
    name: index
    for index, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}
_IMF_FIXDATE = re.compile(
    r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) ([A-Z][a-z]{2}) (\d{4}) "
    r"(\d{2}):(\d{2}):(\d{2}) GMT$"
)
_DELAY_SECONDS = re.compile(r"^[0-9]{1,10}$")
_PRINTABLE_ASCII = re.compile(r"^[\x21-\x7e]+$")


def parse_http_date(value: str | None) -> datetime | None:
    """Parse an IMF-fixdate (``Sun, 06 Nov 1994 08:49:37 GMT``) into an aware UTC datetime."""
    if value is None:
        return None
    match = _IMF_FIXDATE.match(value.strip())
    if match is None:
        return None
    _, day, month_name, year, hour, minute, second = match.groups()
    month = _MONTHS.get(month_name)
    if month is None:
        return None
    try:
        return datetime(
            int(year), month, int(day), int(hour), int(minute), int(second), tzinfo=UTC
        )
    except ValueError:
        return None


def parse_retry_after(value: str | None, date_header: str | None = None) -> float | None:
    """Seconds to wait according to ``Retry-After``, or None when absent or unparseable."""
    if value is None:
        return None
    text = value.strip()
    if _DELAY_SECONDS.match(text):
        return float(int(text))
    target = parse_http_date(text)
    if target is None:
        return None
    reference = parse_http_date(date_header)
    now = reference.timestamp() if reference is not None else time.time()
    return max(0.0, target.timestamp() - now)


def extract_request_id(headers: Headers) -> str | None:
    """The provider request id, bounded to 256 printable ASCII bytes, or None."""
    for name in REQUEST_ID_HEADERS:
        value = headers.get(name)
        if value is None:
            continue
        value = value.strip()
        if not value or not _PRINTABLE_ASCII.match(value):
            continue
        return value[:MAX_REQUEST_ID_BYTES]
    return None


def response_metadata(headers: Headers) -> tuple[str | None, float | None, datetime | None]:
    """``(request_id, retry_after_s, date)`` for a response's headers."""
    date_value = headers.get("date")
    return (
        extract_request_id(headers),
        parse_retry_after(headers.get("retry-after"), date_value),
        parse_http_date(date_value),
    )


RATE_LIMIT_PREFIXES = ("x-ratelimit", "anthropic-ratelimit-", "ratelimit-")
MAX_RATE_LIMIT_VALUES = 32
_COUNT = re.compile(r"[0-9]{1,18}")
_MAX_NAME = 64


def extract_rate_limits(headers: Headers) -> dict[str, int]:
    """The response's rate-limit counts as ``{lowercased header name: int}`` (module docs)."""
    values: dict[str, int] = {}
    for name, value in headers:
        lowered = name.lower()
        if len(lowered) > _MAX_NAME or not lowered.startswith(RATE_LIMIT_PREFIXES):
            continue
        text = value.strip()
        if _COUNT.fullmatch(text) and lowered not in values:
            values[lowered] = int(text)
            if len(values) == MAX_RATE_LIMIT_VALUES:
                break
    return values
