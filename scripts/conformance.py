#!/usr/bin/env python3
"""Replay recordings through zigai over real HTTP: a thin wrapper of ``zigai conformance run``.

Usage::

    python scripts/conformance.py [--scenarios FILE] [PATH ...]
    python scripts/conformance.py --scenarios cassettes/own-scenarios.yaml cassettes   # ours

PATHs are cassette files or folders (default: ``$ZIGAI_CONFORMANCE_DIR/zigai-cassettes``,
where ``ZIGAI_CONFORMANCE_DIR`` defaults to ``../shared/conformance`` beside the checkout).
Every recording is served by a :class:`zigai.conformance.ConformanceServer` on loopback and
zigai runs its scenario through its own HTTP transport (see docs/conformance.md); the lines
are ``PASS path``, ``FAIL path: reason`` or ``SKIP path: reason`` and the totals.  Exits 1 when
anything failed.  The functions below are what the tests use.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from zigai.conformance.cassette import load_cassette  # noqa: E402
from zigai.conformance.catalog import Entry, build_catalog, scenario_id  # noqa: E402
from zigai.conformance.driver import _settings, run_entries, run_entry  # noqa: E402,F401 - _settings: tests
from zigai.conformance.routes import detect_route  # noqa: E402,F401
from zigai.conformance.scenarios import (  # noqa: E402,F401
    STREAMED_FAMILIES,
    Scenario,
    find_scenario,
    load_scenarios,
)
from zigai.conformance.scenarios import InvalidScenarios as ScenarioError  # noqa: E402,F401
from zigai.conformance.server import ConformanceServer  # noqa: E402

DEFAULT_SCENARIOS = ROOT / "cassettes" / "conformance-scenarios.yaml"
# Routes the corpus records that zigai implements only in later work, by skip reason (none).
LATER_WORK: dict[str, str] = {}


def default_corpus() -> Path:
    base = os.environ.get("ZIGAI_CONFORMANCE_DIR") or str(ROOT.parent / "shared" / "conformance")
    return Path(base) / "zigai-cassettes"


def run(paths: list[Path], scenarios: list[Scenario], out: Any = sys.stdout) -> tuple[int, int, int]:
    """Serve ``paths`` and run zigai through the server; returns (passed, failed, skipped)."""
    entries = build_catalog(paths, scenarios)
    with ConformanceServer(entries) as server:
        return run_entries(entries, server, out)


def run_cassette(path: Path, relative: str, scenarios: list[Scenario]) -> None:
    """Run one recording through its own server; raises AssertionError (or Skip) on failure."""
    from zigai.security import UrlPolicy
    from zigai.transport import HttpTransport

    entry = Entry(scenario_id(relative), path, relative, load_cassette(path), find_scenario(relative, scenarios))
    with ConformanceServer([entry]) as server, HttpTransport(url_policy=UrlPolicy.local_development()) as http:
        run_entry(entry, server, http)


def main(argv: list[str] | None = None) -> int:
    from zigai.cli import main as zigai_main

    args = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--scenarios" in args:
        at = args.index("--scenarios")
        extra, args = ["--scenarios", args[at + 1]], args[:at] + args[at + 2:]
    paths = args or [str(default_corpus())]
    return zigai_main(["conformance", "run", *extra, "--cassettes", *paths])


if __name__ == "__main__":
    raise SystemExit(main())
