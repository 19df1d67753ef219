"""Where the shared conformance corpus is, and how a test that needs it says so when it is absent.

The corpus (real provider recordings in ``zigai-cassettes/`` and the JSON-Schema-Test-Suite)
is kept outside the repository: ``$ZIGAI_CONFORMANCE_DIR``, default ``../shared/conformance``
beside the checkout.  A fresh clone has none of it; the project's own recordings
(``cassettes/local/`` of llama-server, ``cassettes/katan/`` of llm-katan,
``cassettes/litellm/`` of a LiteLLM proxy) stand in for the provider replays, so only tests
that check the corpus itself need it.

This is test support: the ``zigai`` package never imports it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent

__all__ = [
    "REPO_ROOT",
    "Recordings",
    "corpus_dir",
    "corpus_file",
    "missing_corpus_reason",
]


@dataclass(frozen=True)
class Recordings:
    """A folder of real recordings the walker tests replay (the ``recordings`` fixture: our
    ``cassettes/``, or the corpus's ``zigai-cassettes/``) and the runner's scenarios for it."""

    root: Path
    scenarios: Path
    own: bool


def corpus_dir() -> Path:
    """Where the shared conformance corpus is looked for (it may not exist)."""
    configured = os.environ.get("ZIGAI_CONFORMANCE_DIR")
    if configured:
        return Path(configured)
    return REPO_ROOT.parent / "shared" / "conformance"


def corpus_file(relative: str) -> Path | None:
    """``zigai-cassettes/<relative>`` of the shared corpus, or None when it is absent."""
    path = corpus_dir() / "zigai-cassettes" / relative
    return path if path.is_file() else None


def missing_corpus_reason(why: str) -> str:
    """The skip reason of a test that needs the corpus: what is missing, what to set, and
    ``why`` no recording of the repository's own can stand in."""
    return (
        f"needs the shared conformance corpus, not found at {corpus_dir()}: set "
        "ZIGAI_CONFORMANCE_DIR=/path/to/conformance (the folder holding zigai-cassettes/ and "
        f"json-schema-test-suite/) to run it; {why}"
    )
