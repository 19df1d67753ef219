"""Anthropic server tools and the MCP connector: the portable managed-tool kinds as Messages
API tool objects, the ``mcp_servers`` entries and the beta features they need.

Job
    ================ ==========================================================================
    kind             Messages API
    ================ ==========================================================================
    web_search       ``{"type": "web_search_20250305", "name": "web_search"}``
    web_fetch        ``{"type": "web_fetch_20250910", "name": "web_fetch"}`` + beta
                     ``web-fetch-2025-09-10``
    code_execution   ``{"type": "code_execution_20250825", "name": "code_execution"}`` + beta
                     ``code-execution-2025-08-25``
    mcp_server       ``mcp_servers: [{"type": "url", "url", "name", "authorization_token"}]``
                     and ``{"type": "mcp_toolset", "mcp_server_name": name}`` in ``tools``
                     (``allowed_tools`` becomes ``default_config: {"enabled": false}`` plus one
                     enabled entry per tool in ``configs``) + beta ``mcp-client-2025-11-20``
    ================ ==========================================================================

    The config of the first three kinds is merged into the tool object (it may not set
    ``type`` or ``name``); ``mcp_server`` takes the neutral ``name``, ``url``,
    ``authorization`` and ``allowed_tools`` keys.

Invariants: every failure raises before any I/O; the MCP authorization token goes only into
the request body the provider sends.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from zigai.model import ManagedTool, UnsupportedModelFeature
from zigai.providers.anthropic._errors import AnthropicEncodeError

__all__ = ["CODE_EXECUTION_BETA", "MCP_BETA", "WEB_FETCH_BETA", "betas", "mcp_servers",
           "server_tool"]

WEB_FETCH_BETA = "web-fetch-2025-09-10"
CODE_EXECUTION_BETA = "code-execution-2025-08-25"
MCP_BETA = "mcp-client-2025-11-20"
_TOOLS: Mapping[str, tuple[str, str | None]] = {
    "web_search": ("web_search_20250305", None),
    "web_fetch": ("web_fetch_20250910", WEB_FETCH_BETA),
    "code_execution": ("code_execution_20250825", CODE_EXECUTION_BETA),
}
_MCP_KEYS = frozenset({"name", "url", "authorization", "allowed_tools"})


def _mcp_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    values = dict(config or {})
    unknown = sorted(set(values) - _MCP_KEYS)
    if unknown:
        raise AnthropicEncodeError(f"unknown mcp_server options: {', '.join(unknown)}")
    for key in ("name", "url"):
        if not isinstance(values.get(key), str) or not values[key]:
            raise AnthropicEncodeError(f"mcp_server needs a '{key}' string")
    allowed = values.get("allowed_tools")
    if allowed is not None and not (isinstance(allowed, (list, tuple))
                                    and all(isinstance(n, str) and n for n in allowed)):
        raise AnthropicEncodeError("mcp_server 'allowed_tools' must be a list of tool names")
    return values


def server_tool(managed: ManagedTool) -> dict[str, Any]:
    """The ``tools`` entry of one managed tool."""
    if managed.kind == "mcp_server":
        values = _mcp_config(managed.config)
        toolset: dict[str, Any] = {"type": "mcp_toolset", "mcp_server_name": values["name"]}
        if values.get("allowed_tools") is not None:
            toolset["default_config"] = {"enabled": False}
            toolset["configs"] = {name: {"enabled": True} for name in values["allowed_tools"]}
        return toolset
    found = _TOOLS.get(managed.kind)
    if found is None:
        raise UnsupportedModelFeature(f"Anthropic has no {managed.kind} server tool")
    tool: dict[str, Any] = {"type": found[0], "name": managed.kind}
    if managed.config:
        extra = dict(managed.config)
        clash = sorted({"type", "name"} & set(extra))
        if clash:
            raise AnthropicEncodeError(f"managed tool config may not set {', '.join(clash)}")
        tool.update(extra)
    return tool


def mcp_servers(managed_tools: Iterable[ManagedTool]) -> list[dict[str, Any]]:
    """The ``mcp_servers`` body entries of the request's ``mcp_server`` tools."""
    servers = []
    for managed in managed_tools:
        if managed.kind == "mcp_server":
            values = _mcp_config(managed.config)
            server = {"type": "url", "url": values["url"], "name": values["name"]}
            if values.get("authorization"):
                server["authorization_token"] = values["authorization"]
            servers.append(server)
    return servers


def betas(managed_tools: Iterable[ManagedTool]) -> list[str]:
    """The beta features the managed tools rely on, in tool order."""
    features: list[str] = []
    for managed in managed_tools:
        beta = MCP_BETA if managed.kind == "mcp_server" else _TOOLS.get(managed.kind, ("", None))[1]
        if beta is not None and beta not in features:
            features.append(beta)
    return features
