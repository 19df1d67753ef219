"""zigai's token requests against the official MCP SDK's own authorization server (``mcp`` 2.3.0).

The SDK's token endpoint wants ``client_id`` in the form even with ``client_secret_basic`` (and
checks it against the Basic header); zigai's default method choice must work against it.  The
SDK's routes run on uvicorn on 127.0.0.1; discovery, method choice and the token POST are the
library's own code paths.
"""

from __future__ import annotations

import importlib.util
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from zigai.mcp.auth.discovery import AuthDiscovery
from zigai.mcp.auth.tokens import OAuthClient, TokenRequestFailed, choose_auth_method, request_token
from zigai.security import UrlPolicy
from zigai.transport import HttpTransport

SDK_INSTALLED = importlib.util.find_spec("mcp") is not None and importlib.util.find_spec("uvicorn") is not None
pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(not SDK_INSTALLED, reason="the MCP SDK is not installed (dev extra: pip install mcp==2.3.0)"),
    pytest.mark.timeout(60),
]
LOCAL = UrlPolicy.local_development()


class _Provider:
    """The SDK's OAuthAuthorizationServerProvider, just enough for the refresh_token grant."""

    def __init__(self) -> None:
        from mcp.shared.auth import OAuthClientInformationFull

        self.client = OAuthClientInformationFull(
            client_id="app", client_secret="s3cret+/=", token_endpoint_auth_method="client_secret_basic",
            redirect_uris=["http://127.0.0.1:9/callback"], grant_types=["authorization_code", "refresh_token"])
        self.exchanged: list[str] = []

    async def get_client(self, client_id: str) -> Any:
        return self.client if client_id == "app" else None

    async def load_refresh_token(self, client: Any, refresh_token: str) -> Any:
        from mcp.server.auth.provider import RefreshToken

        return RefreshToken(token=refresh_token, client_id=client.client_id, scopes=["notes"]) \
            if refresh_token == "rt-1" else None

    async def exchange_refresh_token(self, client: Any, refresh_token: Any, scopes: list[str]) -> Any:
        from mcp.shared.auth import OAuthToken

        self.exchanged.append(refresh_token.token)
        return OAuthToken(access_token="at-2", expires_in=600, scope="notes", refresh_token="rt-2")


@contextmanager
def sdk_authorization_server(provider: _Provider) -> Iterator[str]:
    import uvicorn
    from mcp.server.auth.routes import create_auth_routes
    from pydantic import AnyHttpUrl
    from starlette.applications import Starlette

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    issuer = f"http://127.0.0.1:{sock.getsockname()[1]}/"  # pydantic URLs end with "/"
    app = Starlette(routes=create_auth_routes(provider, AnyHttpUrl(issuer)))  # type: ignore[arg-type]
    server = uvicorn.Server(uvicorn.Config(app, log_level="error"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the SDK authorization server did not start"
        time.sleep(0.02)
    try:
        yield issuer
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_the_default_client_authentication_works_against_the_sdk_token_endpoint() -> None:
    provider = _Provider()
    with sdk_authorization_server(provider) as issuer, \
            AuthDiscovery(url_policy=LOCAL, timeout_s=5.0) as discovery, HttpTransport(url_policy=LOCAL) as http:
        metadata = discovery.authorization_server(issuer)
        method = choose_auth_method(metadata.token_endpoint_auth_methods_supported, has_secret=True)
        assert method == "client_secret_basic"  # zigai's preference among what the SDK offers
        client = OAuthClient("app", "s3cret+/=", method, issuer=issuer)
        tokens = request_token(http, metadata, client, {"grant_type": "refresh_token", "refresh_token": "rt-1"},
                               resource="http://127.0.0.1:1/mcp", deadline=time.monotonic() + 10)
        assert tokens.access_token == "at-2" and tokens.refresh_token == "rt-2"
        assert provider.exchanged == ["rt-1"]
        # a wrong secret, or the secret in the form of a client registered for Basic, is refused
        posted = OAuthClient("app", "s3cret+/=", "client_secret_post", issuer=issuer)
        with pytest.raises(TokenRequestFailed, match="invalid_client"):
            request_token(http, metadata, posted, {"grant_type": "refresh_token", "refresh_token": "rt-1"},
                          resource="http://127.0.0.1:1/mcp", deadline=time.monotonic() + 10)
        wrong = OAuthClient("app", "guess", "client_secret_basic", issuer=issuer)
        with pytest.raises(TokenRequestFailed, match="invalid_client"):
            request_token(http, metadata, wrong, {"grant_type": "refresh_token", "refresh_token": "rt-1"},
                          resource="http://127.0.0.1:1/mcp", deadline=time.monotonic() + 10)
