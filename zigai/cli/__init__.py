"""``zigai`` command line: ``run``, ``resume`` and ``demo`` composed from the public API.

The CLI is composition, not another agent runtime: a model string becomes one provider/client
pair (:mod:`zigai.models`), a Python file's functions become reflected tools, and the run goes
through the ordinary :class:`zigai.agent.Agent`.  Modules, one job each:

* :mod:`.app` — argparse, dispatch, exit-code mapping (``main``);
* :mod:`.errors` — CLI errors and the stable :class:`ExitCode` table;
* :mod:`.config` — the bounded JSON configuration file and resolved :class:`RunSettings`;
* :mod:`.files` — bounded reads, atomic replacement, canonical history files;
* :mod:`.tools_file` — ``--tools FILE.py``;
* :mod:`.run` / :mod:`.approvals` — ``run`` and the pause file / ``resume``;
* :mod:`.progress` — ``--stream`` output: the agent's own stream events rendered as text on
  stdout and one-line progress events on stderr;
* :mod:`.demo` / :mod:`.replay` — ``zigai demo`` and its strict loopback cassette server (the
  cassette is package data: ``data/demo_weather_stream.yaml``).

Invariant: importing ``zigai.cli`` imports no provider adapter and no third-party module.
"""

from __future__ import annotations

from zigai.cli.app import build_parser, main
from zigai.cli.config import RunSettings, load_config
from zigai.cli.errors import (
    CassetteReplayError,
    CliUsageError,
    ExitCode,
    InvalidCliConfig,
    InvalidPauseFile,
    exit_code_for,
)

__all__ = [
    "main",
    "build_parser",
    "ExitCode",
    "exit_code_for",
    "RunSettings",
    "load_config",
    "CliUsageError",
    "InvalidCliConfig",
    "InvalidPauseFile",
    "CassetteReplayError",
]
