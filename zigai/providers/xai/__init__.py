"""``zigai.providers.xai``: Grok through xAI's native Responses API, and a Chat compatibility route.

Job
    :class:`Provider` / :class:`Client` speak xAI's Responses API with OpenAI's Responses codec
    and xAI's own server-side tools: typed web and X search, code execution, collection
    search and any number of remote MCP servers keyed by ``server_label``.
    :class:`ChatProvider` / :class:`ChatClient` are the Chat Completions compatibility route.

Invariants
    * xAI-only body fields travel only in a ``ProviderExtraBody`` tagged ``xai``.
    * Server-side tools other than MCP servers are singletons; tool values are validated when
      they are built, before any request.
    * Unknown model families fail closed.

Submodules: ``responses`` (provider, client, profiles), ``tools`` (typed tools), ``chat``
(compatibility route).

    provider = Provider(api_key)
    client = Client("grok-4", provider, tools=(XSearch(allowed_x_handles=("xai",)),))
"""

from __future__ import annotations

from zigai.providers.xai.chat import CHAT_DEFAULTS, ChatClient, ChatProvider, chat_profile_lookup
from zigai.providers.xai.responses import (
    API_BASE,
    EXTENSION_TAG,
    PROVIDER_NAME,
    Client,
    Provider,
    xai_profile,
)
from zigai.providers.xai.tools import (
    CodeExecution,
    CollectionSearch,
    McpServer,
    WebSearch,
    XaiToolError,
    XSearch,
    encode_tools,
)

__all__ = [
    "API_BASE",
    "CHAT_DEFAULTS",
    "EXTENSION_TAG",
    "PROVIDER_NAME",
    "ChatClient",
    "ChatProvider",
    "Client",
    "CodeExecution",
    "CollectionSearch",
    "McpServer",
    "Provider",
    "WebSearch",
    "XSearch",
    "XaiToolError",
    "chat_profile_lookup",
    "encode_tools",
    "xai_profile",
]
