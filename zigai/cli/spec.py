"""``zigai check SPEC`` and ``zigai run --spec SPEC``: agent spec files through the public API.

Composition only (no fourth runtime): the file is parsed and dry-run with
:mod:`zigai.agent_spec` against zigai's own model-string catalog
(:func:`~zigai.agent_spec.model_string_catalog`), the ``--tools FILE.py`` functions as the tool
registry, the built-in capabilities (:mod:`zigai.capabilities_builtin`: ``repository`` rooted at
the spec file's directory, ``skill`` over its ``skills/`` subdirectory when there is one,
``browser`` through :class:`~zigai.capabilities_builtin.HttpBrowser` with the default URL
policy — public HTTPS only; ``image`` has no backend here, so a spec naming it is refused), and
MCP stdio servers started through :mod:`zigai.cli.mcp_stdio`.  ``run --spec``
then resolves the same file through :func:`~zigai.agent_spec.model_string_factory` and hands
the agent to the ordinary ``zigai run`` path (streaming, ``--events agui``, history, pause
files, ``zigai resume``).  The pause file stores the spec's absolute path among the run
settings, so a resume rebuilds the same agent from the same reviewed file.

``zigai check`` exit codes (also in ``zigai check --help`` and docs/errors.md): 0 the spec
resolves; 2 the document is invalid or names something unknown (tool, toolset, provider,
capability) or a capability composition the registry refuses (dependency cycle, conflict, size
limit); 3 environment variables are missing (every one is named).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import ExitStack
from typing import Any, TextIO

from zigai.cli.errors import ExitCode

__all__ = ["CHECK_EXIT_CODES_HELP", "add_check_parser", "catalogs", "check_command", "spec_agent", "spec_settings"]

CHECK_EXIT_CODES_HELP = """\
exit codes:
  0    the spec parses and resolves (no model built, no network, no process started)
  2    the document is invalid (the message starts with the exact path, e.g. $.limits.max_requests)
       or names an unknown provider, tool, toolset or capability, or its capabilities are
       refused by the capability registry (a dependency cycle, a conflict, a size limit)
  3    environment variables the spec needs are not set (every missing one is named)
"""


SKILLS_DIRECTORY = "skills"


def catalogs(tools_file: str | None, spec_path: str, stack: ExitStack) -> Any:
    """zigai's model strings as providers, the ``--tools`` file's functions as tools and the
    built-in capabilities (see the module); ``stack`` closes their backends."""
    import os

    from zigai.agent_spec import Catalogs, model_string_catalog
    from zigai.capabilities_builtin import DirectorySkills, HttpBrowser, builtin_capabilities
    from zigai.cli.tools_file import load_tools
    from zigai.environments import RootedDirectory

    tools = {tool.name: tool for tool in load_tools(tools_file)} if tools_file else {}
    base = os.path.dirname(os.path.abspath(spec_path))
    repository = stack.enter_context(RootedDirectory.open(base))
    skills = None
    if repository.exists(SKILLS_DIRECTORY) and repository.stat(SKILLS_DIRECTORY).kind == "directory":
        skills = DirectorySkills(stack.enter_context(repository.open_dir(SKILLS_DIRECTORY)))
    browser = stack.enter_context(HttpBrowser())
    builtins = builtin_capabilities(browser=browser, skills=skills, repository=repository)
    return Catalogs(providers=model_string_catalog(), tools=tools, capabilities=builtins)


def check_command(path: str, tools_file: str | None, json_output: bool,
                  env: Mapping[str, str], out: TextIO) -> int:
    """``zigai check SPEC``: parse and dry-run; print what the spec resolves to."""
    from zigai.agent_spec import load, validate_resolution

    with load(path) as owned, ExitStack() as stack:
        plan = validate_resolution(owned, catalogs(tools_file, path, stack), env)
        name = owned.spec.name
    summary: dict[str, Any] = {
        "spec": path, "name": name, "model": f"{plan.provider}:{plan.model.name}",
        "tools": [tool.name for tool in plan.tools], "toolsets": len(plan.toolsets),
        "mcp_servers": [server.name for server in plan.mcp_servers],
        "capabilities": [{"name": c.name, "loading": c.loading} for c in plan.capabilities],
        "environment": list(plan.environment),
    }
    if json_output:
        out.write(json.dumps(summary, ensure_ascii=False) + "\n")
    else:
        out.write(f"ok: {path}: agent {name or '(unnamed)'} on {summary['model']}; "
                  f"tools: {', '.join(summary['tools']) or 'none'}; "
                  f"mcp servers: {', '.join(summary['mcp_servers']) or 'none'}; "
                  f"capabilities: {', '.join(c.name for c in plan.capabilities) or 'none'}; "
                  f"reads: {', '.join(plan.environment) or 'no environment'}\n")
    return int(ExitCode.ok)


def spec_agent(settings: Any, env: Mapping[str, str], stack: ExitStack) -> Any:
    """The agent of ``zigai run --spec``; the stack closes it and its MCP servers."""
    from zigai.agent_spec import load, model_string_factory, resolve
    from zigai.cli.mcp_stdio import mcp_toolset

    def connect(server: Any) -> Any:
        return mcp_toolset(list(server.command), f"mcp server {server.name!r}", stack, server.timeout_ms,
                           env_items=settings.mcp_env or (), inherit_env=bool(settings.mcp_inherit_env))

    with load(settings.spec) as owned:
        resolved = resolve(owned, catalogs(settings.tools, settings.spec, stack), model_string_factory,
                           env, mcp_connector=connect)
    stack.callback(resolved.close)
    return resolved.agent


def add_check_parser(commands: Any, out: TextIO | None) -> None:
    """The ``check`` subcommand of the shared parser."""
    import argparse

    check = commands.add_parser(
        "check", out=out, help="dry-run an agent spec file (no model, network or process)",
        epilog=CHECK_EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("spec_file", metavar="AGENT.yaml", help="the agent spec (JSON or YAML)")
    check.add_argument("--tools", metavar="FILE.py", help="Python file whose functions are the tool registry")
    check.add_argument("--json", action="store_true", help="print the resolution plan as JSON")


_SPEC_CONFLICTS = ("model", "system", "output_schema", "config", "max_requests", "timeout",
                   "retries", "mcp_stdio")


def spec_settings(args: Any) -> Any:
    """``zigai run --spec``'s settings: the spec file and the tool registry, nothing else."""
    import os

    from zigai.cli.config import RunSettings
    from zigai.cli.errors import CliUsageError

    given = [f"--{name.replace('_', '-')}" for name in _SPEC_CONFLICTS if getattr(args, name) is not None]
    if given:
        raise CliUsageError(f"--spec defines the agent; remove {', '.join(given)} (set it in the spec)")
    from zigai.cli.config import check_mcp_env

    return RunSettings(spec=os.path.abspath(args.spec),
                       tools=os.path.abspath(args.tools) if args.tools else None,
                       mcp_env=check_mcp_env(args.mcp_env, "--mcp-env") if args.mcp_env else None,
                       mcp_inherit_env=args.mcp_inherit_env)
