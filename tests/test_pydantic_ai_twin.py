"""The PydanticAI twin of ``tests/test_ported_from_pydantic_ai.py`` runs against pydantic-ai-slim.

The twin is that very file with its marked import block swapped for PydanticAI's imports and
nothing else changed; it runs in a child pytest process, so a passing pair shows the module
is written exactly the way a PydanticAI user writes it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "test_ported_from_pydantic_ai.py"
START = "# --- imports: the only lines that differ from the PydanticAI twin ---\n"
END = "# --- end of imports ---\n"
PYDANTIC_AI_IMPORTS = (
    "from pydantic_ai import Agent, ModelRetry, RunContext\n"
    "from pydantic_ai.models.test import TestModel\n\n"
)


def _twin_source() -> str:
    text = SOURCE.read_text(encoding="utf-8")
    start, end = text.index(START), text.index(END)
    head, body = text[:start], text[end:]
    code = [line for line in (head + body).splitlines() if line.startswith(("from ", "import "))]
    assert not [line for line in code if "zigai" in line], "only the import block may import zigai"
    return head + PYDANTIC_AI_IMPORTS + body


def test_only_the_import_block_names_zigai() -> None:
    twin = _twin_source()
    assert "from pydantic_ai import Agent" in twin
    assert "from zigai" not in twin


def test_the_same_module_passes_on_pydantic_ai(tmp_path: Path) -> None:
    pytest.importorskip(
        "pydantic_ai", reason="install pydantic-ai-slim==2.31.0 (the dev extra) to run the twin"
    )
    twin = tmp_path / "test_twin_on_pydantic_ai.py"
    twin.write_text(_twin_source(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(twin)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert "6 passed" in completed.stdout
