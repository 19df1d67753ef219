"""``Configured``: the standard HTTP-backed :class:`~zigai.provider.Provider`.

Job
    Join a validated API root to the relative endpoints model adapters choose, render the
    credential (bearer or a custom header), merge configured and adapter headers, apply the
    URL policy and the per-attempt timeout, and delegate buffered or line-streaming I/O to a
    :class:`~zigai.transport.Transport`.  Non-2xx answers are decoded, observed and raised
    here (see :mod:`zigai.provider`), so adapters never need the credential.

Invariants
    * Everything that can be checked is checked before transport I/O: the API root (at
      construction, with the URL policy), the relative path (no absolute URLs, schemes,
      ``..``/``.`` segments or their percent-encoded forms, backslashes, fragments), the final
      URL (URL policy again, and it must still start with the API root), header names and
      values, credential and configured-header validity, and header ownership conflicts
      (configured vs adapter, duplicates, credential headers, transport framing headers).
    * Adapters may not set credential-like headers (any name
      :func:`zigai.security.is_sensitive_header_name` recognizes).
    * The credential and the values of sensitive configured headers are the provider's secrets:
      they never appear in ``repr``, in error messages or attributes, in observer views, in the
      response headers adapters see, or in this module's log records.  A ``Configured`` refuses
      to be pickled.
    * The effective deadline is the tightest of the request deadline, the run control's
      deadline and ``request_timeout_ms`` from now.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from zigai.errors import ProviderError
from zigai.model.profile import ModelProfile
from zigai.provider import (
    ProviderHttpRequest,
    ProviderHttpResponse,
    ProviderLineStream,
    ProviderOperations,
    raise_provider_error,
)
from zigai.security import Redactor, UrlPolicy, is_sensitive_header_name, stricter_policy
from zigai.transport.base import Headers, Transport, TransportRequest
from zigai.transport.retry_after import extract_rate_limits

__all__ = [
    "AuthStyle",
    "Configured",
    "InvalidProviderConfiguration",
    "InvalidProviderRequest",
    "ProviderHeaderConflict",
    "FORBIDDEN_HEADER_NAMES",
]

_log = logging.getLogger("zigai.providers.http")


class InvalidProviderConfiguration(ProviderError):
    """A ``Configured`` provider was built with an unusable root, credential or headers."""


class InvalidProviderRequest(ProviderError):
    """An adapter request cannot be sent as given (bad path, header, method or body)."""


class ProviderHeaderConflict(InvalidProviderRequest):
    """Two header sources claimed the same header, or an adapter claimed a provider header."""

    def __init__(self, message: str, *, header: str = "") -> None:
        super().__init__(message)
        self.header = header


# Framing and content-coding headers belong to the transport; nobody above it may set them.
FORBIDDEN_HEADER_NAMES: frozenset[str] = frozenset(
    {
        "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade",
        "te", "trailer", "proxy-connection", "expect", "accept-encoding", "content-encoding",
    }
)

_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_HEADER_VALUE = re.compile(r"^[\x20-\x7e\t]*$")
_CREDENTIAL = re.compile(r"^[\x21-\x7e]+$")
_SEGMENT = re.compile(r"^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})+$")
_QUERY = re.compile(r"^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*$")
_DOT_SEGMENT = re.compile(r"^(?:\.|%2e){1,2}$", re.IGNORECASE)
_ENCODED_SEPARATOR = re.compile(r"%(?:2f|5c|00)", re.IGNORECASE)
_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"})


@dataclass(frozen=True, slots=True)
class AuthStyle:
    """How the credential is rendered: ``Authorization: Bearer <credential>``, the raw
    credential under a custom header (``x-api-key``, ``x-goog-api-key`` ...), or nothing."""

    kind: Literal["bearer", "header", "none"] = "bearer"
    header_name: str | None = None

    def __post_init__(self) -> None:
        if self.kind == "header":
            if not isinstance(self.header_name, str) or not _TOKEN.match(self.header_name):
                raise InvalidProviderConfiguration(
                    f"credential header name {self.header_name!r} is not a valid header name"
                )
            if self.header_name.lower() in FORBIDDEN_HEADER_NAMES:
                raise InvalidProviderConfiguration(
                    f"credential header {self.header_name!r} is a transport framing header"
                )
        elif self.kind in ("bearer", "none"):
            if self.header_name is not None:
                raise InvalidProviderConfiguration(f"{self.kind} auth takes no header name")
        else:
            raise InvalidProviderConfiguration(f"unknown auth style {self.kind!r}")

    @classmethod
    def bearer(cls) -> AuthStyle:
        return cls("bearer")

    @classmethod
    def header(cls, name: str) -> AuthStyle:
        return cls("header", name)

    @classmethod
    def none(cls) -> AuthStyle:
        return cls("none")

    @property
    def credential_header(self) -> str | None:
        """The lowercase header name the credential travels in (None for no auth)."""
        if self.kind == "bearer":
            return "authorization"
        if self.kind == "header":
            assert self.header_name is not None
            return self.header_name.lower()
        return None

    def __str__(self) -> str:
        return self.kind if self.kind != "header" else f"header({self.header_name})"


def _check_header(name: Any, value: Any, source: str, error: type[ProviderError]) -> None:
    if not isinstance(name, str) or not _TOKEN.match(name):
        raise error(f"{source} header name {name!r} is not a valid HTTP token")
    if not isinstance(value, str) or not _HEADER_VALUE.match(value):
        # never echo the value: it may be a secret
        raise error(f"{source} header {name!r} has a value with control or non-ASCII characters")
    if name.lower() in FORBIDDEN_HEADER_NAMES:
        raise error(f"{source} header {name!r} is owned by the transport")


def _normalize_root(api_root: Any, policy: UrlPolicy) -> str:
    if not isinstance(api_root, str) or not api_root:
        raise InvalidProviderConfiguration("api_root must be a non-empty URL string")
    policy.check(api_root)  # raises UrlPolicyViolation (a SecurityError)
    if "?" in api_root or "#" in api_root:
        raise InvalidProviderConfiguration("api_root must not carry a query or fragment")
    parts = urlsplit(api_root)
    path = parts.path
    for segment in path.split("/"):
        if segment and (_DOT_SEGMENT.match(segment) or not _SEGMENT.match(segment)):
            raise InvalidProviderConfiguration("api_root path has a dot or invalid segment")
        if _ENCODED_SEPARATOR.search(segment):
            raise InvalidProviderConfiguration("api_root path has an encoded separator")
    if "//" in path:
        raise InvalidProviderConfiguration("api_root path has an empty segment")
    return api_root if api_root.endswith("/") else api_root + "/"


def join_endpoint(api_root: str, path: str, *, allow_encoded_slash: bool = False) -> str:
    """``api_root`` (ending in ``/``) plus a checked relative endpoint; raises
    :class:`InvalidProviderRequest` for anything that could leave the root.

    ``allow_encoded_slash`` admits ``%2F`` inside a segment (never ``%5C`` or ``%00``) for
    APIs whose resource names contain ``/`` and must be percent-encoded (Bedrock model ARNs);
    the adapter validates such names before encoding them."""
    if not isinstance(path, str) or not path:
        raise InvalidProviderRequest("endpoint path must be a non-empty relative path")
    if "#" in path:
        raise InvalidProviderRequest("endpoint path must not carry a fragment")
    route, sep, query = path.partition("?")
    if not route:
        raise InvalidProviderRequest("endpoint path must name a resource before its query")
    if route.startswith("/") or "\\" in path:
        raise InvalidProviderRequest("endpoint path must be relative (no leading '/' or '\\')")
    segments = route.split("/")
    if ":" in segments[0]:
        # a colon in the first segment would read as a URL scheme ("https:", "javascript:")
        raise InvalidProviderRequest("endpoint path must not start with a scheme-like segment")
    for index, segment in enumerate(segments):
        if not segment:
            if index == len(segments) - 1 and index > 0:
                continue  # one trailing slash is harmless
            raise InvalidProviderRequest("endpoint path has an empty segment")
        if _DOT_SEGMENT.match(segment):
            raise InvalidProviderRequest("endpoint path must not contain '.' or '..' segments")
        if not _SEGMENT.match(segment):
            raise InvalidProviderRequest("endpoint path has characters outside RFC 3986 pchar")
        separators = _ENCODED_SEPARATOR.findall(segment)
        if separators and not (allow_encoded_slash
                               and all(found.lower() == "%2f" for found in separators)):
            raise InvalidProviderRequest("endpoint path has an encoded '/', '\\' or NUL")
    if sep and not _QUERY.match(query):
        raise InvalidProviderRequest("endpoint query has characters outside RFC 3986")
    url = api_root + path
    root_parts, url_parts = urlsplit(api_root), urlsplit(url)
    if (
        not url.startswith(api_root)
        or url_parts.scheme != root_parts.scheme
        or url_parts.netloc != root_parts.netloc
        or not url_parts.path.startswith(root_parts.path)
    ):
        raise InvalidProviderRequest("endpoint path would leave the API root")
    return url


class Configured(ProviderOperations):
    """A concrete provider: identity, API root, credential, headers, policy and transport.

    ``auth`` defaults to bearer when a credential is given and to none otherwise.
    ``headers`` are sent with every request; ``request_timeout_ms`` caps each attempt;
    ``profile_lookup`` answers :meth:`profile_for`; ``idempotency_header`` names the header
    idempotency keys travel in when the request itself names none.  The optional operations
    (discovery, files) are unsupported here; provider modules override them.
    """

    #: Subclasses whose resource names hold an encoded ``/`` (Bedrock ARNs) set this.
    encoded_slash_in_paths: ClassVar[bool] = False

    __slots__ = (
        "name", "api_root", "transport", "url_policy", "request_timeout_ms", "auth",
        "_credential", "_headers", "_header_names", "_redactor", "_profile_lookup",
        "_idempotency_header",
    )

    def __init__(
        self,
        name: str,
        api_root: str,
        transport: Transport,
        credential: str | None = None,
        auth: AuthStyle | None = None,
        headers: Iterable[tuple[str, str]] = (),
        url_policy: UrlPolicy | None = None,
        request_timeout_ms: int | None = None,
        profile_lookup: Callable[[str], ModelProfile | None] | None = None,
        idempotency_header: str | None = None,
    ) -> None:
        if not isinstance(name, str) or not re.match(r"^[a-z0-9][a-z0-9._-]{0,63}$", name):
            raise InvalidProviderConfiguration(
                "provider name must be 1-64 lowercase letters, digits, '.', '_' or '-'"
            )
        policy = url_policy if url_policy is not None else UrlPolicy()
        if auth is None:
            auth = AuthStyle.bearer() if credential is not None else AuthStyle.none()
        if not isinstance(auth, AuthStyle):
            raise InvalidProviderConfiguration("auth must be an AuthStyle")
        if auth.kind == "none":
            if credential is not None:
                raise InvalidProviderConfiguration("a credential was given but auth is none")
        elif not isinstance(credential, str) or not _CREDENTIAL.match(credential):
            # never echo the credential
            raise InvalidProviderConfiguration(
                f"{auth} auth needs a non-empty credential of visible ASCII characters"
            )
        if request_timeout_ms is not None and (
            isinstance(request_timeout_ms, bool)
            or not isinstance(request_timeout_ms, int)
            or request_timeout_ms <= 0
        ):
            raise InvalidProviderConfiguration("request_timeout_ms must be a positive int")
        if not (callable(getattr(transport, "send", None))
                and callable(getattr(transport, "stream_lines", None))):
            raise InvalidProviderConfiguration("transport must implement send and stream_lines")
        if profile_lookup is not None and not callable(profile_lookup):
            raise InvalidProviderConfiguration("profile_lookup must be callable")
        configured = tuple(headers)
        seen: set[str] = set()
        secrets: list[str] = [] if credential is None else [credential]
        credential_header = auth.credential_header
        for pair in configured:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise InvalidProviderConfiguration("headers must be (name, value) pairs")
            key, value = pair
            _check_header(key, value, "configured", InvalidProviderConfiguration)
            lowered = key.lower()
            if lowered in seen:
                raise InvalidProviderConfiguration(f"configured header {key!r} is repeated")
            if lowered == credential_header:
                raise InvalidProviderConfiguration(
                    f"configured header {key!r} would replace the credential header"
                )
            seen.add(lowered)
            if is_sensitive_header_name(key) and value:
                secrets.append(value)
        if idempotency_header is not None:
            _check_header(idempotency_header, "", "idempotency", InvalidProviderConfiguration)
        self.name = name
        self.api_root = _normalize_root(api_root, policy)
        self.transport = transport
        self.url_policy = policy
        self.request_timeout_ms = request_timeout_ms
        self.auth = auth
        self._credential = credential
        self._headers = configured
        self._header_names = frozenset(seen)
        self._redactor = Redactor(secrets=tuple(secrets))
        self._profile_lookup = profile_lookup
        self._idempotency_header = idempotency_header

    # -- identity -------------------------------------------------------------------------

    def __repr__(self) -> str:
        credential = "None" if self._credential is None else "'[REDACTED]'"
        return (
            f"Configured(name={self.name!r}, api_root={self.api_root!r}, auth={self.auth}, "
            f"credential={credential}, headers={list(self._redactor.headers(self._headers))!r})"
        )

    def __reduce__(self) -> Any:
        raise TypeError("a Configured provider holds a credential and cannot be pickled")

    @property
    def redactor(self) -> Redactor:
        """The redaction configuration covering this provider's secrets (for diagnostics)."""
        return self._redactor

    def profile_for(self, model_name: str) -> ModelProfile | None:
        if self._profile_lookup is None:
            return None
        return self._profile_lookup(model_name)

    def provider(self) -> Configured:
        """The borrowed Provider view (this object; kept for the spec's vocabulary)."""
        return self

    # -- request building -----------------------------------------------------------------

    def _deadline(self, request: ProviderHttpRequest) -> float | None:
        candidates = [request.deadline]
        if request.control is not None:
            candidates.append(request.control.deadline)
        if self.request_timeout_ms is not None:
            candidates.append(time.monotonic() + self.request_timeout_ms / 1000.0)
        present = [c for c in candidates if c is not None]
        return min(present) if present else None

    def _headers_for(self, request: ProviderHttpRequest) -> tuple[tuple[str, str], ...]:
        credential_header = self.auth.credential_header
        merged: list[tuple[str, str]] = list(self._headers)
        adapter_names: set[str] = set()
        for key, value in request.headers:
            _check_header(key, value, "adapter", InvalidProviderRequest)
            lowered = key.lower()
            if lowered == credential_header or is_sensitive_header_name(key):
                raise ProviderHeaderConflict(
                    f"adapter header {key!r} looks like a credential; only the provider sets "
                    "credentials",
                    header=lowered,
                )
            if lowered in adapter_names:
                raise ProviderHeaderConflict(f"adapter header {key!r} is repeated", header=lowered)
            if lowered in self._header_names:
                raise ProviderHeaderConflict(
                    f"adapter header {key!r} conflicts with a configured header", header=lowered
                )
            adapter_names.add(lowered)
            merged.append((key, value))
        taken = self._header_names | adapter_names
        if request.idempotency_key is not None:
            header = request.idempotency_header or self._idempotency_header
            if header is not None:
                _check_header(header, request.idempotency_key, "idempotency", InvalidProviderRequest)
                if header.lower() in taken or header.lower() == credential_header:
                    raise ProviderHeaderConflict(
                        f"idempotency header {header!r} is already set", header=header.lower()
                    )
                taken = taken | {header.lower()}
                merged.append((header, request.idempotency_key))
        if request.json_body is not None and "content-type" not in taken:
            merged.append(("Content-Type", "application/json"))
        if "accept" not in taken:
            merged.append(("Accept", "application/json, text/event-stream"))
        if self.auth.kind == "bearer":
            merged.append(("Authorization", f"Bearer {self._credential}"))
        elif self.auth.kind == "header":
            assert self.auth.header_name is not None and self._credential is not None
            merged.append((self.auth.header_name, self._credential))
        return tuple(merged)

    def _transport_request(self, request: ProviderHttpRequest) -> TransportRequest:
        if not isinstance(request, ProviderHttpRequest):
            raise InvalidProviderRequest("expected a ProviderHttpRequest")
        if request.control is not None:
            request.control.check()
        method = request.method.upper() if isinstance(request.method, str) else ""
        if method not in _METHODS:
            raise InvalidProviderRequest(f"unsupported HTTP method {request.method!r}")
        url = join_endpoint(self.api_root, request.path,
                            allow_encoded_slash=self.encoded_slash_in_paths)
        # The provider's own policy and the caller's (an agent's): a URL must pass both.
        policy = stricter_policy(self.url_policy, request.url_policy) or self.url_policy
        policy.check(url)
        for media in request.media_urls:  # the provider fetches these: same policy
            policy.check(media)
        headers = self._headers_for(request)
        body: bytes | None = request.body
        if request.json_body is not None:
            from zigai import json as zjson

            body = zjson.dumps(request.json_body).encode("utf-8")
        return self._authenticate(TransportRequest(
            method=method,
            url=url,
            headers=headers,
            body=body,
            deadline=self._deadline(request),
            response_header_sink=request.response_header_sink,
            cancellation=None if request.control is None else request.control.token,
        ))

    def _authenticate(self, request: TransportRequest) -> TransportRequest:
        """The request as sent; providers that sign the whole request (AWS SigV4) add their
        headers here, after every other header is final."""
        return request

    def _raise_for(
        self,
        request: ProviderHttpRequest,
        status: int,
        body: bytes,
        request_id: str | None,
        retry_after_s: float | None,
        headers: Headers,
    ) -> None:
        raise_provider_error(
            provider_name=self.name,
            status=status,
            body=body,
            request_id=request_id,
            retry_after_s=retry_after_s,
            secrets=self._redactor.secrets,
            observer=request.error_observer,
            capture_body=request.capture_error_body,
            max_body_bytes=request.max_error_body_bytes,
            rate_limits=extract_rate_limits(headers),
        )

    def _safe_headers(self, headers: Headers) -> Headers:
        return Headers(self._redactor.headers(headers.items))

    def _safe_id(self, request_id: str | None) -> str | None:
        return None if request_id is None else self._redactor.text(request_id)

    # -- Provider -------------------------------------------------------------------------

    def send(self, request: ProviderHttpRequest) -> ProviderHttpResponse:
        """Send a buffered request; 2xx comes back, anything else is observed and raised."""
        transport_request = self._transport_request(request)
        response = self.transport.send(transport_request)
        request_id = self._safe_id(response.request_id)
        _log.debug(
            "%s %s %s%s -> %d (request id %s)", self.name, transport_request.method,
            self.api_root, request.path.partition("?")[0], response.status, request_id,
        )
        if not 200 <= response.status <= 299:
            self._raise_for(
                request, response.status, response.body, request_id, response.retry_after_s,
                response.headers,
            )
        return ProviderHttpResponse(
            status=response.status,
            headers=self._safe_headers(response.headers),
            body=response.body,
            request_id=request_id,
        )

    def stream_lines(
        self, request: ProviderHttpRequest
    ) -> AbstractContextManager[ProviderLineStream]:
        """Open a line stream; non-2xx answers are read as a bounded body and raised before
        anything is yielded.  Leaving the ``with`` block releases the connection."""
        transport_request = self._transport_request(request)
        return self._stream(request, transport_request)

    @contextmanager
    def _stream(
        self, request: ProviderHttpRequest, transport_request: TransportRequest
    ) -> Iterator[ProviderLineStream]:
        with self.transport.stream_lines(transport_request) as response:
            request_id = self._safe_id(response.request_id)
            _log.debug(
                "%s %s %s%s -> %d streaming (request id %s)", self.name,
                transport_request.method, self.api_root, request.path.partition("?")[0],
                response.status, request_id,
            )
            if not 200 <= response.status <= 299:
                self._raise_for(
                    request, response.status, response.read_body(), request_id,
                    response.retry_after_s, response.headers,
                )
            control = request.control

            def checked(read: Callable[[], Iterable[bytes]]) -> Iterator[bytes]:
                # ``read`` is called on first use, so only the reading the adapter picks runs
                for item in read():
                    if control is not None:
                        control.check()
                    yield item

            pieces = getattr(response, "chunks", None)  # optional: see ChunkedStreamResponse
            stream = ProviderLineStream(
                response.status, self._safe_headers(response.headers), request_id,
                checked(response.lines),
                chunks=checked(pieces) if pieces is not None else None,
            )
            try:
                yield stream
            finally:
                stream.close()
