"""The loopback authorization server refuses what a real one refuses (it is the peer of our tests)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from zigai.mcp.auth.discovery import pkce_pair
from zigai.mcp.auth.testing import LoopbackAuthorizationServer
from zigai.security import UrlPolicy
from zigai.transport import HttpTransport, RedirectPolicy, TransportRequest

REDIRECT = "http://127.0.0.1:9/cb"
FORM = (("Content-Type", "application/x-www-form-urlencoded"),)


@pytest.fixture()
def site() -> Iterator[tuple[LoopbackAuthorizationServer, HttpTransport]]:
    with LoopbackAuthorizationServer(path="/tenant", clients={"conf": "pw", "pub": None},
                                     auth_methods=["none", "client_secret_post"]) as server, \
            HttpTransport(url_policy=UrlPolicy.local_development(),
                          redirect_policy=RedirectPolicy.return_response) as http:
        yield server, http


def _send(http: HttpTransport, method: str, url: str, body: bytes | None = None,
          headers: tuple[tuple[str, str], ...] = ()) -> tuple[int, Any]:
    response = http.send(TransportRequest(method, url, headers, body))
    text = response.body
    return response.status, (json.loads(text) if text else response.headers.get("location"))


def _code(server: LoopbackAuthorizationServer, http: HttpTransport, client_id: str = "pub",
          challenge: str | None = None, **extra: str) -> str:
    pair = pkce_pair()
    query = {"client_id": client_id, "redirect_uri": REDIRECT, "code_challenge": challenge or pair.challenge,
             "code_challenge_method": "S256", "resource": "http://127.0.0.1:1/mcp", **extra}
    status, location = _send(http, "GET", f"{server.issuer}/authorize?{urlencode(query)}")
    assert status == 302
    return parse_qs(urlsplit(location).query)["code"][0] + " " + pair.verifier


def test_metadata_registration_and_unknown_routes(site: Any) -> None:
    server, http = site
    assert "LoopbackAuthorizationServer" in repr(server) and server.issuer.endswith("/tenant")
    status, metadata = _send(http, "GET", f"{server.origin}/.well-known/oauth-authorization-server/tenant")
    assert status == 200 and metadata == server.metadata() and "scopes_supported" not in metadata
    assert _send(http, "GET", f"{server.origin}/nothing")[0] == 404
    assert _send(http, "POST", f"{server.origin}/nothing", b"")[0] == 404
    assert _send(http, "POST", f"{server.issuer}/register", b"x" * (64 * 1024 + 1))[0] == 413
    assert _send(http, "POST", f"{server.issuer}/register", b"[1]")[1]["error"] == "invalid_client_metadata"
    assert _send(http, "POST", f"{server.issuer}/register", b"not json")[1]["error"] == "invalid_client_metadata"
    status, answer = _send(http, "POST", f"{server.issuer}/register",
                           json.dumps({"token_endpoint_auth_method": "client_secret_basic"}).encode())
    assert status == 400 and "not supported" in answer["error_description"]
    status, answer = _send(http, "POST", f"{server.issuer}/register",
                           json.dumps({"token_endpoint_auth_method": "client_secret_post",
                                       "redirect_uris": [REDIRECT]}).encode())
    assert status == 201 and answer["client_secret"]
    query = urlencode({"client_id": answer["client_id"], "redirect_uri": "http://127.0.0.1:9/other"})
    assert _send(http, "GET", f"{server.issuer}/authorize?{query}")[1]["error_description"] == \
        "redirect_uri not registered"


def test_authorization_endpoint_refusals(site: Any) -> None:
    server, http = site
    assert _send(http, "GET", f"{server.issuer}/authorize?client_id=ghost&redirect_uri={REDIRECT}")[0] == 400
    status, location = _send(http, "GET", f"{server.issuer}/authorize?" + urlencode(
        {"client_id": "pub", "redirect_uri": REDIRECT + "?x=1"}))
    params = parse_qs(urlsplit(location).query)
    assert status == 302 and params["error"] == ["invalid_request"] and params["x"] == ["1"] and "state" not in params
    with pytest.raises(ValueError, match="HTTP 400"):
        server.approve(f"{server.issuer}/authorize?client_id=ghost")


@pytest.mark.parametrize(("form", "headers", "error"), [
    ({"grant_type": "authorization_code", "code": "nope", "redirect_uri": REDIRECT}, (), "invalid_grant"),
    ({"grant_type": "refresh_token", "refresh_token": "nope"}, (), "invalid_grant"),
    ({"grant_type": "client_credentials"}, (), "unauthorized_client"),
    ({"grant_type": "password"}, (), "unsupported_grant_type"),
    ({"grant_type": "client_credentials"}, (("Authorization", "Basic !!!"),), "invalid_client"),
    ({"grant_type": "client_credentials"}, (("Authorization", "Basic " + base64.b64encode(b"conf:pw").decode()),),
     "invalid_client"),  # registered for client_secret_post, not basic
    ({"grant_type": "client_credentials", "client_id": "ghost"}, (), "invalid_client"),
    ({"grant_type": "client_credentials"}, (), "invalid_client"),
])
def test_token_endpoint_refusals(site: Any, form: dict[str, str], headers: Any, error: str) -> None:
    server, http = site
    if "client_id" not in form and not headers:
        form = {**form, "client_id": "pub"} if error != "invalid_client" else form
    status, answer = _send(http, "POST", f"{server.issuer}/token", urlencode(form).encode(), FORM + tuple(headers))
    assert status in (400, 401) and answer["error"] == error


def test_codes_are_bound_to_pkce_and_resource_and_used_once(site: Any) -> None:
    server, http = site
    code, verifier = _code(server, http).split()
    base = {"grant_type": "authorization_code", "client_id": "pub", "redirect_uri": REDIRECT, "code": code}
    bad = _send(http, "POST", f"{server.issuer}/token", urlencode({**base, "code_verifier": "x" * 43}).encode(), FORM)
    assert bad[1]["error_description"] == "PKCE verification failed"
    code, verifier = _code(server, http).split()
    wrong = {**base, "code": code, "code_verifier": verifier, "resource": "http://127.0.0.1:2/mcp"}
    assert _send(http, "POST", f"{server.issuer}/token", urlencode(wrong).encode(), FORM)[1]["error"] == \
        "invalid_target"
    code, verifier = _code(server, http, "conf").split()
    post = {**base, "client_id": "conf", "client_secret": "pw", "code": code, "code_verifier": verifier,
            "resource": "http://127.0.0.1:1/mcp"}
    status, answer = _send(http, "POST", f"{server.issuer}/token", urlencode(post).encode(), FORM)
    assert status == 200 and answer["token_type"] == "Bearer" and answer["refresh_token"]
    assert server.verify(answer["access_token"]).audience == ("http://127.0.0.1:1/mcp",)
    assert _send(http, "POST", f"{server.issuer}/token", urlencode(post).encode(), FORM)[1]["error"] == "invalid_grant"


def test_tokens_without_lifetime_or_refresh() -> None:
    with LoopbackAuthorizationServer(clients={"svc": "pw"}, auth_methods=["client_secret_post"], expires_in=None,
                                     refresh_tokens=False) as server, \
            HttpTransport(url_policy=UrlPolicy.local_development()) as http:
        form = urlencode({"grant_type": "client_credentials", "client_id": "svc", "client_secret": "pw"}).encode()
        status, answer = _send(http, "POST", f"{server.issuer}/token", form, FORM)
        assert status == 200 and "expires_in" not in answer and "refresh_token" not in answer
        assert server.verify(answer["access_token"]).audience == ()
