"""The server's authorization policy: Bearer validation, owned WWW-Authenticate, RFC 9728 metadata."""

from __future__ import annotations

import io
import json
import logging
import time
from typing import Any

import pytest

from zigai import mcp
from zigai.mcp.auth.discovery import AuthDiscovery, parse_bearer_challenge
from zigai.mcp.auth.server import AccessToken, BearerAuthPolicy
from zigai.mcp.server.http import handle_http, wsgi_app
from zigai.security import UrlPolicy
from zigai.transport import HttpTransport, TransportRequest

RESOURCE = "http://127.0.0.1:8123/mcp"
ISSUER = "http://127.0.0.1:8124"
GOOD = AccessToken(scopes=("read",), audience=(RESOURCE,))
TOKENS: dict[str, AccessToken] = {
    "good": GOOD,
    "other-audience": AccessToken(scopes=("read",), audience=("http://127.0.0.1:9999/mcp",)),
    "urn-audience": AccessToken(scopes=("read",), audience=("urn:other",)),
    "tok-expired": AccessToken(scopes=("read",), audience=(RESOURCE,), expires_at=time.time() - 1),
    "no-write": AccessToken(scopes=("read",), audience=("HTTP://127.0.0.1:8123/mcp/",)),
}


def _verify(token: str) -> AccessToken | None:
    if token == "boom":
        raise RuntimeError("verifier crashed")
    return TOKENS.get(token)


def _policy(**options: Any) -> BearerAuthPolicy:
    return BearerAuthPolicy(RESOURCE, [ISSUER], _verify, required_scopes=("read",),
                            scopes_for=lambda method, name: ("write",) if name == "danger" else (), **options)


def _post(policy: BearerAuthPolicy, *authorization: str, name: str = "safe") -> Any:
    server = mcp.Server("s", "1")
    body = b"{}"
    headers = [("Host", "127.0.0.1:8123"), ("Content-Type", "application/json"),
               ("Accept", "application/json, text/event-stream"), ("Content-Length", str(len(body))),
               ("Mcp-Method", "tools/call"), ("Mcp-Name", name)]
    headers += [("Authorization", value) for value in authorization]
    return handle_http(server, None, method="POST", headers=headers, read_body=lambda n: body, tls=False,
                       auth=policy, path="/mcp")


def _challenge(reply: Any) -> Any:
    values = [value for key, value in reply.headers if key == "WWW-Authenticate"]
    assert len(values) == 1
    return parse_bearer_challenge(values[0])


def test_a_request_without_a_token_gets_a_401_challenge_without_an_error_code() -> None:
    reply = _post(_policy())
    assert reply.status == 401
    challenge = _challenge(reply)
    assert challenge.error is None and challenge.scope == ("read",)
    assert challenge.resource_metadata == "http://127.0.0.1:8123/.well-known/oauth-protected-resource/mcp"
    assert json.loads(reply.body)["error"] == "invalid_token"


@pytest.mark.parametrize("token", ["nope", "other-audience", "urn-audience", "tok-expired", "boom"])
def test_unusable_tokens_are_401_invalid_token(token: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="zigai.mcp.auth_server"):
        reply = _post(_policy(), f"Bearer {token}")
    assert reply.status == 401 and _challenge(reply).error == "invalid_token"
    assert token.encode() not in reply.body and token not in caplog.text
    assert all(token not in value for _key, value in reply.headers)


@pytest.mark.parametrize("values", [("Basic abc",), ("Bearer",), ("Bearer a b",), ("Bearer good", "Bearer good")])
def test_malformed_authorization_is_400_invalid_request(values: tuple[str, ...]) -> None:
    reply = _post(_policy(), *values)
    assert reply.status == 400 and _challenge(reply).error == "invalid_request"


def test_a_missing_scope_is_403_naming_every_scope_the_request_needs() -> None:
    reply = _post(_policy(), "Bearer no-write", name="danger")
    assert reply.status == 403
    challenge = _challenge(reply)
    assert challenge.insufficient_scope and challenge.scope == ("read", "write")


def test_a_valid_token_reaches_the_dispatcher() -> None:
    reply = _post(_policy(), "Bearer good")  # the body b"{}" is then refused by the dispatcher itself
    assert json.loads(reply.body)["jsonrpc"] == "2.0"
    assert not [key for key, _value in reply.headers if key == "WWW-Authenticate"]


def test_the_policy_renders_metadata_and_challenges() -> None:
    policy = _policy(resource_name="Demo", realm='r"1')
    assert policy.metadata() == {"resource": RESOURCE, "authorization_servers": [ISSUER],
                                 "bearer_methods_supported": ["header"], "scopes_supported": ["read"],
                                 "resource_name": "Demo"}
    value = policy.challenge(error="invalid_token", description='say "hi"')
    challenge = parse_bearer_challenge(value)
    assert challenge is not None and challenge.realm == 'r"1' and challenge.error_description == 'say "hi"'
    assert "Demo" in repr(policy) or ISSUER in repr(policy)
    with pytest.raises(ValueError):
        BearerAuthPolicy(RESOURCE, [], _verify)


def test_serve_http_publishes_the_metadata_our_discovery_accepts() -> None:
    server = mcp.Server("s", "1")
    with mcp.serve_http(server, auth=lambda url: BearerAuthPolicy(url, [ISSUER], _verify,
                                                                   scopes_supported=["a"])) as running:
        policy = UrlPolicy.local_development()
        with AuthDiscovery(url_policy=policy) as discovery:
            found = discovery.protected_resource(running.url)
        assert found.resource == running.url and found.authorization_servers == (ISSUER,)
        assert found.scopes_supported == ("a",)
        with HttpTransport(url_policy=policy) as http:  # other GETs are still refused
            assert http.send(TransportRequest("GET", running.url)).status == 405


def test_serve_http_accepts_a_ready_policy_and_a_failing_factory_releases_the_port() -> None:
    with mcp.serve_http(mcp.Server("s", "1"), auth=_policy()) as running:
        with HttpTransport(url_policy=UrlPolicy.local_development()) as http:
            reply = http.send(TransportRequest("POST", running.url, (("Content-Type", "application/json"),
                                                                     ("Accept", "application/json, text/event-stream")),
                                               b"{}"))
        assert reply.status == 401

    def broken(url: str) -> BearerAuthPolicy:
        raise RuntimeError("no policy")

    with pytest.raises(RuntimeError, match="no policy"):
        mcp.serve_http(mcp.Server("s", "1"), auth=broken)


def test_wsgi_app_checks_the_token_and_serves_the_metadata_path() -> None:
    app = wsgi_app(mcp.Server("s", "1"), auth=_policy())
    seen: list[str] = []

    def call(method: str, path: str, **extra: str) -> bytes:
        environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "HTTP_HOST": "127.0.0.1:8123",
                   "wsgi.input": io.BytesIO(b"{}"), "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": "2",
                   "HTTP_ACCEPT": "application/json, text/event-stream", **extra}
        return b"".join(app(environ, lambda status, headers: seen.append(status)))

    assert json.loads(call("GET", "/.well-known/oauth-protected-resource/mcp"))["resource"] == RESOURCE
    call("POST", "/mcp")
    assert seen == ["200 OK", "401 Unauthorized"]
