"""``zigai web``: serve an agent with the built-in chat page on 127.0.0.1.

The agent comes from the same flags as ``zigai run`` (``--model``, ``--tools``,
``--mcp-stdio``, ``--spec``, ``--system``, limits) or from ``--agent FILE.py[:NAME]``, an
operator's Python file whose module attribute (default ``agent``) is a ready ``Agent``.  It
is served by :func:`zigai.ui.ui_page` (the AG-UI endpoint plus the page at ``/``) on
:class:`zigai.ui.LocalServer`, which binds the loopback interface only; to serve other hosts
mount ``ui_page(agent)`` in a production WSGI server.  The command prints the page's URL on
stderr and serves until Ctrl-C (exit code 130) or SIGTERM (exit code 0); MCP servers it
started are stopped before it returns.
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
from collections.abc import Mapping
from contextlib import ExitStack
from typing import Any, TextIO

from zigai.cli.args import add_agent_flags
from zigai.cli.errors import CliUsageError, ExitCode

__all__ = ["LOOPBACK_HOSTS", "add_web_parser", "load_agent", "web_command"]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost")
_AGENT_CONFLICTS = ("model", "spec", "tools", "mcp_stdio", "system", "config", "max_requests", "timeout",
                    "retries")


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, got {text!r}")
    return int(text)


def add_web_parser(commands: Any, out: TextIO | None) -> None:
    """The ``web`` subcommand of the shared parser."""
    web = commands.add_parser("web", out=out, help="serve an agent with the built-in chat page on 127.0.0.1")
    web.add_argument("--model", help="model string, e.g. openai:gpt-5-mini, anthropic:…, test")
    web.add_argument("--tools", metavar="FILE.py", help="Python file whose functions become tools")
    add_agent_flags(web)
    web.add_argument("--spec", metavar="AGENT.yaml",
                     help="agent spec file (JSON or YAML) defining the agent; --tools is its tool registry")
    web.add_argument("--agent", metavar="FILE.py[:NAME]",
                     help="Python file whose attribute NAME (default: agent) is the Agent to serve")
    web.add_argument("--system", help="system instructions")
    web.add_argument("--config", metavar="FILE", help="JSON configuration file (see docs)")
    web.add_argument("--host", default="127.0.0.1", choices=LOOPBACK_HOSTS,
                     help="interface to bind (loopback only; default: %(default)s)")
    web.add_argument("--port", type=_port, default=8000, metavar="N",
                     help="port to bind, 0 for any free port (default: %(default)s)")
    web.set_defaults(output_schema=None, max_requests=None, timeout=None, retries=None)


def load_agent(reference: str) -> Any:
    """The agent named by ``FILE.py[:NAME]`` (the operator's own code, executed as a module)."""
    from zigai.cli.tools_file import load_module

    path, _, name = reference.partition(":")
    module = load_module(os.path.abspath(path), "agent file")
    name = name or "agent"
    agent = getattr(module, name, None)
    if agent is None or not hasattr(agent, "run_until_pause_stream"):
        raise CliUsageError(f"agent file {path!r} has no Agent named {name!r}")
    return agent


def _agent(args: argparse.Namespace, env: Mapping[str, str], err: TextIO, stack: ExitStack) -> Any:
    if args.agent:
        given = [f"--{n.replace('_', '-')}" for n in _AGENT_CONFLICTS if getattr(args, n) is not None]
        if given:
            raise CliUsageError(f"--agent defines the agent; remove {', '.join(given)}")
        return load_agent(args.agent)
    from zigai.cli.args import settings_from_args
    from zigai.cli.run import build_agent, resolve_settings

    return build_agent(resolve_settings(settings_from_args(args, env), env), env, err, stack)


def web_command(args: argparse.Namespace, env: Mapping[str, str], err: TextIO,
                stop: threading.Event | None = None) -> int:
    """Serve until Ctrl-C, SIGTERM or ``stop`` is set (tests set it)."""
    from zigai.ui import LocalServer, ui_page

    stop = stop if stop is not None else threading.Event()
    with ExitStack() as stack:
        agent = _agent(args, env, err, stack)
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
            stack.callback(signal.signal, signal.SIGTERM, previous)
        with LocalServer(ui_page(agent), args.port) as server:
            err.write(f"zigai web: chat page on {server.url}/ (Ctrl-C stops)\n")
            err.flush()
            while not stop.wait(0.5):
                pass
    return int(ExitCode.ok)
