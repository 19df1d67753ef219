"""The default MCP connector: one declared server (a command or a URL) as a ready toolset.

Job
    Turn a server declaration (an agent spec's ``mcp_servers[]`` entry, or anything with
    ``name``, ``command``, ``url`` and ``timeout_ms``) into a connected
    :class:`~zigai.mcp.McpToolset` plus the cleanup that stops it.  This is what
    :func:`zigai.agent_spec.resolve` uses when the application passes no ``mcp_connector``.

Invariants
    * A ``command`` starts a :class:`~zigai.mcp.StdioTransport` child with :func:`stdio_options`:
      the same stdio options ``zigai run --mcp-stdio`` uses (the child's stderr is shared, the
      child environment is the transport's default).  A ``url`` opens a
      :class:`~zigai.mcp.StreamableHttpTransport` under ``url_policy`` (default
      :class:`~zigai.security.UrlPolicy`: HTTPS, no private or loopback addresses).
    * The server must answer discovery (the revision negotiation and ``server/discover`` or
      ``initialize``) within ``timeout_ms``; otherwise, or when it cannot start, the transport is
      closed and :class:`~zigai.mcp.McpConnectionFailed` names the server.  Nothing is left
      running after a failure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from zigai.mcp.client.client import Client
from zigai.mcp.client.http import StreamableHttpTransport
from zigai.mcp.client.options import RequestOptions
from zigai.mcp.client.stdio import StderrMode, StdioOptions, StdioTransport
from zigai.mcp.client.toolset import McpToolset
from zigai.mcp.errors import InvalidMcpRequest, McpConnectionFailed, McpError
from zigai.security import UrlPolicy

__all__ = ["ServerDeclaration", "connect_server", "stdio_options"]


class ServerDeclaration(Protocol):
    """What :func:`connect_server` reads (``zigai.agent_spec.McpServerDoc`` has it)."""

    @property
    def name(self) -> str: ...
    @property
    def command(self) -> Sequence[str]: ...
    @property
    def url(self) -> str | None: ...
    @property
    def timeout_ms(self) -> int: ...


def stdio_options() -> StdioOptions:
    """The options of every stdio server zigai starts on a user's behalf (CLI and agent specs)."""
    return StdioOptions(stderr=StderrMode.inherit)


def connect_server(server: ServerDeclaration, *, url_policy: UrlPolicy | None = None,
                   options: StdioOptions | None = None) -> tuple[McpToolset, Callable[[], None]]:
    """Connect one declared server: ``(toolset, cleanup)`` (see module invariants).

    Override it per application with ``resolve(..., mcp_connector=...)``, for example
    ``functools.partial(connect_server, url_policy=UrlPolicy.local_development())``.
    """
    label = f"mcp server {server.name!r}"
    command, url = tuple(server.command or ()), server.url
    if bool(command) == (url is not None):
        raise InvalidMcpRequest(f"{label} needs exactly one of a command and a url")
    try:
        transport: Any = StdioTransport(command, options or stdio_options()) if command else \
            StreamableHttpTransport(url or "", url_policy=url_policy or UrlPolicy())
    except McpError as exc:
        raise McpConnectionFailed(f"{label}: {exc}") from None
    client = Client(transport)
    answered = False
    try:
        client.discover(RequestOptions(timeout_ms=server.timeout_ms))
        answered = True
    except McpError as exc:
        raise McpConnectionFailed(f"{label} did not answer discovery: {type(exc).__name__}: {exc}") from None
    finally:
        if not answered:  # nothing is left running after a failure, whatever it was
            client.close()
    return McpToolset(client), client.close
