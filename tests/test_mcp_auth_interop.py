"""The official MCP Python SDK's OAuth client (``mcp`` 2.3.0) against a zigai Bearer-protected server.

The SDK registers, runs its PKCE code flow against the zigai loopback authorization server and
calls a tool; the zigai ``BearerAuthPolicy`` validates its token for the canonical resource.
"""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from zigai import mcp
from zigai.mcp.auth.server import BearerAuthPolicy
from zigai.mcp.auth.testing import LoopbackAuthorizationServer
from zigai.reflect import tool

SDK_INSTALLED = importlib.util.find_spec("mcp") is not None
pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(not SDK_INSTALLED, reason="the MCP SDK is not installed (dev extra: pip install mcp==2.3.0)"),
    pytest.mark.timeout(60),
]


def _shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


class _Storage:
    """The SDK's TokenStorage protocol, in memory."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client

    async def set_client_info(self, client: Any) -> None:
        self.client = client


def test_sdk_oauth_client_signs_in_to_a_zigai_protected_server() -> None:
    from mcp import Client
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    server = mcp.Server("shouter", "1.0")
    server.add_tool(tool("shout", None, _shout))
    with LoopbackAuthorizationServer(scopes_supported=["tools"]) as issuer, \
            mcp.serve_http(server, auth=lambda url: BearerAuthPolicy(url, [issuer.issuer], issuer.verify,
                                                                     required_scopes=["tools"])) as running:
        redirected: list[str] = []

        async def redirect_handler(url: str) -> None:
            redirected.append(await asyncio.to_thread(issuer.approve, url))

        async def callback_handler() -> AuthorizationCodeResult:
            params = {name: values[0] for name, values in parse_qs(urlsplit(redirected[-1]).query).items()}
            return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

        async def main() -> str:
            provider = OAuthClientProvider(
                running.url, OAuthClientMetadata(redirect_uris=["http://127.0.0.1:9/cb"], client_name="sdk"),
                _Storage(), redirect_handler, callback_handler)
            async with create_mcp_http_client(auth=provider) as http, \
                    Client(streamable_http_client(running.url, http_client=http), mode="auto",
                           read_timeout_seconds=20) as client:
                result = await client.call_tool("shout", {"text": "hi"})
                return str(result.content[0].text)

        assert asyncio.run(main()) == "HI"
        assert issuer.kinds() == ["metadata", "register", "authorize", "token"]
        authorize = issuer.requests[2].params
        assert authorize["resource"] == running.url and authorize["scope"] == "tools"
