"""The CLI configuration file and the resolved settings of one ``zigai run``.

The file is one bounded JSON object (the ``cli_manifest`` profile of :mod:`zigai.json.defaults`:
1 MiB, 256 KiB strings, depth 32, 4,096 items)::

    {"version": 1, "model": "openai:gpt-5-mini", "api_key_env": "OPENAI_API_KEY",
     "system": "Be brief.", "max_requests": 10, "timeout": 60, "retries": 2,
     "tools": "tools.py", "output_schema": "answer.schema.json",
     "mcp_stdio": ["python mcp_server.py"]}

Every key is optional except ``version``; unknown keys are rejected.  Credentials never
appear in it: ``api_key_env`` holds the *name* of an environment variable (upper-case
letters, digits, underscores), and any other key that looks like a secret is refused.
Relative ``tools`` / ``output_schema`` paths are resolved against the file's directory;
``mcp_stdio`` commands (at most 16, see :mod:`zigai.cli.mcp_stdio`) run in the working directory.
``retries`` is how many times a failed model request is retried (0 turns retries off; unset
means :data:`DEFAULT_RETRIES`).

Precedence, highest first: command-line flags, environment (``ZIGAI_MODEL``), the file.
:class:`RunSettings` is the fully resolved, immutable result; the pause file stores it so a
resumed run rebuilds exactly the same agent.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from zigai.cli.errors import InvalidCliConfig

__all__ = ["CONFIG_VERSION", "DEFAULT_RETRIES", "MAX_RETRIES", "RunSettings", "load_config",
           "settings_from_json"]

CONFIG_VERSION = 1
#: Retries per model request when neither flags nor the file say (429s, 5xx, timeouts,
#: connection failures; Retry-After honoured): the defaults of ``zigai.retry.RetryPolicy``.
DEFAULT_RETRIES = 2
MAX_RETRIES = 10
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,127}$")
_SECRET_WORDS = ("key", "token", "secret", "password", "credential", "auth")


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Everything that shapes the agent of one run (no credentials, only variable names)."""

    model: str | None = None
    api_key_env: str | None = None
    system: str | None = None
    tools: str | None = None
    output_schema: str | None = None
    max_requests: int | None = None
    timeout: float | None = None
    retries: int | None = None
    mcp_stdio: tuple[str, ...] | None = None
    #: ``--mcp-env NAME[=VALUE]`` items: variables the MCP stdio servers get beyond the allowlist.
    mcp_env: tuple[str, ...] | None = None
    #: ``--mcp-inherit-env``: MCP stdio servers inherit zigai's whole environment.
    mcp_inherit_env: bool | None = None
    #: ``zigai run --spec``: the agent spec file (absolute) that defines the agent instead.
    spec: str | None = None

    def to_json(self) -> dict[str, Any]:
        values = {k: v for k, v in asdict(self).items() if v is not None}
        for key in ("mcp_stdio", "mcp_env"):
            if key in values:
                values[key] = list(values[key])
        return values


_TYPES: dict[str, tuple[type, ...]] = {
    "model": (str,), "api_key_env": (str,), "system": (str,), "tools": (str,),
    "output_schema": (str,), "max_requests": (int,), "timeout": (int, float),
    "retries": (int,), "mcp_stdio": (list,), "spec": (str,), "mcp_env": (list,), "mcp_inherit_env": (bool,),
}


def settings_from_json(value: Any, where: str, base_dir: Path | None = None) -> RunSettings:
    """Validate a settings object (config file body without ``version``, or a pause file's)."""
    if not isinstance(value, dict):
        raise InvalidCliConfig(f"{where} must be a JSON object")
    known = {f.name for f in fields(RunSettings)}
    values: dict[str, Any] = {}
    for key, item in value.items():
        if key not in known:
            if any(word in key.lower() for word in _SECRET_WORDS):
                raise InvalidCliConfig(
                    f"{where}: {key!r} is refused; credentials are never stored in configuration, "
                    "name an environment variable with 'api_key_env' instead"
                )
            raise InvalidCliConfig(f"{where}: unknown key {key!r} (known: {', '.join(sorted(known))})")
        if item is None:
            continue
        if (isinstance(item, bool) and key != "mcp_inherit_env") or not isinstance(item, _TYPES[key]):
            raise InvalidCliConfig(f"{where}: {key!r} has the wrong type")
        values[key] = item
    env_name = values.get("api_key_env")
    if env_name is not None and not _ENV_NAME.match(env_name):
        raise InvalidCliConfig(
            f"{where}: 'api_key_env' must be an environment variable NAME such as OPENAI_API_KEY"
        )
    if "max_requests" in values and not 1 <= values["max_requests"] <= 10_000:
        raise InvalidCliConfig(f"{where}: 'max_requests' must be between 1 and 10000")
    if "timeout" in values and not 0 < values["timeout"] <= 86_400:
        raise InvalidCliConfig(f"{where}: 'timeout' must be between 0 and 86400 seconds")
    if "retries" in values and not 0 <= values["retries"] <= MAX_RETRIES:
        raise InvalidCliConfig(f"{where}: 'retries' must be between 0 and {MAX_RETRIES}")
    if "mcp_stdio" in values:
        commands = values["mcp_stdio"]
        if not all(isinstance(c, str) and c.strip() for c in commands) or len(commands) > 16:
            raise InvalidCliConfig(f"{where}: 'mcp_stdio' must be a list of at most 16 non-empty command strings")
        values["mcp_stdio"] = tuple(commands)
    if "mcp_env" in values:
        values["mcp_env"] = check_mcp_env(values["mcp_env"], where)
    if base_dir is not None:
        for key in ("tools", "output_schema", "spec"):
            if key in values and not os.path.isabs(values[key]):
                values[key] = str(base_dir / values[key])
    return RunSettings(**values)


def check_mcp_env(items: Any, where: str) -> tuple[str, ...]:
    """``mcp_env`` items (``NAME`` or ``NAME=VALUE``); a secret-looking NAME=VALUE is refused."""
    from zigai.child_process import InvalidChildEnvironment, parse_env_flag

    if not all(isinstance(item, str) for item in items) or len(items) > 64:
        raise InvalidCliConfig(f"{where}: 'mcp_env' must be a list of at most 64 NAME or NAME=VALUE strings")
    try:
        values, _names = parse_env_flag(items)
    except InvalidChildEnvironment as exc:
        raise InvalidCliConfig(f"{where}: {exc}") from None
    for name in values:
        if any(word in name.lower() for word in _SECRET_WORDS):
            raise InvalidCliConfig(
                f"{where}: {name}=VALUE is refused because settings are saved to files; "
                f"export {name} and pass it by name (--mcp-env {name})")
    return tuple(items)


def load_config(path: str | os.PathLike[str]) -> RunSettings:
    """Read and validate a configuration file (see the module docstring)."""
    from zigai.cli.errors import CliUsageError
    from zigai.cli.files import read_json_file
    from zigai.json import defaults

    try:
        document = read_json_file(path, defaults.cli_manifest, "config file")
    except InvalidCliConfig:
        raise
    except CliUsageError as exc:
        raise InvalidCliConfig(str(exc)) from None
    where = f"config file {str(path)!r}"
    if not isinstance(document, dict):
        raise InvalidCliConfig(f"{where} must hold a JSON object")
    body = dict(document)
    version = body.pop("version", None)
    if version != CONFIG_VERSION or isinstance(version, bool):
        raise InvalidCliConfig(f"{where}: 'version' must be {CONFIG_VERSION}")
    return settings_from_json(body, where, Path(path).resolve().parent)
