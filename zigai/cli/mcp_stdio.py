"""``zigai run --mcp-stdio "CMD ARGS"``: MCP stdio servers as the run's dynamic toolsets.

Job
    Start one :class:`~zigai.mcp.StdioTransport` child per command, wrap each in a
    :class:`~zigai.mcp.Client` and an :class:`~zigai.mcp.McpToolset`, and register every one
    for shutdown on the caller's :class:`contextlib.ExitStack`; an agent spec's HTTP server
    (``url``) goes through the library's default connector (:mod:`zigai.mcp.client.connect`).

Invariants
    * A command is split like a POSIX shell would (``shlex``), never run through a shell.
    * Each server is asked to agree on a revision and describe itself (``server/discover``, or
      ``initialize`` for a 2025 server) before the run starts, so a command that does
      not start or does not speak MCP is an operator error (exit code 2) naming the command,
      not a failure in the middle of the run.
    * Every child started is closed (stdin closed, then terminated, then killed at its
      deadline, always reaped) when the stack unwinds, whether the run succeeded or not.
    * The servers' stderr goes to zigai's stderr, so their diagnostics stay visible.
    * The servers get :func:`zigai.child_process.child_environment`'s allowlist (no API keys)
      plus the ``--mcp-env NAME[=VALUE]`` items; ``--mcp-inherit-env`` passes everything.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

from zigai.cli.errors import CliUsageError

__all__ = ["MAX_MCP_SERVERS", "http_toolset", "mcp_toolset", "mcp_toolsets", "split_command"]

MAX_MCP_SERVERS = 16
_DISCOVER_TIMEOUT_MS = 20_000


def split_command(command: str) -> list[str]:
    """One ``--mcp-stdio`` value as an argument vector (a usage error when it is not one)."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise CliUsageError(f"--mcp-stdio {command!r} is not a valid command line: {exc}") from None
    if not argv:
        raise CliUsageError("--mcp-stdio needs a command, e.g. --mcp-stdio \"python server.py\"")
    return argv


def mcp_toolsets(commands: Sequence[str], stack: ExitStack, env_items: Sequence[str] = (), *,
                 inherit_env: bool = False) -> list[Any]:
    """Start every server and return its toolset; the stack closes them all.

    ``env_items`` are ``--mcp-env`` values: ``NAME`` (copied from zigai's environment) or
    ``NAME=VALUE``.
    """
    if len(commands) > MAX_MCP_SERVERS:
        raise CliUsageError(f"at most {MAX_MCP_SERVERS} --mcp-stdio servers are supported, got {len(commands)}")
    return [mcp_toolset(split_command(command), f"--mcp-stdio {command!r}", stack, env_items=env_items,
                        inherit_env=inherit_env) for command in commands]


def mcp_toolset(argv: Sequence[str], label: str, stack: ExitStack,
                discover_timeout_ms: int = _DISCOVER_TIMEOUT_MS, *, env_items: Sequence[str] = (),
                inherit_env: bool = False) -> Any:
    """Start one server (``argv``, named ``label`` in errors); the stack closes it."""
    from zigai import mcp
    from zigai.child_process import InvalidChildEnvironment, parse_env_flag

    try:
        values, names = parse_env_flag(env_items)
    except InvalidChildEnvironment as exc:
        raise CliUsageError(f"--mcp-env: {exc}") from None
    try:
        transport = mcp.StdioTransport(list(argv), mcp.StdioOptions(
            stderr=mcp.StderrMode.inherit, env=values, pass_env=names, inherit_env=inherit_env))
    except mcp.McpError as exc:
        raise CliUsageError(f"{label}: {exc}") from None
    client = stack.enter_context(mcp.Client(transport))
    try:
        client.discover(mcp.RequestOptions(timeout_ms=discover_timeout_ms))
    except mcp.McpError as exc:
        raise CliUsageError(f"{label} did not answer server/discover: "
                            f"{type(exc).__name__}: {exc}") from None
    return mcp.McpToolset(client)


def http_toolset(server: Any, stack: ExitStack) -> Any:
    """An agent spec's Streamable HTTP server (``url``) through the default connector; the stack
    closes it.  A server that is refused or does not answer is an operator error naming it."""
    from zigai.errors import SecurityError
    from zigai.mcp import McpError
    from zigai.mcp.client.connect import connect_server

    try:
        toolset, cleanup = connect_server(server)
    except (McpError, SecurityError) as exc:
        raise CliUsageError(f"mcp server {server.name!r}: {type(exc).__name__}: {exc}") from None
    stack.callback(cleanup)
    return toolset
