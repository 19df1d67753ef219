"""MCP authorization discovery: Bearer challenges, RFC 9728 and RFC 8414 metadata, RFC 9207.

Job
    Turn a ``401``/``403`` answer from an MCP server into the facts a client needs before it
    can acquire a token: the server's Bearer challenge (``WWW-Authenticate``), its protected
    resource metadata (RFC 9728), the chosen authorization server's metadata (RFC 8414, with
    the OpenID Connect discovery fallbacks), the scopes to request, a PKCE S256 pair, and the
    checks on the authorization response (``state`` and the RFC 9207 ``iss`` parameter).

Invariants
    * Every URL is checked with the :class:`~zigai.security.UrlPolicy` before any I/O: the
      metadata URLs we fetch and every endpoint the metadata names.  Redirects are never
      followed (the transport refuses them).
    * Every fetched document is bounded: a body of ``max_metadata_bytes`` is accepted, one byte
      more raises :class:`AuthMetadataTooLarge`; lists (authorization servers, scopes) are
      bounded the same way; a ``WWW-Authenticate`` value is bounded by
      ``MAX_CHALLENGE_BYTES``.
    * Metadata is bound to what was asked for: the protected resource metadata's ``resource``
      must be the MCP server's canonical resource (or a path prefix of it on the same origin),
      and an authorization server's ``issuer`` must equal the issuer it was fetched for.
    * Nothing here sends or stores a credential; error messages name URLs without query,
      fragment or userinfo and never echo authorization codes or tokens.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from zigai.errors import McpError, TransportError
from zigai.json import Limits as JsonLimits
from zigai.json import parse as parse_json
from zigai.mcp.errors import McpConnectionFailed
from zigai.security import UrlPolicy
from zigai.transport import ResponseTooLarge, Transport, TransportRequest

__all__ = [
    "McpAuthError",
    "InvalidAuthChallenge",
    "AuthMetadataNotFound",
    "InvalidAuthMetadata",
    "AuthMetadataTooLarge",
    "AuthorizationResponseRejected",
    "BearerChallenge",
    "ProtectedResourceMetadata",
    "AuthorizationServerMetadata",
    "AuthDiscovery",
    "PkcePair",
    "MAX_CHALLENGE_BYTES",
    "parse_bearer_challenge",
    "canonical_resource",
    "protected_resource_metadata_urls",
    "authorization_server_metadata_urls",
    "select_scopes",
    "pkce_pair",
    "check_authorization_response",
]

MAX_CHALLENGE_BYTES = 8192
_PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
_AS_WELL_KNOWN = "/.well-known/oauth-authorization-server"
_OIDC_WELL_KNOWN = "/.well-known/openid-configuration"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


class McpAuthError(McpError):
    """Base of the MCP authorization errors (discovery, metadata, authorization responses)."""


class InvalidAuthChallenge(McpAuthError):
    """A ``WWW-Authenticate`` value is malformed or longer than ``MAX_CHALLENGE_BYTES``."""


class AuthMetadataNotFound(McpAuthError):
    """No candidate metadata URL answered with a document; ``tried`` lists (url, status)."""

    def __init__(self, message: str, *, tried: tuple[tuple[str, int], ...] = ()) -> None:
        super().__init__(message)
        self.tried = tried


class InvalidAuthMetadata(McpAuthError):
    """A metadata document is not usable; ``field`` names the offending member (or "")."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class AuthMetadataTooLarge(InvalidAuthMetadata):
    """A metadata body exceeded ``max_metadata_bytes`` (``limit``)."""

    def __init__(self, message: str, *, field: str = "", limit: int = 0) -> None:
        super().__init__(message, field=field)
        self.limit = limit


class AuthorizationResponseRejected(McpAuthError):
    """An authorization response failed a check (``error``, ``state``, RFC 9207 ``iss``).

    ``reason`` is one of ``"error"``, ``"state"``, ``"iss"``, ``"code"``; ``error`` carries the
    server's OAuth error code when ``reason == "error"``.
    """

    def __init__(self, message: str, *, reason: str = "", error: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.error = error


# -- WWW-Authenticate ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BearerChallenge:
    """The Bearer challenge of a ``WWW-Authenticate`` value (RFC 6750 §3, RFC 9728 §5.1)."""

    resource_metadata: str | None = None
    scope: tuple[str, ...] = ()
    error: str | None = None
    error_description: str | None = None
    realm: str | None = None

    @property
    def insufficient_scope(self) -> bool:
        """True for a step-up challenge: the token lacks a scope the request needs."""
        return self.error == "insufficient_scope"


class _ChallengeScanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def skip(self, chars: str = " \t") -> None:
        while self.at < len(self.text) and self.text[self.at] in chars:
            self.at += 1

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def token(self) -> str:
        match = _TOKEN.match(self.text, self.at)
        if match is None:
            raise InvalidAuthChallenge(f"WWW-Authenticate: expected a token at offset {self.at}")
        self.at = match.end()
        return match.group()

    def quoted(self) -> str:
        self.at += 1  # opening quote
        out: list[str] = []
        while self.at < len(self.text):
            char = self.text[self.at]
            self.at += 1
            if char == '"':
                return "".join(out)
            if char == "\\" and self.at < len(self.text):
                char = self.text[self.at]
                self.at += 1
            out.append(char)
        raise InvalidAuthChallenge("WWW-Authenticate: unterminated quoted string")

    def starts_param(self) -> bool:
        match = _TOKEN.match(self.text, self.at)
        if match is None:
            return False
        rest = self.text[match.end():].lstrip(" \t")
        if not rest.startswith("="):
            return False
        after = rest[1:].lstrip(" \t")
        return bool(after) and after[0] not in ",="


def _challenges(value: str) -> list[tuple[str, dict[str, str]]]:
    scan = _ChallengeScanner(value)
    found: list[tuple[str, dict[str, str]]] = []
    scan.skip(" \t,")
    while scan.peek():
        scheme = scan.token().lower()
        params: dict[str, str] = {}
        scan.skip()
        if scan.peek() and scan.peek() != "," and not scan.starts_param():
            match = _TOKEN68.match(value, scan.at)
            if match is None:
                raise InvalidAuthChallenge(f"WWW-Authenticate: malformed {scheme} challenge")
            scan.at = match.end()  # token68 credentials hint: not used by Bearer
            scan.skip()
        while scan.starts_param():
            name = scan.token().lower()
            scan.skip()
            scan.at += 1  # "="
            scan.skip()
            param = scan.quoted() if scan.peek() == '"' else scan.token()
            if name in params:
                raise InvalidAuthChallenge(f"WWW-Authenticate: parameter {name!r} given twice")
            params[name] = param
            scan.skip()
            if scan.peek() == ",":
                scan.at += 1
                scan.skip(" \t,")
            elif scan.peek():
                raise InvalidAuthChallenge(f"WWW-Authenticate: expected ',' at offset {scan.at}")
        found.append((scheme, params))
        scan.skip(" \t,")
    return found


def parse_bearer_challenge(value: str | Sequence[str] | None) -> BearerChallenge | None:
    """The Bearer challenge in one or more ``WWW-Authenticate`` values, or None if there is none.

    Raises :class:`InvalidAuthChallenge` when a value is malformed, longer than
    ``MAX_CHALLENGE_BYTES`` or names two Bearer challenges.
    """
    if value is None:
        return None
    values = [value] if isinstance(value, str) else list(value)
    bearer: dict[str, str] | None = None
    for text in values:
        if len(text.encode("utf-8", "surrogatepass")) > MAX_CHALLENGE_BYTES:
            raise InvalidAuthChallenge(f"WWW-Authenticate value exceeds {MAX_CHALLENGE_BYTES} bytes")
        for scheme, params in _challenges(text):
            if scheme != "bearer":
                continue
            if bearer is not None:
                raise InvalidAuthChallenge("WWW-Authenticate names more than one Bearer challenge")
            bearer = params
    if bearer is None:
        return None
    return BearerChallenge(
        resource_metadata=bearer.get("resource_metadata"),
        scope=tuple(bearer.get("scope", "").split()),
        error=bearer.get("error"),
        error_description=bearer.get("error_description"),
        realm=bearer.get("realm"),
    )


# -- URLs ---------------------------------------------------------------------------------


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit((parts.scheme, host + port, parts.path, "", ""))


def canonical_resource(url: str) -> str:
    """The RFC 8707 canonical resource URI of an MCP server URL.

    Lowercase scheme and host, default ports dropped, no fragment or query, and no trailing
    slash unless the path is just ``/`` (which is then dropped too).
    """
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise InvalidAuthMetadata(f"{_redacted(url)!r} is not an absolute http(s) URL", field="resource")
    if parts.username is not None or parts.password is not None:
        raise InvalidAuthMetadata("a resource URL must not carry userinfo", field="resource")
    scheme = parts.scheme.lower()
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is not None and port != (443 if scheme == "https" else 80):
        host = f"{host}:{port}"
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, host, path, "", ""))


def _origin_and_path(url: str) -> tuple[str, str]:
    canonical = canonical_resource(url)
    parts = urlsplit(canonical)
    return f"{parts.scheme}://{parts.netloc}", parts.path


def protected_resource_metadata_urls(server_url: str, challenge: BearerChallenge | None = None) -> tuple[str, ...]:
    """Where to look for the server's RFC 9728 metadata, in order.

    The challenge's ``resource_metadata`` first, then the path-aware well-known URL, then the
    root well-known URL (duplicates dropped).
    """
    origin, path = _origin_and_path(server_url)
    candidates = []
    if challenge is not None and challenge.resource_metadata:
        candidates.append(challenge.resource_metadata)
    if path:
        candidates.append(f"{origin}{_PRM_WELL_KNOWN}{path}")
    candidates.append(f"{origin}{_PRM_WELL_KNOWN}")
    return tuple(dict.fromkeys(candidates))


def authorization_server_metadata_urls(issuer: str) -> tuple[str, ...]:
    """Where to look for an issuer's metadata: RFC 8414 first, then OpenID Connect discovery."""
    origin, path = _origin_and_path(issuer)
    if not path:
        return (f"{origin}{_AS_WELL_KNOWN}", f"{origin}{_OIDC_WELL_KNOWN}")
    return (f"{origin}{_AS_WELL_KNOWN}{path}", f"{origin}{_OIDC_WELL_KNOWN}{path}",
            f"{origin}{path}{_OIDC_WELL_KNOWN}")


def _resource_covers(resource: str, server_url: str) -> bool:
    resource_origin, resource_path = _origin_and_path(resource)
    server_origin, server_path = _origin_and_path(server_url)
    if resource_origin != server_origin:
        return False
    return server_path == resource_path or server_path.startswith(resource_path + "/")


# -- metadata -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProtectedResourceMetadata:
    """RFC 9728 metadata of an MCP server.  ``source`` is the URL it was read from."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    bearer_methods_supported: tuple[str, ...] | None = None
    resource_name: str | None = None
    source: str = ""


@dataclass(frozen=True, slots=True)
class AuthorizationServerMetadata:
    """RFC 8414 metadata of one authorization server.  ``source`` is the URL it was read from."""

    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str | None
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    response_types_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    code_challenge_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None = None
    authorization_response_iss_parameter_supported: bool = False
    client_id_metadata_document_supported: bool = False
    source: str = ""

    @property
    def supports_pkce_s256(self) -> bool:
        """True when the server advertises PKCE ``S256`` (MCP clients must not proceed otherwise)."""
        return "S256" in (self.code_challenge_methods_supported or ())


def _string(document: Mapping[str, Any], name: str, source: str, *, required: bool = False) -> str | None:
    value = document.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise InvalidAuthMetadata(f"{source}: {name!r} must be a non-empty string", field=name)
    return value


def _strings(document: Mapping[str, Any], name: str, source: str, limit: int) -> tuple[str, ...] | None:
    value = document.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise InvalidAuthMetadata(f"{source}: {name!r} must be a list of non-empty strings", field=name)
    if len(value) > limit:
        raise InvalidAuthMetadata(f"{source}: {name!r} lists {len(value)} entries, more than {limit}", field=name)
    return tuple(value)


def _flag(document: Mapping[str, Any], name: str, source: str) -> bool:
    value = document.get(name, False)
    if not isinstance(value, bool):
        raise InvalidAuthMetadata(f"{source}: {name!r} must be a boolean", field=name)
    return value


class AuthDiscovery:
    """Fetches and validates protected-resource and authorization-server metadata.

    ``transport`` defaults to an :class:`~zigai.transport.HttpTransport` built with
    ``url_policy`` and a body limit of ``max_metadata_bytes`` (closed by :meth:`close`); a
    transport you pass is shared and left open.  ``timeout_s`` bounds each discovery call
    when the caller gives no ``deadline``.
    """

    def __init__(
        self,
        *,
        transport: Transport | None = None,
        url_policy: UrlPolicy | None = None,
        max_metadata_bytes: int = 64 * 1024,
        max_list_items: int = 64,
        timeout_s: float = 30.0,
    ) -> None:
        for name, number in (("max_metadata_bytes", max_metadata_bytes), ("max_list_items", max_list_items)):
            if isinstance(number, bool) or not isinstance(number, int) or number < 1:
                raise ValueError(f"{name} must be an int >= 1, got {number!r}")
        self.url_policy = url_policy or UrlPolicy()
        self.max_metadata_bytes = max_metadata_bytes
        self.max_list_items = max_list_items
        self.timeout_s = timeout_s
        self._json_limits = JsonLimits(max_document_bytes=max_metadata_bytes, max_value_bytes=max_metadata_bytes,
                                       max_depth=16, max_items=max(max_list_items, 256))
        self._owned: Any = None
        if transport is None:
            from zigai.transport import HttpTransport
            from zigai.transport import Limits as TransportLimits

            transport = self._owned = HttpTransport(url_policy=self.url_policy,
                                                    limits=TransportLimits(max_metadata_bytes, max_metadata_bytes))
        self._transport: Transport = transport

    def close(self) -> None:
        """Close the transport if this object built it."""
        owned, self._owned = self._owned, None
        if owned is not None:
            owned.close()

    deinit = close

    def __enter__(self) -> AuthDiscovery:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- discovery ---------------------------------------------------------------------

    def protected_resource(self, server_url: str, challenge: BearerChallenge | None = None, *,
                           deadline: float | None = None) -> ProtectedResourceMetadata:
        """The RFC 9728 metadata for the MCP server at ``server_url`` (see the module invariants)."""
        self.url_policy.check(server_url)
        deadline = self._deadline(deadline)
        document, source = self._first_document(protected_resource_metadata_urls(server_url, challenge), deadline)
        resource = _string(document, "resource", source, required=True)
        assert resource is not None
        if not _resource_covers(resource, server_url):
            raise InvalidAuthMetadata(f"{source}: 'resource' {_redacted(resource)!r} does not identify the MCP "
                                      f"server {canonical_resource(server_url)!r}", field="resource")
        servers = _strings(document, "authorization_servers", source, self.max_list_items)
        if not servers:
            raise InvalidAuthMetadata(f"{source}: 'authorization_servers' must list at least one issuer",
                                      field="authorization_servers")
        for issuer in servers:
            self._check_issuer_url(issuer, source, "authorization_servers")
        return ProtectedResourceMetadata(
            resource=resource,
            authorization_servers=servers,
            scopes_supported=_strings(document, "scopes_supported", source, self.max_list_items),
            bearer_methods_supported=_strings(document, "bearer_methods_supported", source, self.max_list_items),
            resource_name=_string(document, "resource_name", source),
            source=source,
        )

    def authorization_server(self, issuer: str, *, deadline: float | None = None) -> AuthorizationServerMetadata:
        """The metadata of ``issuer``; its ``issuer`` member must equal ``issuer`` exactly."""
        self._check_issuer_url(issuer, "authorization server", "issuer")
        deadline = self._deadline(deadline)
        document, source = self._first_document(authorization_server_metadata_urls(issuer), deadline)
        found = _string(document, "issuer", source, required=True)
        if found != issuer:
            raise InvalidAuthMetadata(f"{source}: 'issuer' {_redacted(found or '')!r} is not the issuer asked "
                                      f"for ({_redacted(issuer)!r}); refusing mixed-up metadata", field="issuer")
        endpoints = {}
        for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
            endpoint = _string(document, name, source)
            if endpoint is not None:
                self._check_url(endpoint, source, name)
            endpoints[name] = endpoint
        limit = self.max_list_items
        return AuthorizationServerMetadata(
            issuer=issuer,
            authorization_endpoint=endpoints["authorization_endpoint"],
            token_endpoint=endpoints["token_endpoint"],
            registration_endpoint=endpoints["registration_endpoint"],
            scopes_supported=_strings(document, "scopes_supported", source, limit),
            response_types_supported=_strings(document, "response_types_supported", source, limit),
            grant_types_supported=_strings(document, "grant_types_supported", source, limit),
            code_challenge_methods_supported=_strings(document, "code_challenge_methods_supported", source, limit),
            token_endpoint_auth_methods_supported=_strings(document, "token_endpoint_auth_methods_supported",
                                                           source, limit),
            authorization_response_iss_parameter_supported=_flag(
                document, "authorization_response_iss_parameter_supported", source),
            client_id_metadata_document_supported=_flag(document, "client_id_metadata_document_supported", source),
            source=source,
        )

    # -- helpers -----------------------------------------------------------------------

    def _deadline(self, deadline: float | None) -> float:
        return time.monotonic() + self.timeout_s if deadline is None else deadline

    def _check_url(self, url: str, source: str, field: str) -> None:
        from zigai.security import UrlPolicyViolation

        try:
            self.url_policy.check(url)
        except UrlPolicyViolation as exc:
            raise InvalidAuthMetadata(f"{source}: {field!r} is refused by the URL policy ({exc.reason.value})",
                                      field=field) from None

    def _check_issuer_url(self, issuer: str, source: str, field: str) -> None:
        self._check_url(issuer, source, field)
        parts = urlsplit(issuer)
        if parts.query or parts.fragment or "#" in issuer:
            raise InvalidAuthMetadata(f"{source}: issuer {_redacted(issuer)!r} must not have a query or fragment",
                                      field=field)

    def _first_document(self, candidates: Sequence[str], deadline: float) -> tuple[dict[str, Any], str]:
        tried: list[tuple[str, int]] = []
        for url in candidates:
            self._check_url(url, "discovery", "metadata URL")
            shown = _redacted(url)
            try:
                response = self._transport.send(TransportRequest(
                    "GET", url, (("Accept", "application/json"),), None, deadline))
            except ResponseTooLarge:
                raise AuthMetadataTooLarge(f"{shown}: metadata exceeds {self.max_metadata_bytes} bytes",
                                           limit=self.max_metadata_bytes) from None
            except TransportError as exc:
                raise McpConnectionFailed(f"{shown}: metadata request failed: {exc}") from None
            if response.status != 200:
                tried.append((shown, response.status))
                continue
            if len(response.body) > self.max_metadata_bytes:
                raise AuthMetadataTooLarge(f"{shown}: metadata exceeds {self.max_metadata_bytes} bytes",
                                           limit=self.max_metadata_bytes)
            document = parse_json(response.body, self._json_limits, InvalidAuthMetadata)
            if not isinstance(document, dict):
                raise InvalidAuthMetadata(f"{shown}: metadata must be a JSON object")
            return document, shown
        summary = ", ".join(f"{url} -> HTTP {status}" for url, status in tried)
        raise AuthMetadataNotFound(f"no authorization metadata found ({summary}); check the server URL or "
                                   "configure the authorization server explicitly", tried=tuple(tried))


# -- scopes, PKCE and the authorization response ------------------------------------------


def select_scopes(challenge: BearerChallenge | None, resource: ProtectedResourceMetadata | None,
                  granted: Sequence[str] = ()) -> tuple[str, ...]:
    """The scopes to request: the challenge's ``scope`` first, else ``scopes_supported``.

    For a step-up (``insufficient_scope``) the already ``granted`` scopes are kept so the new
    token does not lose what the old one had.  Order is preserved, duplicates are dropped.
    """
    if challenge is not None and challenge.scope:
        wanted: Sequence[str] = challenge.scope
    elif resource is not None and resource.scopes_supported:
        wanted = resource.scopes_supported
    else:
        wanted = ()
    if challenge is not None and challenge.insufficient_scope:
        wanted = (*granted, *wanted)
    return tuple(dict.fromkeys(wanted))


@dataclass(frozen=True, slots=True)
class PkcePair:
    """An RFC 7636 S256 pair: keep ``verifier`` secret, send ``challenge``."""

    verifier: str
    challenge: str
    method: str = "S256"

    def __repr__(self) -> str:
        return f"PkcePair(challenge={self.challenge!r}, method={self.method!r})"


def pkce_pair() -> PkcePair:
    """A fresh PKCE pair with a 43-character verifier (256 bits of randomness)."""
    verifier = secrets.token_urlsafe(32)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return PkcePair(verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii"))


def check_authorization_response(params: Mapping[str, str], *, state: str,
                                 server: AuthorizationServerMetadata) -> str:
    """Validate the redirect parameters of an authorization response; return the ``code``.

    Checks, in order: an OAuth ``error`` answer, ``state`` (constant-time), the RFC 9207
    ``iss`` parameter (required when the server advertises it, compared exactly to the
    issuer whenever present), and a non-empty ``code``.
    """
    if "error" in params:
        error = params["error"]
        raise AuthorizationResponseRejected(f"the authorization server answered error {error!r}",
                                            reason="error", error=error)
    if not secrets.compare_digest(params.get("state", "").encode(), state.encode()):
        raise AuthorizationResponseRejected("the authorization response's 'state' does not match this request",
                                            reason="state")
    iss = params.get("iss")
    if iss is None and server.authorization_response_iss_parameter_supported:
        raise AuthorizationResponseRejected(f"{_redacted(server.issuer)!r} promises an 'iss' parameter "
                                            "(RFC 9207) but the response has none", reason="iss")
    if iss is not None and iss != server.issuer:
        raise AuthorizationResponseRejected(f"the response's 'iss' is not {_redacted(server.issuer)!r}; "
                                            "it may come from another authorization server (mix-up)",
                                            reason="iss")
    code = params.get("code", "")
    if not code:
        raise AuthorizationResponseRejected("the authorization response has no 'code'", reason="code")
    return code
