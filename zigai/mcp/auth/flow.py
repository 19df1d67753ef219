"""MCP authorization flows: the ``auth=`` provider of :class:`~zigai.mcp.StreamableHttpTransport`.

Job
    :class:`OAuthProvider` answers two questions for the HTTP transport: which Bearer token to
    send to an MCP server now (:meth:`OAuthProvider.token_for`, refreshing an expired token
    inside the calling request), and what to do about a ``401`` or ``403 insufficient_scope``
    answer (:meth:`OAuthProvider.authorize`): discover the protected resource and its
    authorization server afresh, pick a client (stored, pre-registered, a client ID metadata
    document URL, or RFC 7591 registration), choose the scopes, and run the authorization-code
    + PKCE flow through the application's redirect handler or the client-credentials grant.

Invariants
    * Discovery runs on every challenge, so a server that moves to another authorization server
      is followed; clients and tokens are stored per issuer, and a client registered with one
      issuer is never presented to another.
    * The RFC 8707 ``resource`` parameter is the protected resource metadata's ``resource``,
      sent exactly as published, in the authorization and the token request.
    * Scopes: the challenge's ``scope``, else the metadata's ``scopes_supported``, else none
      (the parameter is omitted); a step-up keeps the scopes already granted; ``offline_access``
      is added only when the authorization server lists it.
    * PKCE S256 is required (a server that does not advertise it is refused) and the
      authorization response passes the ``state`` and RFC 9207 ``iss`` checks before the code
      is exchanged.  The redirect the handler returns must be to ``redirect_uri``.
    * One flow at a time per provider (a lock); a request that finds a newer token than the one
      it sent simply retries with it.  Tokens and secrets never appear in errors or ``repr``.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from zigai.mcp.auth.discovery import (
    AuthDiscovery,
    AuthorizationResponseRejected,
    AuthorizationServerMetadata,
    BearerChallenge,
    McpAuthError,
    ProtectedResourceMetadata,
    _redacted,
    canonical_resource,
    check_authorization_response,
    pkce_pair,
    select_scopes,
)
from zigai.mcp.auth.tokens import (
    CredentialStore,
    MemoryCredentialStore,
    OAuthClient,
    TokenRequestFailed,
    TokenSet,
    choose_auth_method,
    register_client,
    request_token,
)
from zigai.security import UrlPolicy
from zigai.transport import Transport

__all__ = ["AuthorizationFailed", "AuthorizationRejected", "RedirectHandler", "OAuthProvider", "GRANTS"]

RedirectHandler = Callable[[str], str]
GRANTS = ("authorization_code", "client_credentials")
_OFFLINE = "offline_access"


class AuthorizationFailed(McpAuthError):
    """No token could be obtained: the flow cannot run with this configuration or server.

    ``reason`` names the missing piece: ``"no_client"``, ``"no_redirect_handler"``,
    ``"pkce_unsupported"``, ``"no_endpoint"``, ``"redirect_mismatch"``.
    """

    def __init__(self, message: str, *, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


class AuthorizationRejected(McpAuthError):
    """The MCP server still refused the request after the bounded re-authorization attempts.

    ``status`` is its last HTTP status (401 or 403), ``error`` the challenge's ``error`` code.
    """

    def __init__(self, message: str, *, status: int = 0, error: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.error = error


@dataclass(frozen=True, slots=True)
class _Binding:
    issuer: str
    resource: str


class OAuthProvider:
    """OAuth 2.1 authorization for MCP servers (see the module docstring).

    ``grant`` is ``"authorization_code"`` (needs ``redirect_uri`` and ``redirect_handler``, a
    callable that receives the authorization URL, lets the user approve, and returns the URL
    the browser was redirected to) or ``"client_credentials"`` (needs a ``client`` with a
    secret).  ``client`` is a pre-registered :class:`OAuthClient` (or a mapping issuer ->
    client); ``client_metadata_url`` is this application's client ID metadata document URL,
    used as ``client_id`` where the server supports it; otherwise the client registers
    dynamically.  ``offline_access`` asks for a refresh token where the server supports it.
    ``max_step_ups`` bounds the ``403 insufficient_scope`` re-authorizations of one request.
    """

    def __init__(
        self,
        *,
        grant: str = "authorization_code",
        redirect_uri: str | None = None,
        redirect_handler: RedirectHandler | None = None,
        client: OAuthClient | Mapping[str, OAuthClient] | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "zigai",
        offline_access: bool = True,
        store: CredentialStore | None = None,
        url_policy: UrlPolicy | None = None,
        transport: Transport | None = None,
        max_response_bytes: int = 64 * 1024,
        max_step_ups: int = 2,
        timeout_s: float = 30.0,
    ) -> None:
        if grant not in GRANTS:
            raise ValueError(f"grant must be one of {GRANTS}, got {grant!r}")
        for name, number, least in (("max_response_bytes", max_response_bytes, 1), ("max_step_ups", max_step_ups, 0)):
            if isinstance(number, bool) or not isinstance(number, int) or number < least:
                raise ValueError(f"{name} must be an int >= {least}, got {number!r}")
        self.grant = grant
        self.url_policy = url_policy or UrlPolicy()
        if redirect_uri is not None:
            parts = urlsplit(redirect_uri)
            if parts.scheme not in ("http", "https") or not parts.hostname or parts.fragment:
                raise ValueError("redirect_uri must be an absolute http(s) URL without a fragment")
        if client_metadata_url is not None:
            parts = urlsplit(client_metadata_url)
            if parts.scheme != "https" or not parts.hostname or parts.path in ("", "/"):
                raise ValueError("client_metadata_url must be an https URL with a path")
        self.redirect_uri = redirect_uri
        self.redirect_handler = redirect_handler
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.offline_access = offline_access
        self.max_response_bytes = max_response_bytes
        self.max_step_ups = max_step_ups
        self.timeout_s = timeout_s
        self.store: CredentialStore = store if store is not None else MemoryCredentialStore()
        if isinstance(client, Mapping):
            self._clients: dict[str, OAuthClient] = dict(client)
            self._floating: OAuthClient | None = None
        else:
            self._clients = {client.issuer: client} if client is not None and client.issuer else {}
            self._floating = client if client is not None and not client.issuer else None
        self._owned: Any = None
        if transport is None:
            from zigai.transport import HttpTransport
            from zigai.transport import Limits as TransportLimits

            transport = self._owned = HttpTransport(
                url_policy=self.url_policy, limits=TransportLimits(max_response_bytes, max_response_bytes))
        self._transport: Transport = transport
        self._discovery = AuthDiscovery(transport=transport, url_policy=self.url_policy,
                                        max_metadata_bytes=max_response_bytes, timeout_s=timeout_s)
        self._lock = threading.RLock()
        self._bindings: dict[str, _Binding] = {}

    def __repr__(self) -> str:
        return f"OAuthProvider(grant={self.grant!r}, bound={sorted(self._bindings)!r})"

    def close(self) -> None:
        """Close the HTTP transport if this provider built it."""
        owned, self._owned = self._owned, None
        if owned is not None:
            owned.close()

    deinit = close

    def __enter__(self) -> OAuthProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what the transport calls ---------------------------------------------------------

    def token_for(self, server_url: str, *, deadline: float | None = None) -> TokenSet | None:
        """The token to send to ``server_url`` now, or None before the first authorization.

        An expired token is refreshed here, in the calling request, when it has a refresh
        token; if that fails (or there is none) it is dropped and None is returned, so the
        server's ``401`` starts a new flow.
        """
        binding = self._bindings.get(canonical_resource(server_url))
        if binding is None:
            return None
        tokens = self.store.tokens(binding.issuer, binding.resource)
        if tokens is None or not tokens.expired():
            return tokens
        with self._lock:
            current = self.store.tokens(binding.issuer, binding.resource)
            if current is not None and current != tokens and not current.expired():
                return current
            refreshed = self._refresh(binding, tokens, self._deadline(deadline)) if tokens.refresh_token else None
            if refreshed is None:
                self.store.forget_tokens(binding.issuer, binding.resource)
            return refreshed

    def authorize(self, server_url: str, challenge: BearerChallenge | None, *, sent: TokenSet | None = None,
                  deadline: float | None = None) -> TokenSet:
        """Obtain a token after the server refused ``sent`` (None: no token was sent).

        A ``403 insufficient_scope`` challenge asks for the union of the granted and the
        challenged scopes.  Raises :class:`AuthorizationFailed`, the discovery errors of
        :mod:`zigai.mcp.auth.discovery` or :class:`~zigai.mcp.auth.tokens.TokenRequestFailed`.
        """
        deadline = self._deadline(deadline)
        step_up = challenge is not None and challenge.insufficient_scope
        with self._lock:
            key = canonical_resource(server_url)
            binding = self._bindings.get(key)
            if binding is not None and not step_up:
                current = self.store.tokens(binding.issuer, binding.resource)
                if current is not None and current != sent and not current.expired():
                    return current  # another request already re-authorized
            resource = self._discovery.protected_resource(server_url, challenge, deadline=deadline)
            server = self._discovery.authorization_server(resource.authorization_servers[0], deadline=deadline)
            binding = _Binding(server.issuer, resource.resource)
            previous = self.store.tokens(binding.issuer, binding.resource)
            if not step_up and previous is not None and previous.refresh_token and previous == sent:
                refreshed = self._refresh(binding, previous, deadline)
                if refreshed is not None:
                    self._bindings[key] = binding
                    return refreshed
            granted = sent.scope if sent is not None and sent.issuer == server.issuer else ()
            scopes = self._scopes(challenge, resource, server, granted)
            client = self._client_for(server, deadline)
            if self.grant == "client_credentials":
                tokens = self._client_credentials(server, client, resource, scopes, deadline)
            else:
                tokens = self._authorization_code(server, client, resource, scopes, deadline)
            self.store.save_tokens(tokens)
            self._bindings[key] = binding
            return tokens

    # -- pieces ------------------------------------------------------------------------------

    def _deadline(self, deadline: float | None) -> float:
        return time.monotonic() + self.timeout_s if deadline is None else deadline

    def _scopes(self, challenge: BearerChallenge | None, resource: ProtectedResourceMetadata,
                server: AuthorizationServerMetadata, granted: tuple[str, ...]) -> tuple[str, ...]:
        scopes = select_scopes(challenge, resource, granted)
        if (self.offline_access and self.grant == "authorization_code" and _OFFLINE not in scopes
                and _OFFLINE in (server.scopes_supported or ())):
            scopes = (*scopes, _OFFLINE)
        return scopes

    def _client_for(self, server: AuthorizationServerMetadata, deadline: float) -> OAuthClient:
        issuer = server.issuer
        stored = self.store.client(issuer)
        if stored is not None:
            return stored
        configured = self._clients.get(issuer)
        if configured is None and self._floating is not None:
            configured, self._floating = self._floating, None  # bound to the first issuer that uses it
        if configured is not None:
            self.store.save_client(issuer, configured)
            return configured
        if (self.client_metadata_url is not None and server.client_id_metadata_document_supported
                and self.grant == "authorization_code"):
            client = OAuthClient(self.client_metadata_url, issuer=issuer)
            self.store.save_client(issuer, client)
            return client
        if server.registration_endpoint is None:
            raise AuthorizationFailed(
                f"{_redacted(issuer)!r} offers no dynamic client registration and no client is configured for it; "
                "pass client=OAuthClient(...) registered with that authorization server", reason="no_client")
        client = register_client(self._transport, server, self._registration_metadata(server),
                                 deadline=deadline, max_bytes=self.max_response_bytes)
        self.store.save_client(issuer, client)
        return client

    def _registration_metadata(self, server: AuthorizationServerMetadata) -> dict[str, Any]:
        confidential = self.grant == "client_credentials"
        supported = server.token_endpoint_auth_methods_supported
        if confidential:
            method = choose_auth_method(supported, has_secret=True)
            if method == "none":
                raise AuthorizationFailed("the client-credentials grant needs an authenticated client, but "
                                          f"{_redacted(server.issuer)!r} offers only 'none'", reason="no_client")
        elif supported is None or "none" in supported:
            method = "none"
        else:
            method = choose_auth_method(supported, has_secret=True)
        metadata: dict[str, Any] = {
            "client_name": self.client_name,
            "token_endpoint_auth_method": method,
            "application_type": "native" if not confidential else "web",
        }
        if confidential:
            metadata["grant_types"] = ["client_credentials"]
        else:
            metadata["grant_types"] = ["authorization_code", "refresh_token"]
            metadata["response_types"] = ["code"]
            metadata["redirect_uris"] = [self._redirect_uri()]
        return metadata

    def _redirect_uri(self) -> str:
        if self.redirect_uri is None or self.redirect_handler is None:
            raise AuthorizationFailed("the authorization-code flow needs redirect_uri and redirect_handler",
                                      reason="no_redirect_handler")
        return self.redirect_uri

    def _authorization_code(self, server: AuthorizationServerMetadata, client: OAuthClient,
                            resource: ProtectedResourceMetadata, scopes: tuple[str, ...], deadline: float) -> TokenSet:
        redirect_uri = self._redirect_uri()
        assert self.redirect_handler is not None
        if server.authorization_endpoint is None or server.token_endpoint is None:
            raise AuthorizationFailed(f"{_redacted(server.issuer)!r} publishes no authorization or token endpoint",
                                      reason="no_endpoint")
        if not server.supports_pkce_s256:
            raise AuthorizationFailed(f"{_redacted(server.issuer)!r} does not advertise PKCE S256; MCP clients "
                                      "must not authorize without it", reason="pkce_unsupported")
        pkce = pkce_pair()
        state = secrets.token_urlsafe(24)
        query: dict[str, str] = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "code_challenge": pkce.challenge,
            "code_challenge_method": pkce.method,
            "state": state,
            "resource": resource.resource,
        }
        if scopes:
            query["scope"] = " ".join(scopes)
        endpoint = server.authorization_endpoint
        url = endpoint + ("&" if urlsplit(endpoint).query else "?") + urlencode(query)
        callback = self.redirect_handler(url)
        code = check_authorization_response(self._callback_params(callback, redirect_uri), state=state,
                                            server=server)
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                "code_verifier": pkce.verifier, "resource": resource.resource}
        return request_token(self._transport, server, client, form, resource=resource.resource,
                             requested_scope=scopes, deadline=deadline, max_bytes=self.max_response_bytes)

    @staticmethod
    def _callback_params(callback: str, redirect_uri: str) -> dict[str, str]:
        if not isinstance(callback, str):
            raise AuthorizationFailed("the redirect handler must return the redirect URL as a string",
                                      reason="redirect_mismatch")
        got, want = urlsplit(callback), urlsplit(redirect_uri)
        if (got.scheme.lower(), (got.netloc or "").lower(), got.path) != (
                want.scheme.lower(), want.netloc.lower(), want.path):
            raise AuthorizationFailed(f"the authorization response went to {_redacted(callback)!r}, not to the "
                                      f"redirect_uri {_redacted(redirect_uri)!r}", reason="redirect_mismatch")
        params: dict[str, str] = {}
        for name, values in parse_qs(got.query, keep_blank_values=True).items():
            if len(values) != 1:
                raise AuthorizationResponseRejected(f"the authorization response repeats {name!r}",
                                                    reason="code" if name == "code" else name)
            params[name] = values[0]
        return params

    def _client_credentials(self, server: AuthorizationServerMetadata, client: OAuthClient,
                            resource: ProtectedResourceMetadata, scopes: tuple[str, ...], deadline: float) -> TokenSet:
        form = {"grant_type": "client_credentials", "resource": resource.resource}
        if scopes:
            form["scope"] = " ".join(scopes)
        return request_token(self._transport, server, client, form, resource=resource.resource,
                             requested_scope=scopes, deadline=deadline, max_bytes=self.max_response_bytes)

    def _refresh(self, binding: _Binding, tokens: TokenSet, deadline: float) -> TokenSet | None:
        client = self.store.client(binding.issuer)
        if client is None or tokens.refresh_token is None:
            return None
        try:
            server = self._discovery.authorization_server(binding.issuer, deadline=deadline)
            refreshed = request_token(
                self._transport, server, client,
                {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token, "resource": binding.resource},
                resource=binding.resource, previous=tokens, deadline=deadline, max_bytes=self.max_response_bytes)
        except TokenRequestFailed:
            return None  # an expired or revoked refresh token: fall back to a new authorization
        self.store.save_tokens(refreshed)
        return refreshed
