"""Shared fixtures: where the read-only conformance corpus lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def conformance_dir() -> Path:
    configured = os.environ.get("ZIGAI_CONFORMANCE_DIR")
    if configured:
        return Path(configured)
    return REPO_ROOT.parent / "shared" / "conformance"


@pytest.fixture(scope="session")
def conformance_root() -> Path:
    root = conformance_dir()
    if not root.is_dir():
        pytest.skip(
            f"conformance corpus not found at {root}: this optional extra check replays real "
            "provider recordings kept outside the repository; set ZIGAI_CONFORMANCE_DIR to its "
            "folder to run it (cassettes/local/ covers the providers without it)"
        )
    return root


@pytest.fixture(scope="session", autouse=True)
def _dbos_logs_to_the_real_stderr() -> None:
    """DBOS binds its console handler to ``sys.stderr`` on first use and flushes it on every
    ``DBOS()``; under pytest that would be one test's capture stream, closed by the next test.
    Installing the handler up front (on the process's real stderr) keeps DBOS from doing so."""
    import logging
    import sys

    dbos_logger = logging.getLogger("dbos")
    if not dbos_logger.handlers:
        handler = logging.StreamHandler(sys.__stderr__)
        handler.name = "__dbos_console_log_handler__"
        dbos_logger.addHandler(handler)
        dbos_logger.propagate = False
