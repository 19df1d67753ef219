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
            f"conformance corpus not found at {root}; set ZIGAI_CONFORMANCE_DIR to the "
            "shared/conformance folder to run these tests"
        )
    return root
