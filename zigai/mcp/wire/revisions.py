"""Protocol revisions: which ones zigai speaks, how a client tells them apart, what each one has.

Job
    Name the revisions once (the stateless 2026-07-28 and the session-based 2025-11-25 and
    2025-06-18), hold the table of methods that exist in only one era, decide from a failed
    ``server/discover`` probe whether the peer is a legacy (``initialize``) server, and build and
    check the legacy ``initialize`` exchange.

Era detection (the 2026-07-28 backward-compatibility rules)
    A client that speaks both eras probes with ``server/discover`` under its newest modern
    revision.  A discover result naming a modern revision the client speaks means a modern
    server; one naming only 2025 revisions picks one of them for ``initialize``.  An error only a
    modern server sends (-32020, -32021, -32022; :data:`MODERN_ERROR_CODES`) also means a modern
    server; after -32022 its ``supported`` list picks the revision (a legacy one there means
    ``initialize``).  Any other JSON-RPC error, an HTTP 400/404/405 without a JSON-RPC answer for
    the probe, a result that is not a discover result, or (off HTTP, where a server may stay
    silent) no answer within :data:`PROBE_TIMEOUT_S` means a legacy server: the client falls back
    to ``initialize``, offering its newest legacy revision.  The era is cached per client; only
    an expired HTTP session (404) starts a new handshake.

Invariants
    * A method of one era used under a revision of the other raises
      :class:`~zigai.mcp.errors.FeatureNotInRevision` naming the agreed revision, before any I/O.
    * A peer whose revisions share none with the client's raises
      :class:`~zigai.mcp.errors.NoCommonProtocolVersion` listing both sides.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from zigai.mcp.errors import (
    HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    FeatureNotInRevision,
    InvalidMcpMessage,
    McpErrorResponse,
    McpHttpStatusError,
    McpRequestTimedOut,
    NoCommonProtocolVersion,
)
from zigai.mcp.wire.jsonrpc import PROTOCOL_VERSION

__all__ = [
    "LEGACY_VERSIONS",
    "CLIENT_VERSIONS",
    "MODERN_ONLY_METHODS",
    "MODERN_ERROR_CODES",
    "LEGACY_ONLY_METHODS",
    "PROBE_TIMEOUT_S",
    "is_legacy",
    "check_method",
    "means_legacy_server",
    "legacy_choice",
    "initialize_params",
    "agreed_version",
]

LEGACY_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18")
"""The session-based revisions zigai speaks, newest first."""

CLIENT_VERSIONS: tuple[str, ...] = (PROTOCOL_VERSION, *LEGACY_VERSIONS)
"""Every revision a default :class:`~zigai.mcp.Client` offers, newest first."""

PROBE_TIMEOUT_S = 5.0
"""How long a ``server/discover`` probe waits before the peer counts as a legacy server."""

# method -> what the user asked for, for the error message
MODERN_ONLY_METHODS: Mapping[str, str] = {
    "subscriptions/listen": "subscription streams (subscriptions/listen)",
    "tasks/get": "the Tasks extension (tasks/get)",
    "tasks/update": "the Tasks extension (tasks/update)",
    "tasks/cancel": "the Tasks extension (tasks/cancel)",
}
LEGACY_ONLY_METHODS: Mapping[str, str] = {
    "logging/setLevel": "session log levels (logging/setLevel)",
    "resources/subscribe": "resource subscriptions (resources/subscribe)",
    "resources/unsubscribe": "resource subscriptions (resources/unsubscribe)",
}
_HTTP_LEGACY_STATUSES = frozenset({400, 404, 405})
MODERN_ERROR_CODES = frozenset({HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION})
"""Error codes only a 2026-07-28 server sends: such an answer to the probe means a modern server."""


def is_legacy(version: str) -> bool:
    """True for a session-based (``initialize``) revision."""
    return version in LEGACY_VERSIONS


def check_method(method: str, version: str) -> None:
    """Refuse, before I/O, a method the revision ``version`` does not have."""
    if is_legacy(version):
        feature = MODERN_ONLY_METHODS.get(method)
        if feature is not None:
            raise FeatureNotInRevision(
                f"{feature} needs MCP {PROTOCOL_VERSION}, but this server agreed on {version}",
                feature=method, revision=version)
    else:
        feature = LEGACY_ONLY_METHODS.get(method)
        if feature is not None:
            raise FeatureNotInRevision(
                f"{feature} exists only in the session-based revisions {', '.join(LEGACY_VERSIONS)}; "
                f"this server agreed on {version}", feature=method, revision=version)


def means_legacy_server(error: BaseException, probe_deadline_passed: bool) -> bool:
    """Whether a failed ``server/discover`` probe says the peer is a legacy server."""
    if isinstance(error, McpErrorResponse):
        return error.code not in MODERN_ERROR_CODES
    if isinstance(error, McpHttpStatusError):
        return error.status in _HTTP_LEGACY_STATUSES
    if isinstance(error, InvalidMcpMessage):
        return True  # an answer that is not a JSON-RPC reply to the probe
    return isinstance(error, McpRequestTimedOut) and probe_deadline_passed


def legacy_choice(offered: Sequence[str], server_supported: Sequence[str]) -> str:
    """The legacy revision to initialize with after a -32022 probe answer listing ``server_supported``."""
    common = [version for version in offered if is_legacy(version) and version in server_supported]
    if not common:
        raise NoCommonProtocolVersion(
            f"no common MCP revision: this client speaks {', '.join(offered)}; the server speaks "
            f"{', '.join(server_supported) or 'none it would name'}",
            client_versions=tuple(offered), server_versions=tuple(server_supported))
    return common[0]


def initialize_params(version: str, client_info: Mapping[str, Any], capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """The params of a legacy ``initialize`` request offering ``version``."""
    return {"protocolVersion": version, "capabilities": dict(capabilities), "clientInfo": dict(client_info)}


def agreed_version(result: Mapping[str, Any], offered: Sequence[str]) -> str:
    """The legacy revision an ``initialize`` result agrees on; refused unless the client offered it."""
    version = result.get("protocolVersion")
    if not isinstance(version, str):
        raise InvalidMcpMessage("initialize result: 'protocolVersion' must be a string")
    if version not in offered or not is_legacy(version):
        raise NoCommonProtocolVersion(
            f"no common MCP revision: this client speaks {', '.join(offered)}; the server answered "
            f"initialize with {version}", client_versions=tuple(offered), server_versions=(version,))
    return version
