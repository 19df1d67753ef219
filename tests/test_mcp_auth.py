"""zigai.mcp.auth.discovery: Bearer challenges, RFC 9728 / RFC 8414 discovery over real loopback HTTP, RFC 9207."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from zigai.errors import McpError
from zigai.mcp.auth.discovery import (
    MAX_CHALLENGE_BYTES,
    AuthDiscovery,
    AuthMetadataNotFound,
    AuthMetadataTooLarge,
    AuthorizationResponseRejected,
    AuthorizationServerMetadata,
    BearerChallenge,
    InvalidAuthChallenge,
    InvalidAuthMetadata,
    McpAuthError,
    ProtectedResourceMetadata,
    authorization_server_metadata_urls,
    canonical_resource,
    check_authorization_response,
    parse_bearer_challenge,
    pkce_pair,
    protected_resource_metadata_urls,
    select_scopes,
)
from zigai.mcp.errors import McpConnectionFailed
from zigai.security import UrlPolicy
from zigai.transport import HttpTransport, TransportRequest


class _Site:
    """A loopback HTTP server answering GETs from a path -> (status, body) table."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, bytes]] = {}
        self.requests: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                site.requests.append(self.path)
                status, body = site.routes.get(self.path, (404, b"not found"))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                if status in (301, 302, 307):
                    self.send_header("Location", "http://127.0.0.1:9/elsewhere")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def json(self, path: str, document: Any, status: int = 200) -> None:
        self.routes[path] = (status, json.dumps(document).encode())

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def site() -> Iterator[_Site]:
    served = _Site()
    yield served
    served.close()


@pytest.fixture
def discovery() -> Iterator[AuthDiscovery]:
    with AuthDiscovery(url_policy=UrlPolicy.local_development(), timeout_s=5.0) as found:
        yield found


def _prm(site: _Site, path: str = "/mcp", **extra: Any) -> dict[str, Any]:
    return {"resource": site.base + path, "authorization_servers": [site.base + "/as"], **extra}


def _asm(site: _Site, issuer_path: str = "/as", **extra: Any) -> dict[str, Any]:
    issuer = site.base + issuer_path
    return {"issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
            "code_challenge_methods_supported": ["S256"], **extra}


# -- WWW-Authenticate -----------------------------------------------------------------------


def test_bearer_challenge_fields_are_read_among_other_schemes() -> None:
    value = ('Basic realm="x", Bearer realm="mcp", error="insufficient_scope", '
             'scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/'
             'oauth-protected-resource/mcp", error_description="needs \\"write\\""')
    challenge = parse_bearer_challenge(value)
    assert challenge == BearerChallenge(
        resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        scope=("files:read", "files:write"), error="insufficient_scope",
        error_description='needs "write"', realm="mcp")
    assert challenge.insufficient_scope


def test_bearer_challenge_from_several_header_values_and_token68_schemes() -> None:
    challenge = parse_bearer_challenge(["Negotiate abc123==", "bearer scope=read"])
    assert challenge is not None and challenge.scope == ("read",) and not challenge.insufficient_scope
    assert parse_bearer_challenge("Bearer") == BearerChallenge()
    assert parse_bearer_challenge('Basic realm="x"') is None
    assert parse_bearer_challenge(None) is None


@pytest.mark.parametrize("value", [
    'Bearer realm="open', "Basic @@", 'Bearer scope="a", scope="b"', 'Bearer realm="a" scope="b"', "Bearer, Bearer",
    '=oops', 'Bearer realm=@',
])
def test_malformed_challenges_are_named_errors(value: str) -> None:
    with pytest.raises(InvalidAuthChallenge):
        parse_bearer_challenge(value)


def test_challenge_length_bound_at_the_limit_and_one_past() -> None:
    head = 'Bearer realm="'
    at_limit = head + "r" * (MAX_CHALLENGE_BYTES - len(head) - 1) + '"'
    assert len(at_limit.encode()) == MAX_CHALLENGE_BYTES
    assert parse_bearer_challenge(at_limit) is not None
    with pytest.raises(InvalidAuthChallenge, match="exceeds"):
        parse_bearer_challenge(at_limit[:-1] + 'r"')


# -- URLs ---------------------------------------------------------------------------------------


def test_canonical_resource_and_well_known_candidates() -> None:
    assert canonical_resource("HTTPS://MCP.Example.com:443/mcp/?q=1#f") == "https://mcp.example.com/mcp"
    assert canonical_resource("http://[::1]:8080/") == "http://[::1]:8080"
    with pytest.raises(InvalidAuthMetadata):
        canonical_resource("ftp://example.com/x")
    with pytest.raises(InvalidAuthMetadata):
        canonical_resource("https://user:pw@example.com/x")
    challenge = BearerChallenge(resource_metadata="https://meta.example.com/prm")
    assert protected_resource_metadata_urls("https://a.example.com/v1/mcp", challenge) == (
        "https://meta.example.com/prm",
        "https://a.example.com/.well-known/oauth-protected-resource/v1/mcp",
        "https://a.example.com/.well-known/oauth-protected-resource")
    assert protected_resource_metadata_urls("https://a.example.com/") == (
        "https://a.example.com/.well-known/oauth-protected-resource",)
    assert authorization_server_metadata_urls("https://auth.example.com/tenant1") == (
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration")
    assert authorization_server_metadata_urls("https://auth.example.com") == (
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration")


# -- protected resource metadata ---------------------------------------------------------------


def test_protected_resource_from_the_path_aware_well_known_url(site: _Site, discovery: AuthDiscovery) -> None:
    site.json("/.well-known/oauth-protected-resource/mcp", _prm(site, scopes_supported=["read", "write"],
                                                               bearer_methods_supported=["header"]))
    found = discovery.protected_resource(site.base + "/mcp")
    assert found == ProtectedResourceMetadata(
        resource=site.base + "/mcp", authorization_servers=(site.base + "/as",), scopes_supported=("read", "write"),
        bearer_methods_supported=("header",), source=site.base + "/.well-known/oauth-protected-resource/mcp")


def test_challenge_url_first_then_root_fallback(site: _Site, discovery: AuthDiscovery) -> None:
    site.json("/.well-known/oauth-protected-resource", _prm(site, path=""))
    challenge = BearerChallenge(resource_metadata=site.base + "/custom-prm")
    found = discovery.protected_resource(site.base + "/mcp", challenge)
    assert found.resource == site.base
    assert site.requests == ["/custom-prm", "/.well-known/oauth-protected-resource/mcp",
                             "/.well-known/oauth-protected-resource"]


def test_no_metadata_anywhere_lists_what_was_tried(site: _Site, discovery: AuthDiscovery) -> None:
    site.routes["/.well-known/oauth-protected-resource"] = (500, b"{}")
    with pytest.raises(AuthMetadataNotFound) as caught:
        discovery.protected_resource(site.base + "/mcp")
    assert [status for _url, status in caught.value.tried] == [404, 500]
    assert isinstance(caught.value, McpAuthError) and isinstance(caught.value, McpError)


@pytest.mark.parametrize(("document", "field"), [
    ({"resource": "http://127.0.0.1:1/mcp", "authorization_servers": ["http://127.0.0.1:1/as"]}, "resource"),
    ({"authorization_servers": ["x"]}, "resource"),
    ({"resource": "{base}/mcp", "authorization_servers": []}, "authorization_servers"),
    ({"resource": "{base}/mcp"}, "authorization_servers"),
    ({"resource": "{base}/mcp", "authorization_servers": [7]}, "authorization_servers"),
    ({"resource": "{base}/mcp", "authorization_servers": ["{base}/as?x=1"]}, "authorization_servers"),
    ({"resource": "{base}/mcpx", "authorization_servers": ["{base}/as"]}, "resource"),
    ({"resource": "{base}/mcp", "authorization_servers": ["{base}/as"], "scopes_supported": "read"},
     "scopes_supported"),
    ({"resource": "{base}/mcp", "authorization_servers": ["{base}/as"], "resource_name": 3}, "resource_name"),
])
def test_unusable_protected_resource_metadata(site: _Site, discovery: AuthDiscovery, document: dict[str, Any],
                                              field: str) -> None:
    text = json.dumps(document).replace("{base}", site.base)
    site.routes["/.well-known/oauth-protected-resource/mcp"] = (200, text.encode())
    with pytest.raises(InvalidAuthMetadata) as caught:
        discovery.protected_resource(site.base + "/mcp")
    assert caught.value.field == field


def test_resource_prefix_on_the_same_origin_covers_the_server(site: _Site, discovery: AuthDiscovery) -> None:
    site.json("/.well-known/oauth-protected-resource/v1/mcp", _prm(site, path="/v1"))
    assert discovery.protected_resource(site.base + "/v1/mcp").resource == site.base + "/v1"


def test_non_object_and_malformed_json_are_invalid(site: _Site, discovery: AuthDiscovery) -> None:
    site.routes["/.well-known/oauth-protected-resource/mcp"] = (200, b"[1]")
    with pytest.raises(InvalidAuthMetadata, match="JSON object"):
        discovery.protected_resource(site.base + "/mcp")
    site.routes["/.well-known/oauth-protected-resource/mcp"] = (200, b"{nope")
    with pytest.raises(InvalidAuthMetadata):
        discovery.protected_resource(site.base + "/mcp")


def _padded(document: dict[str, Any], size: int) -> bytes:
    body = json.dumps({**document, "pad": ""}).encode()
    return json.dumps({**document, "pad": "p" * (size - len(body))}).encode()


def test_metadata_body_bound_at_the_limit_and_one_past(site: _Site) -> None:
    limit = 2048
    at_limit = _padded(_prm(site), limit)
    assert len(at_limit) == limit
    path = "/.well-known/oauth-protected-resource/mcp"
    with AuthDiscovery(url_policy=UrlPolicy.local_development(), max_metadata_bytes=limit) as bounded:
        site.routes[path] = (200, at_limit)
        assert bounded.protected_resource(site.base + "/mcp").resource == site.base + "/mcp"
        site.routes[path] = (200, _padded(_prm(site), limit + 1))
        with pytest.raises(AuthMetadataTooLarge) as caught:
            bounded.protected_resource(site.base + "/mcp")
        assert caught.value.limit == limit


def test_a_shared_transport_with_a_larger_limit_is_still_bounded(site: _Site) -> None:
    limit = 1024
    path = "/.well-known/oauth-protected-resource/mcp"
    shared = HttpTransport(url_policy=UrlPolicy.local_development())
    try:
        with AuthDiscovery(transport=shared, url_policy=UrlPolicy.local_development(),
                           max_metadata_bytes=limit) as bounded:
            site.routes[path] = (200, _padded(_prm(site), limit))
            assert bounded.protected_resource(site.base + "/mcp").authorization_servers
            site.routes[path] = (200, _padded(_prm(site), limit + 1))
            with pytest.raises(AuthMetadataTooLarge):
                bounded.protected_resource(site.base + "/mcp")
        # the shared transport stays usable after the discovery object closed
        assert shared.send(TransportRequest("GET", site.base + path)).status == 200
    finally:
        shared.close()


def test_list_bound_at_the_limit_and_one_past(site: _Site) -> None:
    path = "/.well-known/oauth-protected-resource/mcp"
    with AuthDiscovery(url_policy=UrlPolicy.local_development(), max_list_items=3) as bounded:
        site.json(path, _prm(site, scopes_supported=["a", "b", "c"]))
        assert bounded.protected_resource(site.base + "/mcp").scopes_supported == ("a", "b", "c")
        site.json(path, _prm(site, scopes_supported=["a", "b", "c", "d"]))
        with pytest.raises(InvalidAuthMetadata, match="more than 3") as caught:
            bounded.protected_resource(site.base + "/mcp")
        assert caught.value.field == "scopes_supported"


def test_url_policy_is_applied_before_any_io(site: _Site) -> None:
    from zigai.security import UrlPolicyViolation

    with AuthDiscovery(timeout_s=5.0) as strict:  # default policy: https only, no local network
        with pytest.raises(UrlPolicyViolation):
            strict.protected_resource(site.base + "/mcp")
        with pytest.raises(InvalidAuthMetadata):
            strict.authorization_server(site.base + "/as")
    assert site.requests == []


def test_challenge_metadata_url_refused_by_policy_is_not_fetched(site: _Site) -> None:
    policy = UrlPolicy.local_development(allowed_hosts=["127.0.0.1"])
    with AuthDiscovery(url_policy=policy, timeout_s=5.0) as found:
        with pytest.raises(InvalidAuthMetadata, match="URL policy"):
            found.protected_resource(site.base + "/mcp",
                                     BearerChallenge(resource_metadata="http://169.254.169.254/latest"))
    assert site.requests == []


def test_redirects_and_dead_servers_fail_as_connection_errors(site: _Site, discovery: AuthDiscovery) -> None:
    site.routes["/.well-known/oauth-protected-resource/mcp"] = (302, b"")
    with pytest.raises(McpConnectionFailed, match="metadata request failed"):
        discovery.protected_resource(site.base + "/mcp")
    assert not any("elsewhere" in path for path in site.requests)


def test_constructor_bounds_are_validated() -> None:
    for bad in ({"max_metadata_bytes": 0}, {"max_list_items": True}, {"max_list_items": "3"}):
        with pytest.raises(ValueError):
            AuthDiscovery(**bad)  # type: ignore[arg-type]


# -- authorization server metadata -------------------------------------------------------------


def test_authorization_server_rfc8414_path_insertion(site: _Site, discovery: AuthDiscovery) -> None:
    site.json("/.well-known/oauth-authorization-server/as", _asm(
        site, authorization_response_iss_parameter_supported=True, scopes_supported=["read"],
        grant_types_supported=["authorization_code", "client_credentials"]))
    found = discovery.authorization_server(site.base + "/as")
    assert found.issuer == site.base + "/as" and found.token_endpoint == site.base + "/as/token"
    assert found.supports_pkce_s256 and found.authorization_response_iss_parameter_supported
    assert found.grant_types_supported == ("authorization_code", "client_credentials")
    assert not found.client_id_metadata_document_supported and found.registration_endpoint is None


def test_authorization_server_openid_fallbacks_in_order(site: _Site, discovery: AuthDiscovery) -> None:
    site.json("/as/.well-known/openid-configuration", _asm(site, code_challenge_methods_supported=["plain"]))
    found = discovery.authorization_server(site.base + "/as")
    assert not found.supports_pkce_s256
    assert site.requests == ["/.well-known/oauth-authorization-server/as", "/.well-known/openid-configuration/as",
                             "/as/.well-known/openid-configuration"]


def test_issuer_mismatch_is_refused(site: _Site, discovery: AuthDiscovery) -> None:
    site.json("/.well-known/oauth-authorization-server/as", _asm(site, issuer=site.base + "/other"))
    with pytest.raises(InvalidAuthMetadata, match="mixed-up") as caught:
        discovery.authorization_server(site.base + "/as")
    assert caught.value.field == "issuer"


@pytest.mark.parametrize(("extra", "field"), [
    ({"token_endpoint": "http://169.254.169.254/token"}, "token_endpoint"),
    ({"authorization_endpoint": ""}, "authorization_endpoint"),
    ({"authorization_response_iss_parameter_supported": "yes"}, "authorization_response_iss_parameter_supported"),
])
def test_unusable_authorization_server_metadata(site: _Site, extra: dict[str, Any], field: str) -> None:
    site.json("/.well-known/oauth-authorization-server/as", _asm(site, **extra))
    policy = UrlPolicy.local_development(allowed_hosts=["127.0.0.1"])
    with AuthDiscovery(url_policy=policy, timeout_s=5.0) as found:
        with pytest.raises(InvalidAuthMetadata) as caught:
            found.authorization_server(site.base + "/as")
    assert caught.value.field == field


def test_full_discovery_from_a_401_challenge(site: _Site, discovery: AuthDiscovery) -> None:
    site.json("/prm", _prm(site, scopes_supported=["read", "write"]))
    site.json("/.well-known/oauth-authorization-server/as", _asm(site))
    challenge = parse_bearer_challenge(f'Bearer resource_metadata="{site.base}/prm"')
    resource = discovery.protected_resource(site.base + "/mcp", challenge)
    server = discovery.authorization_server(resource.authorization_servers[0])
    assert server.supports_pkce_s256
    assert select_scopes(challenge, resource) == ("read", "write")


# -- scopes, PKCE, authorization response -------------------------------------------------------


def test_scope_selection_and_step_up() -> None:
    resource = ProtectedResourceMetadata("https://a.example.com", ("https://as.example.com",),
                                         scopes_supported=("read", "write"))
    assert select_scopes(None, resource) == ("read", "write")
    assert select_scopes(BearerChallenge(scope=("admin",)), resource) == ("admin",)
    assert select_scopes(None, None) == ()
    step_up = BearerChallenge(error="insufficient_scope", scope=("write", "read"))
    assert select_scopes(step_up, resource, granted=("read",)) == ("read", "write")
    assert select_scopes(BearerChallenge(scope=("write",)), resource, granted=("read",)) == ("write",)


def test_pkce_pair_is_s256_and_hides_the_verifier() -> None:
    pair = pkce_pair()
    assert 43 <= len(pair.verifier) <= 128 and pair.method == "S256"
    digest = hashlib.sha256(pair.verifier.encode()).digest()
    assert pair.challenge == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert pair.verifier not in repr(pair)
    assert pkce_pair().verifier != pair.verifier


def _server(iss_supported: bool) -> AuthorizationServerMetadata:
    return AuthorizationServerMetadata("https://as.example.com", "https://as.example.com/authorize",
                                       "https://as.example.com/token",
                                       authorization_response_iss_parameter_supported=iss_supported)


def test_authorization_response_checks_rfc9207() -> None:
    good = {"code": "c0de", "state": "s1", "iss": "https://as.example.com"}
    assert check_authorization_response(good, state="s1", server=_server(True)) == "c0de"
    assert check_authorization_response({"code": "c0de", "state": "s1"}, state="s1", server=_server(False)) == "c0de"
    cases = [
        ({"error": "access_denied", "state": "s1"}, True, "error"),
        ({**good, "state": "s2"}, True, "state"),
        ({"code": "c0de", "state": "s1"}, True, "iss"),
        ({**good, "iss": "https://evil.example.com"}, False, "iss"),
        ({"state": "s1", "iss": "https://as.example.com"}, True, "code"),
    ]
    for params, supported, reason in cases:
        with pytest.raises(AuthorizationResponseRejected) as caught:
            check_authorization_response(params, state="s1", server=_server(supported))
        assert caught.value.reason == reason
        assert "c0de" not in str(caught.value)
    with pytest.raises(AuthorizationResponseRejected) as denied:
        check_authorization_response({"error": "access_denied"}, state="s1", server=_server(True))
    assert denied.value.error == "access_denied"
