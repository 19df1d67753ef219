"""MCP authorization end to end: a zigai client, a Bearer-protected zigai server, a loopback AS.

Every test talks real HTTP on 127.0.0.1: the MCP server is ``serve_http`` with a
``BearerAuthPolicy`` whose verifier is the ``LoopbackAuthorizationServer``'s, and the client is
``StreamableHttpTransport(auth=OAuthProvider(...))``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from zigai import mcp
from zigai.mcp.auth.discovery import AuthorizationResponseRejected, InvalidAuthMetadata
from zigai.mcp.auth.flow import AuthorizationFailed, AuthorizationRejected, OAuthProvider
from zigai.mcp.auth.server import AccessToken, BearerAuthPolicy
from zigai.mcp.auth.testing import LoopbackAuthorizationServer
from zigai.mcp.auth.tokens import (
    ClientRegistrationFailed,
    MemoryCredentialStore,
    OAuthClient,
    TokenRequestFailed,
    TokenResponseTooLarge,
    TokenSet,
    choose_auth_method,
)
from zigai.reflect import tool
from zigai.security import UrlPolicy
from zigai.transport import HttpTransport, Transport, TransportRequest

LOCAL = UrlPolicy.local_development()
REDIRECT = "http://127.0.0.1:9/callback"


def _echo(text: str) -> str:
    """Echo the text back."""
    return text


def _mcp_server() -> mcp.Server:
    server = mcp.Server("protected", "1.0")
    server.add_tool(tool("echo", None, _echo))
    return server


class _Recorder(Transport):
    """Wraps the HTTP transport the MCP client uses and keeps every request it sends."""

    def __init__(self) -> None:
        self.inner = HttpTransport(url_policy=LOCAL)
        self.sent: list[TransportRequest] = []

    def send(self, request: TransportRequest) -> Any:
        self.sent.append(request)
        return self.inner.send(request)

    def stream_lines(self, request: TransportRequest) -> Any:
        self.sent.append(request)
        return self.inner.stream_lines(request)

    def close(self) -> None:
        self.inner.close()

    def authorization_headers(self) -> list[list[str]]:
        return [[v for k, v in request.headers if k.lower() == "authorization"] for request in self.sent]


@contextmanager
def _protected(auth_server: LoopbackAuthorizationServer, **policy: Any) -> Iterator[mcp.HttpServerHandle]:
    def build(url: str) -> BearerAuthPolicy:
        return BearerAuthPolicy(url, [auth_server.issuer], auth_server.verify, **policy)

    with mcp.serve_http(_mcp_server(), auth=build) as running:
        yield running


def _provider(auth_server: LoopbackAuthorizationServer, **options: Any) -> OAuthProvider:
    options.setdefault("redirect_uri", REDIRECT)
    options.setdefault("redirect_handler", auth_server.approve)
    return OAuthProvider(url_policy=LOCAL, **options)


@contextmanager
def _client(url: str, provider: OAuthProvider, recorder: _Recorder | None = None) -> Iterator[mcp.Client]:
    transport = mcp.StreamableHttpTransport(url, url_policy=LOCAL, auth=provider, transport=recorder)
    with mcp.Client(transport, protocol_version=mcp.PROTOCOL_VERSION, default_timeout_ms=10_000) as client:
        yield client
    if recorder is not None:
        recorder.close()


def _requests(auth_server: LoopbackAuthorizationServer, kind: str) -> list[dict[str, Any]]:
    return [request.params for request in auth_server.requests if request.kind == kind]


# -- the whole authorization-code flow ----------------------------------------------------------


def test_authorization_code_flow_registers_authorizes_and_sends_one_bearer_header() -> None:
    with LoopbackAuthorizationServer(scopes_supported=["tools:read"]) as auth_server, \
            _protected(auth_server, required_scopes=["tools:read"]) as running, \
            _provider(auth_server) as provider:
        recorder = _Recorder()
        with _client(running.url, provider, recorder) as client:
            assert [t.name for t in client.list_tools().items] == ["echo"]
            assert client.call_tool("echo", {"text": "hi"}).content[0].text == "hi"  # type: ignore[union-attr]
        resource = running.url  # the canonical resource of http://127.0.0.1:PORT/mcp is the URL itself
        assert auth_server.kinds() == ["metadata", "register", "authorize", "token"]
        registration, = _requests(auth_server, "register")
        assert registration["application_type"] == "native"
        assert registration["redirect_uris"] == [REDIRECT]
        assert registration["token_endpoint_auth_method"] == "none"
        assert "refresh_token" in registration["grant_types"]
        authorize, = _requests(auth_server, "authorize")
        assert authorize["resource"] == resource and authorize["code_challenge_method"] == "S256"
        assert authorize["scope"] == "tools:read"  # from the 401 challenge
        token, = _requests(auth_server, "token")
        assert token["resource"] == resource and token["grant_type"] == "authorization_code"
        digest = hashlib.sha256(token["code_verifier"].encode()).digest()
        assert base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == authorize["code_challenge"]
        # first POST unauthenticated, then one Bearer header on every attempt, never in a body
        headers = recorder.authorization_headers()
        assert headers[0] == [] and all(len(h) == 1 and h[0].startswith("Bearer ") for h in headers[1:])
        secret = headers[1][0].split(" ", 1)[1]
        assert all(secret.encode() not in (request.body or b"") for request in recorder.sent)
        assert len(recorder.sent) == 3  # 401, retried tools/list, tools/call


def test_offline_access_is_requested_only_when_the_server_lists_it() -> None:
    for listed in (["tools:read", "offline_access"], ["tools:read"]):
        with LoopbackAuthorizationServer(scopes_supported=listed) as auth_server, \
                _protected(auth_server, required_scopes=["tools:read"]) as running, \
                _provider(auth_server) as provider, _client(running.url, provider) as client:
            client.list_tools()
            scope = _requests(auth_server, "authorize")[0]["scope"].split()
            assert ("offline_access" in scope) == ("offline_access" in listed)


def test_scope_comes_from_scopes_supported_and_is_omitted_when_nothing_names_one() -> None:
    with LoopbackAuthorizationServer() as auth_server, \
            _protected(auth_server, scopes_supported=["a", "b"]) as running, \
            _provider(auth_server) as provider, _client(running.url, provider) as client:
        client.list_tools()
        assert _requests(auth_server, "authorize")[0]["scope"] == "a b"
    with LoopbackAuthorizationServer() as auth_server, _protected(auth_server) as running, \
            _provider(auth_server) as provider, _client(running.url, provider) as client:
        client.list_tools()
        assert "scope" not in _requests(auth_server, "authorize")[0]


# -- step-up, bounds and refusals --------------------------------------------------------------


def _needs_call_scope(method: str, name: str | None) -> tuple[str, ...]:
    return ("tools:call",) if method == "tools/call" else ()


def test_insufficient_scope_steps_up_with_the_union_of_granted_and_challenged_scopes() -> None:
    with LoopbackAuthorizationServer() as auth_server, \
            _protected(auth_server, required_scopes=["tools:read"], scopes_for=_needs_call_scope) as running, \
            _provider(auth_server) as provider, _client(running.url, provider) as client:
        client.list_tools()
        assert client.call_tool("echo", {"text": "x"}).content[0].text == "x"  # type: ignore[union-attr]
        scopes = [request["scope"] for request in _requests(auth_server, "authorize")]
        assert scopes == ["tools:read", "tools:read tools:call"]


@pytest.mark.parametrize("max_step_ups", [0, 2])
def test_step_ups_are_bounded_per_request(max_step_ups: int) -> None:
    with LoopbackAuthorizationServer(grant_scopes=["tools:read"]) as auth_server, \
            _protected(auth_server, scopes_for=_needs_call_scope) as running, \
            _provider(auth_server, max_step_ups=max_step_ups) as provider, _client(running.url, provider) as client:
        client.list_tools()
        with pytest.raises(AuthorizationRejected) as caught:
            client.call_tool("echo", {"text": "x"})
        assert caught.value.status == 403 and caught.value.error == "insufficient_scope"
        assert len(_requests(auth_server, "authorize")) == 1 + max_step_ups


def test_a_second_401_after_a_fresh_token_is_not_retried_again() -> None:
    with LoopbackAuthorizationServer() as auth_server:
        policy = {"verify": lambda token: None}
        with mcp.serve_http(_mcp_server(), auth=lambda url: BearerAuthPolicy(url, [auth_server.issuer],
                                                                             **policy)) as running, \
                _provider(auth_server) as provider:
            recorder = _Recorder()
            with _client(running.url, provider, recorder) as client, pytest.raises(AuthorizationRejected) as caught:
                client.list_tools()
            assert caught.value.status == 401 and caught.value.error == "invalid_token"
            assert len(recorder.sent) == 2 and len(_requests(auth_server, "token")) == 1
            token = recorder.authorization_headers()[1][0].split(" ", 1)[1]
            assert token not in str(caught.value) and token not in repr(caught.value)


def test_an_expired_token_is_refreshed_inside_the_next_request() -> None:
    with LoopbackAuthorizationServer(expires_in=5) as auth_server, _protected(auth_server) as running, \
            _provider(auth_server) as provider, _client(running.url, provider) as client:
        client.list_tools()  # expires_in 5 s is inside the 30 s skew: the token counts as expired ...
        client.list_tools()  # ... so this request refreshes it first
        refresh = [r for r in _requests(auth_server, "token") if r["grant_type"] == "refresh_token"]
        assert len(refresh) == 1 and refresh[0]["resource"] == running.url
        assert len(_requests(auth_server, "authorize")) == 1


def test_a_revoked_token_with_a_refresh_token_is_refreshed_once_instead_of_reauthorizing() -> None:
    with LoopbackAuthorizationServer() as auth_server, _protected(auth_server) as running, \
            _provider(auth_server) as provider, _client(running.url, provider) as client:
        client.list_tools()
        auth_server.revoke_tokens()
        client.list_tools()
        grants = [r["grant_type"] for r in _requests(auth_server, "token")]
        assert grants == ["authorization_code", "refresh_token"]
        assert len(_requests(auth_server, "authorize")) == 1


def test_authorization_server_migration_registers_again_and_never_reuses_the_old_client() -> None:
    with LoopbackAuthorizationServer() as first, LoopbackAuthorizationServer() as second:
        issuers = [first.issuer]

        def verify(token: str) -> AccessToken | None:
            return (first.verify(token) if issuers[0] == first.issuer else None) or second.verify(token)

        class Policy(BearerAuthPolicy):
            def metadata(self) -> dict[str, Any]:
                return {**super().metadata(), "authorization_servers": list(issuers)}

        with mcp.serve_http(_mcp_server(), auth=lambda url: Policy(url, [first.issuer], verify)) as running, \
                OAuthProvider(url_policy=LOCAL, redirect_uri=REDIRECT,
                              redirect_handler=lambda url: (first if url.startswith(first.issuer) else second)
                              .approve(url)) as provider, \
                _client(running.url, provider) as client:
            client.list_tools()
            issuers[0] = second.issuer  # the server moves; tokens from the first AS stop working
            client.list_tools()
            old_client = _requests(first, "authorize")[0]["client_id"]
            assert len(_requests(second, "register")) == 1
            assert all(request["client_id"] != old_client for request in _requests(second, "authorize"))
            assert provider.store.client(first.issuer) != provider.store.client(second.issuer)


# -- clients and grants -----------------------------------------------------------------------


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_client_credentials_with_a_pre_registered_confidential_client(method: str) -> None:
    with LoopbackAuthorizationServer(auth_methods=[method], registration=False,
                                     clients={"svc": "s3cret+/="}) as auth_server, \
            _protected(auth_server, required_scopes=["jobs"]) as running, \
            OAuthProvider(grant="client_credentials", url_policy=LOCAL,
                          client=OAuthClient("svc", "s3cret+/=", method, issuer=auth_server.issuer)) as provider, \
            _client(running.url, provider) as client:
        client.list_tools()
        token, = auth_server.requests[-1:]
        assert token.kind == "token" and token.params["grant_type"] == "client_credentials"
        assert token.params["scope"] == "jobs" and token.params["resource"] == running.url
        if method == "client_secret_basic":
            assert token.basic_client_id == "svc" and "client_secret" not in token.params
        else:
            assert token.basic_client_id is None and token.params["client_secret"] == "s3cret+/="


def test_registration_asks_for_a_secret_method_when_the_server_has_no_public_clients() -> None:
    with LoopbackAuthorizationServer(auth_methods=["client_secret_post"]) as auth_server, \
            _protected(auth_server) as running, _provider(auth_server) as provider, \
            _client(running.url, provider) as client:
        client.list_tools()
        assert _requests(auth_server, "register")[0]["token_endpoint_auth_method"] == "client_secret_post"
        assert "client_secret" in _requests(auth_server, "token")[0]


def test_a_client_id_metadata_document_url_replaces_registration_where_supported() -> None:
    url = "https://app.example/oauth/client.json"
    with LoopbackAuthorizationServer(client_id_metadata_documents=True) as auth_server, \
            _protected(auth_server) as running, _provider(auth_server, client_metadata_url=url) as provider, \
            _client(running.url, provider) as client:
        client.list_tools()
        assert "register" not in auth_server.kinds()
        assert _requests(auth_server, "authorize")[0]["client_id"] == url


def test_an_issuer_less_pre_registered_client_is_bound_to_the_first_issuer() -> None:
    with LoopbackAuthorizationServer(registration=False, clients={"app": None}) as auth_server, \
            _protected(auth_server) as running, _provider(auth_server, client=OAuthClient("app")) as provider, \
            _client(running.url, provider) as client:
        client.list_tools()
        assert provider.store.client(auth_server.issuer) == OAuthClient("app", issuer=auth_server.issuer)


def test_no_client_and_no_registration_is_a_named_error() -> None:
    with LoopbackAuthorizationServer(registration=False) as auth_server, _protected(auth_server) as running, \
            _provider(auth_server) as provider, _client(running.url, provider) as client, \
            pytest.raises(AuthorizationFailed) as caught:
        client.list_tools()
    assert caught.value.reason == "no_client"


def test_a_server_without_pkce_s256_is_refused_before_any_authorization_request() -> None:
    with LoopbackAuthorizationServer(pkce_methods=None) as auth_server, _protected(auth_server) as running, \
            _provider(auth_server) as provider, _client(running.url, provider) as client, \
            pytest.raises(AuthorizationFailed) as caught:
        client.list_tools()
    assert caught.value.reason == "pkce_unsupported" and "authorize" not in auth_server.kinds()


def test_without_a_redirect_handler_the_code_flow_is_a_named_error() -> None:
    with LoopbackAuthorizationServer() as auth_server, _protected(auth_server) as running, \
            OAuthProvider(url_policy=LOCAL) as provider, _client(running.url, provider) as client, \
            pytest.raises(AuthorizationFailed) as caught:
        client.list_tools()
    assert caught.value.reason == "no_redirect_handler"


def test_a_redirect_to_another_uri_or_a_repeated_parameter_is_refused() -> None:
    with LoopbackAuthorizationServer() as auth_server, _protected(auth_server) as running:
        elsewhere = _provider(auth_server, redirect_handler=lambda url: "http://127.0.0.1:9/other?code=x")
        with elsewhere, _client(running.url, elsewhere) as client, pytest.raises(AuthorizationFailed) as caught:
            client.list_tools()
        assert caught.value.reason == "redirect_mismatch"
        repeated = _provider(auth_server, redirect_handler=lambda url: auth_server.approve(url) + "&code=again")
        with repeated, _client(running.url, repeated) as client, pytest.raises(AuthorizationResponseRejected):
            client.list_tools()
        assert not [r for r in _requests(auth_server, "token")]


def test_a_wrong_iss_stops_the_flow_before_the_code_is_exchanged() -> None:
    with LoopbackAuthorizationServer() as auth_server, _protected(auth_server) as running:
        def forged(url: str) -> str:
            return auth_server.approve(url).replace("iss=", "iss=x")

        with _provider(auth_server, redirect_handler=forged) as provider, _client(running.url, provider) as client, \
                pytest.raises(AuthorizationResponseRejected) as caught:
            client.list_tools()
        assert caught.value.reason == "iss" and "token" not in auth_server.kinds()


def test_resource_metadata_for_another_server_is_refused_before_authorization() -> None:
    with LoopbackAuthorizationServer() as auth_server:
        def build(url: str) -> BearerAuthPolicy:
            policy = BearerAuthPolicy(url, [auth_server.issuer], auth_server.verify)
            policy.metadata = lambda: {"resource": "https://evil.example/mcp",  # type: ignore[method-assign]
                                       "authorization_servers": [auth_server.issuer]}
            return policy

        with mcp.serve_http(_mcp_server(), auth=build) as running, _provider(auth_server) as provider, \
                _client(running.url, provider) as client, pytest.raises(InvalidAuthMetadata):
            client.list_tools()
        assert auth_server.requests == []


# -- token endpoint answers -----------------------------------------------------------------


class _TokenSite:
    """A loopback AS whose token endpoint answers a fixed body (for bounds and malformed answers)."""

    def __init__(self, answer: bytes, status: int = 200) -> None:
        site = self
        self.answer, self.status = answer, status

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                body = json.dumps({"issuer": site.issuer, "authorization_endpoint": f"{site.issuer}/a",
                                   "token_endpoint": f"{site.issuer}/t", "registration_endpoint": f"{site.issuer}/r",
                                   "code_challenge_methods_supported": ["S256"]}).encode()
                self._send(200, body)

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path == "/r":
                    self._send(201, b'{"client_id": "c"}')
                else:
                    self._send(site.status, site.answer)

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _token_answer(answer: bytes, status: int = 200, **options: Any) -> TokenSet:
    site = _TokenSite(answer, status)
    try:
        with LoopbackAuthorizationServer() as unused, \
                mcp.serve_http(_mcp_server(), auth=lambda url: BearerAuthPolicy(url, [site.issuer],
                                                                                unused.verify)) as running:
            def approve(url: str) -> str:
                state = parse_qs(urlsplit(url).query)["state"][0]
                return f"{REDIRECT}?code=c&state={state}&iss={site.issuer}"

            with OAuthProvider(url_policy=LOCAL, redirect_uri=REDIRECT, redirect_handler=approve,
                               **options) as provider:
                return provider.authorize(running.url, None)
    finally:
        site.close()


def _padded(document: dict[str, Any], size: int) -> bytes:
    body = json.dumps({**document, "pad": ""}).encode()
    return json.dumps({**document, "pad": "x" * (size - len(body))}).encode()


def test_the_token_answer_is_bounded_at_exactly_the_limit() -> None:
    document = {"access_token": "tok", "token_type": "bearer", "scope": "a b"}
    tokens = _token_answer(_padded(document, 4096), max_response_bytes=4096)
    assert tokens.access_token == "tok" and tokens.scope == ("a", "b") and tokens.expires_at is None
    with pytest.raises(TokenResponseTooLarge) as caught:
        _token_answer(_padded(document, 4097), max_response_bytes=4096)
    assert caught.value.limit == 4096


@pytest.mark.parametrize(("answer", "status", "fragment"), [
    (b'{"error": "invalid_grant", "error_description": "code used twice"}', 400, "invalid_grant"),
    (b'{"access_token": "t", "token_type": "DPoP"}', 200, "only Bearer"),
    (b'{"token_type": "Bearer"}', 200, "no access_token"),
    (b'{"access_token": "t", "token_type": "Bearer", "expires_in": -1}', 200, "expires_in"),
    (b'{"access_token": "t", "token_type": "Bearer", "scope": 3}', 200, "scope"),
    (b'{"access_token": "t", "token_type": "Bearer", "refresh_token": ""}', 200, "refresh_token"),
    (b"not json", 502, "HTTP 502"),
])
def test_unusable_token_answers_are_named_errors(answer: bytes, status: int, fragment: str) -> None:
    with pytest.raises(TokenRequestFailed) as caught:
        _token_answer(answer, status)
    assert fragment in str(caught.value)


def test_secrets_stay_out_of_reprs() -> None:
    tokens = TokenSet("at-secret", "https://as.example", "https://mcp.example/mcp", refresh_token="rt-secret")
    client = OAuthClient("id", "cs-secret", "client_secret_post")
    store = MemoryCredentialStore()
    store.save_tokens(tokens)
    store.save_client("https://as.example", client)
    for text in (repr(tokens), repr(client), repr(store), str(store.client("https://as.example"))):
        assert "secret" not in text.replace("client_secret_post", "")


def test_choose_auth_method_prefers_basic_and_refuses_what_it_cannot_do() -> None:
    assert choose_auth_method(None, has_secret=True) == "client_secret_basic"
    assert choose_auth_method(["none", "client_secret_post"], has_secret=True) == "client_secret_post"
    assert choose_auth_method(["none"], has_secret=False) == "none"
    with pytest.raises(TokenRequestFailed, match="private_key_jwt"):
        choose_auth_method(["private_key_jwt"], has_secret=True)


def test_registration_without_a_client_id_is_a_named_error() -> None:
    site = _TokenSite(b"{}")
    try:
        from zigai.mcp.auth.discovery import AuthDiscovery
        from zigai.mcp.auth.tokens import register_client

        with HttpTransport(url_policy=LOCAL) as http, AuthDiscovery(transport=http, url_policy=LOCAL) as discovery:
            server = discovery.authorization_server(site.issuer)
            assert register_client(http, server, {"token_endpoint_auth_method": "none"},
                                   deadline=time.monotonic() + 10).client_id == "c"
            with pytest.raises(ClientRegistrationFailed, match="client_secret"):
                register_client(http, server, {"token_endpoint_auth_method": "client_secret_basic"}, deadline=time.monotonic() + 10)
    finally:
        site.close()


def test_provider_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="grant"):
        OAuthProvider(grant="password")
    with pytest.raises(ValueError, match="max_step_ups"):
        OAuthProvider(max_step_ups=-1)
    with pytest.raises(ValueError, match="redirect_uri"):
        OAuthProvider(redirect_uri="app://callback")
    with pytest.raises(ValueError, match="client_metadata_url"):
        OAuthProvider(client_metadata_url="http://app.example/client.json")
    with pytest.raises(ValueError, match="client_secret"):
        OAuthClient("id", None, "client_secret_basic")
    with pytest.raises(ValueError, match="auth_method"):
        OAuthClient("id", "s", "private_key_jwt")


def test_authorization_header_is_owned_by_the_transport_when_auth_is_given() -> None:
    with OAuthProvider() as provider, pytest.raises(mcp.InvalidMcpRequest, match="Authorization"):
        mcp.StreamableHttpTransport("https://mcp.example.com/mcp", auth=provider, headers=[("Authorization", "x")])


# -- the remaining paths ----------------------------------------------------------------------


def test_an_expired_token_without_a_refresh_token_is_dropped_and_a_new_flow_runs() -> None:
    with LoopbackAuthorizationServer(expires_in=5, refresh_tokens=False) as auth_server, \
            _protected(auth_server) as running, _provider(auth_server) as provider, \
            _client(running.url, provider) as client:
        client.list_tools()
        client.list_tools()
        assert len(_requests(auth_server, "authorize")) == 2


def test_a_failed_refresh_falls_back_to_a_new_authorization() -> None:
    with LoopbackAuthorizationServer() as auth_server, _protected(auth_server) as running, \
            _provider(auth_server) as provider, _client(running.url, provider) as client:
        client.list_tools()
        auth_server.revoke_tokens(refresh_tokens=True)
        client.list_tools()
        grants = [r["grant_type"] for r in _requests(auth_server, "token")]
        assert grants == ["authorization_code", "refresh_token", "authorization_code"]


def test_a_request_that_finds_a_newer_token_reuses_it_without_a_new_flow() -> None:
    with LoopbackAuthorizationServer() as auth_server, _protected(auth_server) as running, \
            _provider(auth_server) as provider:
        first = provider.authorize(running.url, None)
        assert provider.authorize(running.url, None, sent=None) is first
        assert provider.token_for(running.url) is first
        assert len(_requests(auth_server, "token")) == 1
        assert "bound" in repr(provider) and first.access_token not in repr(provider)


def test_a_cimd_client_is_remembered_for_refreshes() -> None:
    url = "https://app.example/oauth/client.json"
    with LoopbackAuthorizationServer(client_id_metadata_documents=True, expires_in=5) as auth_server, \
            _protected(auth_server) as running, _provider(auth_server, client_metadata_url=url) as provider, \
            _client(running.url, provider) as client:
        client.list_tools()
        client.list_tools()
        assert [r["grant_type"] for r in _requests(auth_server, "token")] == ["authorization_code", "refresh_token"]


class _ForgetfulStore(MemoryCredentialStore):
    forget = False

    def client(self, issuer: str) -> OAuthClient | None:
        return None if self.forget else super().client(issuer)


def test_a_store_that_lost_the_client_cannot_refresh_and_the_token_is_dropped() -> None:
    store = _ForgetfulStore()
    with LoopbackAuthorizationServer(expires_in=5) as auth_server, _protected(auth_server) as running, \
            _provider(auth_server, store=store) as provider:
        provider.authorize(running.url, None)
        store.forget = True
        assert provider.token_for(running.url) is None


def test_mapped_pre_registered_clients_and_a_shared_transport() -> None:
    with LoopbackAuthorizationServer(registration=False, clients={"app": None}) as auth_server, \
            _protected(auth_server) as running, HttpTransport(url_policy=LOCAL) as http, \
            _provider(auth_server, client={auth_server.issuer: OAuthClient("app")}, transport=http) as provider, \
            _client(running.url, provider) as client:
        client.list_tools()
        assert _requests(auth_server, "authorize")[0]["client_id"] == "app"


def test_client_credentials_register_a_confidential_client_and_refuse_public_only_servers() -> None:
    with LoopbackAuthorizationServer(auth_methods=["client_secret_basic"]) as auth_server, \
            _protected(auth_server) as running, \
            OAuthProvider(grant="client_credentials", url_policy=LOCAL) as provider, \
            _client(running.url, provider) as client:
        client.list_tools()
        registration, = _requests(auth_server, "register")
        assert registration["grant_types"] == ["client_credentials"] and "redirect_uris" not in registration
        assert "scope" not in _requests(auth_server, "token")[0]
    with LoopbackAuthorizationServer(auth_methods=["none"]) as auth_server, _protected(auth_server) as running, \
            OAuthProvider(grant="client_credentials", url_policy=LOCAL) as provider, \
            _client(running.url, provider) as client, pytest.raises(AuthorizationFailed) as caught:
        client.list_tools()
    assert caught.value.reason == "no_client"


def test_a_redirect_handler_returning_no_string_is_refused() -> None:
    with LoopbackAuthorizationServer() as auth_server, _protected(auth_server) as running, \
            _provider(auth_server, redirect_handler=lambda url: None) as provider, \
            _client(running.url, provider) as client, pytest.raises(AuthorizationFailed) as caught:
        client.list_tools()
    assert caught.value.reason == "redirect_mismatch"


def test_notifications_are_authorized_too_and_other_403s_are_plain_status_errors() -> None:
    with LoopbackAuthorizationServer() as auth_server, _protected(auth_server) as running, \
            _provider(auth_server) as provider:
        transport = mcp.StreamableHttpTransport(running.url, url_policy=LOCAL, auth=provider)
        with transport:
            transport.notify("notifications/cancelled",
                             b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}',
                             protocol_version="2026-07-28", deadline=time.monotonic() + 10)
        assert auth_server.kinds()[-1] == "token"
        browser = mcp.StreamableHttpTransport(running.url, url_policy=LOCAL, auth=provider,
                                              header_provider=lambda request: [("Origin", "https://evil.example")])
        with mcp.Client(browser, default_timeout_ms=10_000) as client, pytest.raises(mcp.InvalidRequest):
            client.list_tools()  # the deployment policy's 403 is not a challenge: no authorization runs
        assert len(_requests(auth_server, "authorize")) == 1


def test_token_requests_without_endpoints_or_answers_are_named_errors() -> None:
    from zigai.mcp.auth.discovery import AuthorizationServerMetadata
    from zigai.mcp.auth.tokens import register_client, request_token

    bare = AuthorizationServerMetadata("https://as.example.com", None, None)
    client = OAuthClient("c")
    deadline = time.monotonic() + 10
    with HttpTransport(url_policy=LOCAL) as http:
        with pytest.raises(TokenRequestFailed, match="no token_endpoint"):
            request_token(http, bare, client, {}, resource="r", deadline=deadline)
        with pytest.raises(ClientRegistrationFailed, match="no registration_endpoint"):
            register_client(http, bare, {}, deadline=deadline)
        dead = AuthorizationServerMetadata("http://127.0.0.1:9", None, "http://127.0.0.1:9/token")
        with pytest.raises(mcp.McpConnectionFailed):
            request_token(http, dead, client, {}, resource="r", deadline=deadline)
    site = _TokenSite(b'{"access_token": "t", "token_type": "Bearer", "padding": "' + b"x" * 100 + b'"}')
    try:
        server = AuthorizationServerMetadata(site.issuer, None, f"{site.issuer}/t",
                                             registration_endpoint=f"{site.issuer}/t")
        with HttpTransport(url_policy=LOCAL) as http:  # the transport allows more than max_bytes
            with pytest.raises(TokenResponseTooLarge):
                request_token(http, server, client, {}, resource="r", deadline=deadline, max_bytes=50)
            previous = TokenSet("old", site.issuer, "r", scope=("kept",), refresh_token="rt")
            refreshed = request_token(http, server, client, {}, resource="r", previous=previous, deadline=deadline)
            assert refreshed.scope == ("kept",) and refreshed.refresh_token == "rt"
            requested = request_token(http, server, client, {}, resource="r", requested_scope=("a",),
                                      deadline=deadline)
            assert requested.scope == ("a",) and requested.refresh_token is None
            with pytest.raises(ClientRegistrationFailed, match="no client_id"):
                register_client(http, server, {}, deadline=deadline)
        site.answer = b'{"client_id": "c", "token_endpoint_auth_method": "private_key_jwt"}'
        with HttpTransport(url_policy=LOCAL) as http, pytest.raises(ClientRegistrationFailed, match="not supported"):
            register_client(http, server, {}, deadline=deadline)
    finally:
        site.close()


def test_token_set_expiry_and_client_validation() -> None:
    forever = TokenSet("t", "i", "r")
    assert not forever.expired()
    soon = TokenSet("t", "i", "r", expires_at=1000.0)
    assert soon.expired(now=971.0) and not soon.expired(now=969.0) and not soon.expired(skew_s=0, now=999.0)
    with pytest.raises(ValueError, match="client_id"):
        OAuthClient("")
