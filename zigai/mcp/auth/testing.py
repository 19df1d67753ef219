"""A loopback OAuth 2.1 authorization server for tests, examples and local development.

Job
    :class:`LoopbackAuthorizationServer` serves RFC 8414 metadata, RFC 7591 registration, an
    auto-approving authorization endpoint (it redirects straight back with a code), and a token
    endpoint (authorization code with PKCE S256, refresh token, client credentials) on
    ``127.0.0.1``.  :meth:`~LoopbackAuthorizationServer.verify` is a ready-made token verifier
    for :class:`~zigai.mcp.auth.server.BearerAuthPolicy`, and
    :meth:`~LoopbackAuthorizationServer.approve` a redirect handler for
    :class:`~zigai.mcp.auth.flow.OAuthProvider`.  Every request is recorded in ``requests``.

Invariants
    * It binds to 127.0.0.1 only and keeps everything in memory; close it (or use ``with``).
    * It runs on :class:`zigai.http_server.HttpServer` (strict framing, connection cap, head,
      body and write timeouts) behind the loopback :class:`zigai.http_gate.DeploymentPolicy`:
      a foreign ``Host`` (DNS rebinding) is ``421`` and a foreign browser ``Origin`` ``403``,
      before any body is read.  Bodies over 64 KiB are ``413``.
    * It checks what a real server checks: client authentication by the registered method,
      the PKCE verifier, a one-time code bound to its ``redirect_uri`` and ``resource``, and the
      refresh token's client.  Failures answer RFC 6749 error JSON.
    * Tokens are random, and the granted scope is the requested one unless ``grant_scopes``
      overrides it (to simulate a server that grants less than asked).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote_plus, urlencode, urlsplit

from zigai.http_gate import DeploymentPolicy, fold_headers
from zigai.http_server import HttpServer, Request, Response, ServerLimits
from zigai.mcp.auth.server import AccessToken

__all__ = ["LoopbackAuthorizationServer", "RecordedRequest"]

_MAX_BODY = 64 * 1024


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received: ``kind`` is metadata/register/authorize/token."""

    kind: str
    params: dict[str, Any]
    basic_client_id: str | None = None


@dataclass(slots=True)
class _Client:
    secret: str | None
    method: str
    redirect_uris: tuple[str, ...] = ()


@dataclass(slots=True)
class _Grant:
    client_id: str
    scopes: tuple[str, ...]
    resource: str | None
    redirect_uri: str = ""
    challenge: str = ""
    issued: float = field(default_factory=time.monotonic)


class LoopbackAuthorizationServer:
    """An in-memory, auto-approving authorization server on 127.0.0.1 (see module docstring).

    ``path`` is the issuer path (``""`` for the origin); ``clients`` pre-registers
    ``client_id -> secret`` pairs (None: a public client); ``auth_methods`` is
    ``token_endpoint_auth_methods_supported``.
    """

    def __init__(
        self,
        *,
        path: str = "",
        scopes_supported: Sequence[str] | None = None,
        auth_methods: Sequence[str] = ("none", "client_secret_basic", "client_secret_post"),
        registration: bool = True,
        iss_parameter: bool = True,
        client_id_metadata_documents: bool = False,
        pkce_methods: Sequence[str] | None = ("S256",),
        clients: Mapping[str, str | None] | None = None,
        grant_scopes: Sequence[str] | None = None,
        expires_in: int | None = 3600,
        refresh_tokens: bool = True,
        limits: ServerLimits | None = None,
    ) -> None:
        self.path = path.rstrip("/")
        self.scopes_supported = None if scopes_supported is None else tuple(scopes_supported)
        self.auth_methods = tuple(auth_methods)
        self.registration = registration
        self.iss_parameter = iss_parameter
        self.client_id_metadata_documents = client_id_metadata_documents
        self.pkce_methods = None if pkce_methods is None else tuple(pkce_methods)
        self.grant_scopes = None if grant_scopes is None else tuple(grant_scopes)
        self.expires_in = expires_in
        self.refresh_tokens = refresh_tokens
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._clients: dict[str, _Client] = {}
        for client_id, secret in (clients or {}).items():
            method = "none" if secret is None else next(
                (m for m in self.auth_methods if m != "none"), "client_secret_basic")
            self._clients[client_id] = _Client(secret, method)
        self._codes: dict[str, _Grant] = {}
        self._refresh: dict[str, _Grant] = {}
        self._tokens: dict[str, AccessToken] = {}
        self._gate = DeploymentPolicy()
        self._httpd = HttpServer(self._serve, "127.0.0.1", 0, limits=limits, name="zigai-loopback-auth-server")
        self.origin = f"http://127.0.0.1:{self._httpd.port}"
        self.issuer = self.origin + self.path

    def __repr__(self) -> str:
        return f"LoopbackAuthorizationServer(issuer={self.issuer!r})"

    def close(self) -> None:
        """Stop serving and release the port."""
        self._httpd.close()

    deinit = close

    def __enter__(self) -> LoopbackAuthorizationServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers for the other side ---------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """The RFC 8414 metadata document this server publishes."""
        base = self.issuer
        document: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": list(self.auth_methods),
            "authorization_response_iss_parameter_supported": self.iss_parameter,
        }
        if self.registration:
            document["registration_endpoint"] = f"{base}/register"
        if self.pkce_methods is not None:
            document["code_challenge_methods_supported"] = list(self.pkce_methods)
        if self.scopes_supported is not None:
            document["scopes_supported"] = list(self.scopes_supported)
        if self.client_id_metadata_documents:
            document["client_id_metadata_document_supported"] = True
        return document

    def verify(self, token: str) -> AccessToken | None:
        """The token's scopes, audience and expiry, or None for a token this server did not issue."""
        with self._lock:
            return self._tokens.get(token)

    def revoke_tokens(self, *, refresh_tokens: bool = False) -> None:
        """Forget every access token (the MCP server will answer 401 to them), and the refresh
        tokens too when ``refresh_tokens``."""
        with self._lock:
            self._tokens.clear()
            if refresh_tokens:
                self._refresh.clear()

    def approve(self, authorization_url: str) -> str:
        """A redirect handler: GET ``authorization_url`` here and return the redirect's URL."""
        from zigai.security import UrlPolicy
        from zigai.transport import HttpTransport, RedirectPolicy, TransportRequest

        with HttpTransport(url_policy=UrlPolicy.local_development(),
                           redirect_policy=RedirectPolicy.return_response) as http:
            response = http.send(TransportRequest("GET", authorization_url))
        location = response.headers.get("location")
        if response.status != 302 or not location:
            raise ValueError(f"the authorization endpoint answered HTTP {response.status}: "
                             f"{response.body[:200].decode('utf-8', 'replace')}")
        return location

    def kinds(self) -> list[str]:
        """The ``kind`` of every recorded request, in order."""
        return [request.kind for request in self.requests]

    # -- HTTP ---------------------------------------------------------------------------------

    def _serve(self, request: Request) -> Response:
        headers = fold_headers(request.headers)
        refused = self._gate.check(headers, request.tls)
        if refused is not None:
            return _json(refused.status, {"error": "invalid_request", "error_description": refused.reason},
                         [("Connection", "close")])
        target = urlsplit(request.target)
        if request.method in ("GET", "HEAD"):
            if target.path == f"/.well-known/oauth-authorization-server{self.path}":
                self.requests.append(RecordedRequest("metadata", {}))
                return _json(200, self.metadata())
            if target.path == f"{self.path}/authorize":
                return _json(*self._authorize(parse_qs(target.query)))
            return _json(404, {"error": "not_found"})
        if request.method != "POST":
            return _json(405, {"error": "invalid_request"}, [("Allow", "GET, HEAD, POST")])
        if request.content_length > _MAX_BODY:  # the unread body ends the connection
            return _json(413, {"error": "invalid_request"}, [("Connection", "close")])
        body = request.read_body()
        authorization = headers.get("authorization", (None,))[0]
        if target.path == f"{self.path}/register" and self.registration:
            return _json(*self._register(body))
        if target.path == f"{self.path}/token":
            return _json(*self._token(body, authorization))
        return _json(404, {"error": "not_found"})

    def _register(self, body: bytes) -> tuple[int, dict[str, Any]]:
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            return 400, {"error": "invalid_client_metadata"}
        self.requests.append(RecordedRequest("register", request))
        method = request.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in self.auth_methods:
            return 400, {"error": "invalid_client_metadata", "error_description": f"{method} is not supported"}
        client_id = "client-" + secrets.token_hex(6)
        secret = None if method == "none" else secrets.token_urlsafe(16)
        with self._lock:
            self._clients[client_id] = _Client(secret, method, tuple(request.get("redirect_uris") or ()))
        answer: dict[str, Any] = {"client_id": client_id, "token_endpoint_auth_method": method,
                                  **{k: v for k, v in request.items() if k != "token_endpoint_auth_method"}}
        if secret is not None:
            answer["client_secret"] = secret
        return 201, answer

    def _authorize(self, query: dict[str, list[str]]) -> tuple[int, Any, list[tuple[str, str]]]:
        params = {name: values[0] for name, values in query.items()}
        self.requests.append(RecordedRequest("authorize", params))
        client_id = params.get("client_id", "")
        redirect_uri = params.get("redirect_uri", "")
        with self._lock:
            client = self._clients.get(client_id)
        known = client is not None or (self.client_id_metadata_documents and client_id.startswith("https://"))
        if not known or not redirect_uri:
            return 400, {"error": "invalid_request", "error_description": "unknown client or no redirect_uri"}, []
        if client is not None and client.redirect_uris and redirect_uri not in client.redirect_uris:
            return 400, {"error": "invalid_request", "error_description": "redirect_uri not registered"}, []
        reply: dict[str, str] = {}
        if params.get("code_challenge_method") != "S256" or not params.get("code_challenge"):
            reply["error"] = "invalid_request"
        else:
            code = secrets.token_urlsafe(16)
            scopes = tuple(params.get("scope", "").split())
            with self._lock:
                self._codes[code] = _Grant(client_id, scopes, params.get("resource"), redirect_uri,
                                           params["code_challenge"])
            reply["code"] = code
        if "state" in params:
            reply["state"] = params["state"]
        if self.iss_parameter:
            reply["iss"] = self.issuer
        separator = "&" if urlsplit(redirect_uri).query else "?"
        return 302, None, [("Location", redirect_uri + separator + urlencode(reply))]

    def _authenticate(self, form: dict[str, str], header: str | None) -> tuple[str | None, str | None]:
        """(client_id, error): check the client by its registered token endpoint auth method."""
        basic_id = basic_secret = None
        if header and header.lower().startswith("basic "):
            try:
                decoded = base64.b64decode(header[6:], validate=True).decode("utf-8")
            except ValueError:
                return None, "invalid_client"
            raw_id, _, raw_secret = decoded.partition(":")
            basic_id, basic_secret = unquote_plus(raw_id), unquote_plus(raw_secret)
        client_id = basic_id or form.get("client_id")
        if not client_id:
            return None, "invalid_client"
        with self._lock:
            client = self._clients.get(client_id)
        if client is None:
            if self.client_id_metadata_documents and client_id.startswith("https://") and basic_id is None:
                return client_id, None
            return None, "invalid_client"
        if client.method == "client_secret_basic":
            ok = basic_id is not None and secrets.compare_digest(basic_secret or "", client.secret or "")
        elif client.method == "client_secret_post":
            ok = basic_id is None and secrets.compare_digest(form.get("client_secret", ""), client.secret or "")
        else:
            ok = basic_id is None and "client_secret" not in form
        return (client_id, None) if ok else (None, "invalid_client")

    def _token(self, body: bytes, header: str | None) -> tuple[int, dict[str, Any]]:
        form = {name: values[0] for name, values in parse_qs(body.decode("ascii", "replace")).items()}
        basic = None
        if header and header.lower().startswith("basic "):
            try:
                basic = unquote_plus(base64.b64decode(header[6:]).decode("utf-8").partition(":")[0])
            except ValueError:
                basic = ""
        self.requests.append(RecordedRequest("token", dict(form), basic))
        client_id, error = self._authenticate(form, header)
        if error is not None or client_id is None:
            return 401, {"error": "invalid_client"}
        grant_type = form.get("grant_type")
        with self._lock:
            if grant_type == "authorization_code":
                grant = self._codes.pop(form.get("code", ""), None)
                if grant is None or grant.client_id != client_id or grant.redirect_uri != form.get("redirect_uri"):
                    return 400, {"error": "invalid_grant"}
                digest = hashlib.sha256(form.get("code_verifier", "").encode("ascii", "replace")).digest()
                if base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii") != grant.challenge:
                    return 400, {"error": "invalid_grant", "error_description": "PKCE verification failed"}
                if form.get("resource") != grant.resource:
                    return 400, {"error": "invalid_target"}
            elif grant_type == "refresh_token":
                grant = self._refresh.pop(form.get("refresh_token", ""), None)
                if grant is None or grant.client_id != client_id:
                    return 400, {"error": "invalid_grant"}
            elif grant_type == "client_credentials":
                if self._clients.get(client_id) is None or self._clients[client_id].method == "none":
                    return 400, {"error": "unauthorized_client"}
                grant = _Grant(client_id, tuple(form.get("scope", "").split()), form.get("resource"))
            else:
                return 400, {"error": "unsupported_grant_type"}
            scopes = self.grant_scopes if self.grant_scopes is not None else grant.scopes
            access = "at-" + secrets.token_urlsafe(24)
            expires_at = None if self.expires_in is None else time.time() + self.expires_in
            self._tokens[access] = AccessToken(scopes=scopes, audience=(grant.resource,) if grant.resource else (),
                                               expires_at=expires_at, client_id=client_id)
            answer: dict[str, Any] = {"access_token": access, "token_type": "Bearer", "scope": " ".join(scopes)}
            if self.expires_in is not None:
                answer["expires_in"] = self.expires_in
            if self.refresh_tokens and grant_type != "client_credentials":
                refresh = "rt-" + secrets.token_urlsafe(24)
                self._refresh[refresh] = _Grant(client_id, grant.scopes, grant.resource)
                answer["refresh_token"] = refresh
        return 200, answer


def _json(status: int, document: Any = None, headers: Sequence[tuple[str, str]] = ()) -> Response:
    body = b"" if document is None else json.dumps(document).encode("utf-8")
    head = [("Content-Type", "application/json")] if document is not None else []
    return Response(status, [*head, *headers], body)
