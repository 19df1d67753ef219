"""MCP authorization credentials: OAuth clients, token sets, the issuer-keyed store, token requests.

Job
    Hold what a client obtained from an authorization server and talk to its token and
    registration endpoints: :class:`OAuthClient` (a registered or pre-registered client),
    :class:`TokenSet` (an access token with its scopes, expiry and refresh token),
    :class:`CredentialStore` / :class:`MemoryCredentialStore` (both keyed by the issuer, so a
    client registered with one authorization server is never offered to another),
    :func:`request_token` (one token endpoint POST with ``client_secret_basic``,
    ``client_secret_post`` or ``none`` client authentication; ``client_id`` is in the form
    every time, the secret in exactly one place) and :func:`register_client`
    (RFC 7591 dynamic client registration).

Invariants
    * Secrets never reach a message or a ``repr``: :class:`OAuthClient` and :class:`TokenSet`
      print without their secret fields, and error messages name the endpoint without query or
      userinfo and carry only the server's OAuth ``error`` code and a bounded description.
    * Every response body is bounded (``max_bytes``; one byte more raises
      :class:`TokenResponseTooLarge`) and parsed with bounded JSON limits before use.
    * Nothing here retries: one request per call, so the caller's bounds on attempts hold.
    * Only ``Bearer`` access tokens are accepted; any other ``token_type`` is refused.
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol
from urllib.parse import quote_plus, urlencode

from zigai.errors import TransportError
from zigai.json import Limits as JsonLimits
from zigai.json import dumps
from zigai.json import parse as parse_json
from zigai.mcp.auth.discovery import AuthorizationServerMetadata, McpAuthError, _redacted
from zigai.mcp.errors import McpConnectionFailed
from zigai.transport import ResponseTooLarge, Transport, TransportRequest

__all__ = [
    "TokenRequestFailed",
    "TokenResponseTooLarge",
    "ClientRegistrationFailed",
    "AUTH_METHODS",
    "OAuthClient",
    "TokenSet",
    "CredentialStore",
    "MemoryCredentialStore",
    "choose_auth_method",
    "request_token",
    "register_client",
]

AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")
_MAX_DESCRIPTION = 200
_FORM = "application/x-www-form-urlencoded"


class TokenRequestFailed(McpAuthError):
    """The token endpoint refused a request or answered something unusable.

    ``error`` is the server's OAuth error code (``"invalid_grant"``, ...) or "" when the answer
    had none; ``status`` is the HTTP status (0 when no answer arrived).
    """

    def __init__(self, message: str, *, error: str = "", status: int = 0) -> None:
        super().__init__(message)
        self.error = error
        self.status = status


class TokenResponseTooLarge(TokenRequestFailed):
    """A token or registration response exceeded its byte limit (``limit``)."""

    def __init__(self, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.limit = limit


class ClientRegistrationFailed(McpAuthError):
    """Dynamic client registration (RFC 7591) was refused or answered without a ``client_id``."""

    def __init__(self, message: str, *, error: str = "", status: int = 0) -> None:
        super().__init__(message)
        self.error = error
        self.status = status


@dataclass(frozen=True, slots=True)
class OAuthClient:
    """An OAuth client known to one authorization server.

    ``auth_method`` is how it authenticates at the token endpoint (one of ``AUTH_METHODS``);
    ``issuer`` binds a pre-registered client to the authorization server it was registered
    with (None: bound to the first issuer it is used with).
    """

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    auth_method: str = "none"
    issuer: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.client_id, str) or not self.client_id:
            raise ValueError("client_id must be a non-empty string")
        if self.auth_method not in AUTH_METHODS:
            raise ValueError(f"auth_method must be one of {AUTH_METHODS}, got {self.auth_method!r}")
        if self.auth_method != "none" and not self.client_secret:
            raise ValueError(f"auth_method {self.auth_method!r} needs a client_secret")


@dataclass(frozen=True, slots=True)
class TokenSet:
    """An access token for one (issuer, resource) pair.

    ``scope`` is what the server granted (or, when its answer omitted ``scope``, what was
    requested); ``expires_at`` is a ``time.time()`` value or None when the server gave no
    lifetime.  The token fields are left out of ``repr``.
    """

    access_token: str = field(repr=False)
    issuer: str
    resource: str
    scope: tuple[str, ...] = ()
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    token_type: str = "Bearer"

    def expired(self, *, skew_s: float = 30.0, now: float | None = None) -> bool:
        """True when the token is past (or within ``skew_s`` of) its expiry."""
        if self.expires_at is None:
            return False
        return (time.time() if now is None else now) >= self.expires_at - skew_s


class CredentialStore(Protocol):
    """Where clients and tokens live, keyed by issuer (and resource for tokens)."""

    def client(self, issuer: str) -> OAuthClient | None: ...

    def save_client(self, issuer: str, client: OAuthClient) -> None: ...

    def tokens(self, issuer: str, resource: str) -> TokenSet | None: ...

    def save_tokens(self, tokens: TokenSet) -> None: ...

    def forget_tokens(self, issuer: str, resource: str) -> None: ...


class MemoryCredentialStore:
    """A thread-safe in-memory :class:`CredentialStore` (lost when the process ends)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: dict[str, OAuthClient] = {}
        self._tokens: dict[tuple[str, str], TokenSet] = {}

    def client(self, issuer: str) -> OAuthClient | None:
        with self._lock:
            return self._clients.get(issuer)

    def save_client(self, issuer: str, client: OAuthClient) -> None:
        with self._lock:
            self._clients[issuer] = replace(client, issuer=issuer)

    def tokens(self, issuer: str, resource: str) -> TokenSet | None:
        with self._lock:
            return self._tokens.get((issuer, resource))

    def save_tokens(self, tokens: TokenSet) -> None:
        with self._lock:
            self._tokens[(tokens.issuer, tokens.resource)] = tokens

    def forget_tokens(self, issuer: str, resource: str) -> None:
        with self._lock:
            self._tokens.pop((issuer, resource), None)

    def __repr__(self) -> str:
        with self._lock:
            return f"MemoryCredentialStore(issuers={sorted(self._clients)!r}, tokens={len(self._tokens)})"


def choose_auth_method(supported: Sequence[str] | None, *, has_secret: bool) -> str:
    """The token endpoint authentication method to use with a server listing ``supported``.

    RFC 8414's default for an absent list is ``client_secret_basic``.  With a secret the
    order of preference is basic, post, none; without one only ``none`` is possible.
    """
    offered = tuple(supported) if supported else ("client_secret_basic",)
    preference = ("client_secret_basic", "client_secret_post", "none") if has_secret else ("none",)
    for method in preference:
        if method in offered:
            return method
    raise TokenRequestFailed(
        f"the authorization server accepts token endpoint authentication {list(offered)!r}, none of which "
        f"this client can do ({'client_secret_basic, client_secret_post, none' if has_secret else 'none'}); "
        "register a client with a supported method")


def _json_limits(max_bytes: int) -> JsonLimits:
    return JsonLimits(max_document_bytes=max_bytes, max_value_bytes=max_bytes, max_depth=16, max_items=256)


def _post(transport: Transport, url: str, headers: Sequence[tuple[str, str]], body: bytes, deadline: float,
          max_bytes: int, error: type[TokenRequestFailed] | type[ClientRegistrationFailed]) -> tuple[int, Any]:
    shown = _redacted(url)
    try:
        response = transport.send(TransportRequest("POST", url, (("Accept", "application/json"), *headers),
                                                   body, deadline))
    except ResponseTooLarge:
        raise TokenResponseTooLarge(f"{shown}: the answer exceeds {max_bytes} bytes", limit=max_bytes) from None
    except TransportError as exc:
        raise McpConnectionFailed(f"{shown}: request failed: {exc}") from None
    if len(response.body) > max_bytes:
        raise TokenResponseTooLarge(f"{shown}: the answer exceeds {max_bytes} bytes", limit=max_bytes)
    try:
        document = parse_json(response.body, _json_limits(max_bytes), error)
    except (TokenRequestFailed, ClientRegistrationFailed):
        document = None
    if not isinstance(document, dict):
        raise error(f"{shown}: HTTP {response.status} without a JSON object body", status=response.status)
    if not 200 <= response.status < 300 or "error" in document:
        code = document.get("error")
        code = code if isinstance(code, str) else ""
        description = document.get("error_description")
        detail = f" ({description[:_MAX_DESCRIPTION]})" if isinstance(description, str) and description else ""
        raise error(f"{shown}: HTTP {response.status}, error {code or 'unspecified'!r}{detail}",
                    error=code, status=response.status)
    return response.status, document


def request_token(transport: Transport, server: AuthorizationServerMetadata, client: OAuthClient,
                  form: Mapping[str, str], *, resource: str, requested_scope: Sequence[str] = (),
                  previous: TokenSet | None = None, deadline: float, max_bytes: int = 64 * 1024) -> TokenSet:
    """POST ``form`` (``grant_type`` and its parameters) to the token endpoint; return the tokens.

    The client authenticates with its ``auth_method``.  ``previous`` (for a refresh) supplies
    the refresh token and scope when the answer leaves them out.
    """
    if server.token_endpoint is None:
        raise TokenRequestFailed(f"{_redacted(server.issuer)!r} publishes no token_endpoint")
    fields = dict(form)
    headers: list[tuple[str, str]] = [("Content-Type", _FORM)]
    # client_id always travels in the form (RFC 6749 3.2.1 lets a client identify itself there;
    # the MCP SDK's token endpoint requires it even with Basic); the secret goes one way only
    fields["client_id"] = client.client_id
    if client.auth_method == "client_secret_basic":
        assert client.client_secret is not None
        pair = f"{quote_plus(client.client_id)}:{quote_plus(client.client_secret)}".encode()
        headers.append(("Authorization", "Basic " + base64.b64encode(pair).decode("ascii")))
    elif client.auth_method == "client_secret_post":
        assert client.client_secret is not None
        fields["client_secret"] = client.client_secret
    _status, document = _post(transport, server.token_endpoint, headers, urlencode(fields).encode("ascii"),
                              deadline, max_bytes, TokenRequestFailed)
    shown = _redacted(server.token_endpoint)
    access = document.get("access_token")
    if not isinstance(access, str) or not access:
        raise TokenRequestFailed(f"{shown}: the answer has no access_token")
    token_type = document.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise TokenRequestFailed(f"{shown}: token_type {token_type!r} is not supported (only Bearer)")
    expires_in = document.get("expires_in")
    if expires_in is not None and (isinstance(expires_in, bool) or not isinstance(expires_in, (int, float))
                                   or expires_in < 0):
        raise TokenRequestFailed(f"{shown}: expires_in must be a non-negative number")
    scope = document.get("scope")
    if scope is not None and not isinstance(scope, str):
        raise TokenRequestFailed(f"{shown}: scope must be a string")
    refresh = document.get("refresh_token")
    if refresh is not None and (not isinstance(refresh, str) or not refresh):
        raise TokenRequestFailed(f"{shown}: refresh_token must be a non-empty string")
    if scope is not None:
        granted = tuple(scope.split())
    elif requested_scope:
        granted = tuple(requested_scope)
    else:
        granted = previous.scope if previous is not None else ()
    return TokenSet(
        access_token=access,
        issuer=server.issuer,
        resource=resource,
        scope=granted,
        refresh_token=refresh if refresh is not None else (previous.refresh_token if previous else None),
        expires_at=None if expires_in is None else time.time() + float(expires_in),
    )


def register_client(transport: Transport, server: AuthorizationServerMetadata, metadata: Mapping[str, Any], *,
                    deadline: float, max_bytes: int = 64 * 1024) -> OAuthClient:
    """Register ``metadata`` (RFC 7591 client metadata) at the server's registration endpoint."""
    if server.registration_endpoint is None:
        raise ClientRegistrationFailed(f"{_redacted(server.issuer)!r} publishes no registration_endpoint")
    body = dumps(dict(metadata)).encode("utf-8")
    _status, document = _post(transport, server.registration_endpoint, (("Content-Type", "application/json"),),
                              body, deadline, max_bytes, ClientRegistrationFailed)
    shown = _redacted(server.registration_endpoint)
    client_id = document.get("client_id")
    if not isinstance(client_id, str) or not client_id:
        raise ClientRegistrationFailed(f"{shown}: the registration answer has no client_id")
    secret = document.get("client_secret")
    secret = secret if isinstance(secret, str) and secret else None
    method = document.get("token_endpoint_auth_method", metadata.get("token_endpoint_auth_method", "none"))
    if method not in AUTH_METHODS:
        raise ClientRegistrationFailed(f"{shown}: registered token_endpoint_auth_method {method!r} is not supported")
    if method != "none" and secret is None:
        raise ClientRegistrationFailed(f"{shown}: registered {method!r} but the answer has no client_secret")
    return OAuthClient(client_id, secret, method, issuer=server.issuer)
