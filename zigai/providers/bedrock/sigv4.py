"""AWS Signature Version 4 for Bedrock requests, with the standard library only.

Job
    :func:`sign` turns one HTTP request (method, absolute URL, headers, body) plus AWS
    credentials, region, service and a UTC timestamp into the headers that authenticate it:
    ``X-Amz-Date``, ``X-Amz-Security-Token`` when the credentials carry a session token, and
    ``Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...``.
    The returned :class:`Signature` also exposes the canonical request and the string to
    sign, so tests compare every intermediate step with botocore's ``SigV4Auth``.

Invariants
    * The canonical form follows AWS's rules as botocore applies them for every service but
      S3: the path has its dot segments and empty segments removed and is then
      percent-encoded again (``%2F`` inside a model ARN becomes ``%252F``), the query is
      decoded, re-encoded with only ``-_.~`` left bare and sorted by key then value, header
      names are lowercased and sorted, values trimmed with inner runs of spaces collapsed,
      repeated headers joined with ``,``, ``host`` added from the URL without a default port.
    * Hop-by-hop and tracing headers (``user-agent``, ``expect``, ``connection`` ...) are never
      signed, because proxies may rewrite them.
    * The body is always hashed (SHA-256); an absent body hashes as empty.
    * Nothing here logs; the secret key only ever enters HMAC.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, unquote, urlsplit

__all__ = ["ALGORITHM", "Signature", "canonical_query", "canonical_uri", "sign"]

ALGORITHM = "AWS4-HMAC-SHA256"
_TIMESTAMP = "%Y%m%dT%H%M%SZ"
_UNSIGNED: frozenset[str] = frozenset({
    "authorization", "baggage", "connection", "expect", "keep-alive", "proxy-authenticate",
    "proxy-authorization", "te", "traceparent", "tracestate", "trailer", "transfer-encoding",
    "upgrade", "user-agent", "x-amzn-trace-id",
})
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class Signature:
    """One signed request: the headers to add and the intermediate strings."""

    canonical_request: str
    string_to_sign: str
    authorization: str
    headers: tuple[tuple[str, str], ...]


def _remove_dot_segments(path: str) -> str:
    if not path:
        return "/"
    kept: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if kept:
                kept.pop()
            continue
        kept.append(segment)
    first = "/" if path.startswith("/") else ""
    last = "/" if path.endswith("/") and kept else ""
    return first + "/".join(kept) + last


def canonical_uri(path: str) -> str:
    """The canonical URI of a URL path (non-S3 services: normalized, then encoded again)."""
    return quote(_remove_dot_segments(path), safe="/~")


def canonical_query(query: str) -> str:
    """The canonical query string: pairs decoded, re-encoded, sorted by key then value."""
    if not query:
        return ""
    pairs = []
    for pair in query.split("&"):
        key, _, value = pair.partition("=")
        pairs.append((quote(unquote(key), safe="-_.~"), quote(unquote(value), safe="-_.~")))
    return "&".join(f"{key}={value}" for key, value in sorted(pairs))


def _host(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port is not None and parts.port != _DEFAULT_PORTS.get(parts.scheme):
        host = f"{host}:{parts.port}"
    return host


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def sign(
    method: str,
    url: str,
    headers: Iterable[tuple[str, str]],
    body: bytes | None,
    *,
    access_key_id: str,
    secret_access_key: str,
    session_token: str | None,
    region: str,
    service: str,
    now: datetime,
) -> Signature:
    """Sign one request at ``now`` (an aware or naive-UTC datetime); see the module doc."""
    if now.tzinfo is not None:
        now = now.astimezone(UTC)
    stamp = now.strftime(_TIMESTAMP)
    date = stamp[:8]
    added: list[tuple[str, str]] = [("X-Amz-Date", stamp)]
    if session_token:
        added.append(("X-Amz-Security-Token", session_token))
    signed: dict[str, list[str]] = {}
    for name, value in (*headers, *added):
        lowered = name.lower()
        if lowered not in _UNSIGNED:
            signed.setdefault(lowered, []).append(" ".join(value.split()))
    signed.setdefault("host", [_host(url)])
    names = sorted(signed)
    canonical_headers = "".join(f"{name}:{','.join(signed[name])}\n" for name in names)
    signed_headers = ";".join(names)
    parts = urlsplit(url)
    canonical_request = "\n".join((
        method.upper(),
        canonical_uri(parts.path),
        canonical_query(parts.query),
        canonical_headers,
        signed_headers,
        hashlib.sha256(body or b"").hexdigest(),
    ))
    scope = f"{date}/{region}/{service}/aws4_request"
    string_to_sign = "\n".join((
        ALGORITHM, stamp, scope, hashlib.sha256(canonical_request.encode("utf-8")).hexdigest(),
    ))
    key = _hmac(f"AWS4{secret_access_key}".encode(), date)
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    signature = hmac.new(key, string_to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    authorization = (f"{ALGORITHM} Credential={access_key_id}/{scope}, "
                     f"SignedHeaders={signed_headers}, Signature={signature}")
    return Signature(canonical_request, string_to_sign, authorization,
                     (*added, ("Authorization", authorization)))
