"""The agent flags of ``zigai run`` / ``zigai web`` and their :class:`RunSettings`.

One job: the flags both commands share, and the precedence rule (flags, then ``ZIGAI_MODEL``, then the config file; a ``--spec``
file defines everything itself) and making paths absolute, shared by every command that
builds an agent from flags.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any

from zigai.cli.config import RunSettings, load_config

__all__ = ["settings_from_args", "add_agent_flags"]


def settings_from_args(args: argparse.Namespace, env: Mapping[str, str]) -> RunSettings:
    """The run settings of ``zigai run``/``zigai web`` arguments: flags over ``ZIGAI_MODEL`` over the config file."""
    if args.spec:
        from zigai.cli.spec import spec_settings

        return spec_settings(args)
    config_path = args.config or env.get("ZIGAI_CONFIG")
    base = load_config(config_path) if config_path else RunSettings()
    flags = {
        "model": args.model, "system": args.system, "tools": args.tools,
        "output_schema": args.output_schema, "max_requests": args.max_requests,
        "timeout": args.timeout, "retries": args.retries,
        "mcp_stdio": tuple(args.mcp_stdio) if args.mcp_stdio else None,
        "mcp_env": tuple(args.mcp_env) if args.mcp_env else None,
        "mcp_inherit_env": args.mcp_inherit_env,
        "profile": args.profile,
    }
    values = base.to_json()
    # Precedence, highest first: flags, the environment (ZIGAI_MODEL), the config file.
    if env.get("ZIGAI_MODEL"):
        values["model"] = env["ZIGAI_MODEL"]
    values.update({k: v for k, v in flags.items() if v is not None})
    for key in ("mcp_stdio", "mcp_env"):
        if values.get(key):
            values[key] = tuple(values[key])
    if values.get("mcp_env"):
        from zigai.cli.config import check_mcp_env

        values["mcp_env"] = check_mcp_env(values["mcp_env"], "--mcp-env")
    if values.get("tools"):
        values["tools"] = os.path.abspath(values["tools"])
    if values.get("output_schema"):
        values["output_schema"] = os.path.abspath(values["output_schema"])
    return RunSettings(**values)


def profile_json(text: str) -> dict[str, Any]:
    from zigai import json as zjson
    from zigai.json import defaults

    try:
        value = zjson.parse(text, defaults.cli_manifest)
    except zjson.ValidationError as exc:
        raise argparse.ArgumentTypeError(f"expected a JSON object of profile fields: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(
            f"expected a JSON object of profile fields, got {zjson.type_name(value)}")
    from zigai.model import InvalidProfileOverride, ModelProfile, apply_profile_overrides

    try:
        apply_profile_overrides(ModelProfile(), value, "--profile")
    except InvalidProfileOverride as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def add_agent_flags(parser: Any) -> None:
    """The flags every agent-building command shares: ``--profile`` and the MCP stdio servers."""
    parser.add_argument("--profile", type=profile_json, metavar="JSON",
                        help="override the model's capability profile, e.g. "
                             "'{\"supports_tools\": true}' for a model name zigai does not know")
    parser.add_argument("--mcp-stdio", action="append", metavar='"CMD ARGS"',
                        help="an MCP server started on stdio whose tools the agent may call (repeatable)")
    parser.add_argument("--mcp-env", action="append", metavar="NAME[=VALUE]",
                        help="give the --mcp-stdio servers this variable: NAME copies it from zigai's environment, "
                             "NAME=VALUE sets it (repeatable; by default servers get only HOME, PATH, USER, "
                             "SHELL, TERM, LOGNAME, TMPDIR, LANG and LC_*)")
    parser.add_argument("--mcp-inherit-env", action="store_true", default=None,
                        help="give the --mcp-stdio servers zigai's whole environment, API keys included")
