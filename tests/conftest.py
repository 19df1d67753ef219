"""Shared fixtures: the read-only conformance corpus (see ``support.corpus``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.corpus import REPO_ROOT, Recordings, corpus_dir, missing_corpus_reason

#: Why a ``conformance`` test needs the corpus when its marker gives no reason of its own.
CHECKS_THE_CORPUS = "this extra check walks the corpus's own recordings"


@pytest.fixture
def conformance_root(request: pytest.FixtureRequest) -> Path:
    """The shared corpus folder; the test skips, saying what to set, when it is absent.  A test
    marked ``@pytest.mark.conformance("why")`` names why no recording of ours stands in."""
    root = corpus_dir()
    if not root.is_dir():
        marker = request.node.get_closest_marker("conformance")
        why = marker.args[0] if marker is not None and marker.args else CHECKS_THE_CORPUS
        pytest.skip(missing_corpus_reason(why))
    return root


@pytest.fixture(params=["own", pytest.param("corpus", marks=pytest.mark.conformance)])
def recordings(request: pytest.FixtureRequest) -> Recordings:
    """Each walker runs over the project's own ``cassettes/`` (always there) and over the
    shared corpus (an extra check that skips, saying what to set, when it is absent)."""
    cassettes = REPO_ROOT / "cassettes"
    if request.param == "own":
        return Recordings(cassettes, cassettes / "own-scenarios.yaml", own=True)
    root = request.getfixturevalue("conformance_root")
    return Recordings(root / "zigai-cassettes", cassettes / "conformance-scenarios.yaml", own=False)


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
