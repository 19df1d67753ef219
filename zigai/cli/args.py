"""Turn parsed ``zigai run`` / ``zigai web`` arguments into :class:`RunSettings`.

One job: the precedence rule (flags, then ``ZIGAI_MODEL``, then the config file; a ``--spec``
file defines everything itself) and making paths absolute, shared by every command that
builds an agent from flags.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping

from zigai.cli.config import RunSettings, load_config

__all__ = ["settings_from_args"]


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
