"""docs/architecture.md's map stays true: every module and test file it names exists, and
every section of the specification has a row (when the specification is present)."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
TABLE = PAGE[PAGE.index("## From the specification to the code"):]


def test_every_module_the_page_names_exists() -> None:
    modules = set(re.findall(r"`(zigai(?:\.[A-Za-z_][A-Za-z0-9_]*)*)`", PAGE))
    assert len(modules) > 100
    missing = sorted(m for m in modules if importlib.util.find_spec(m) is None)
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"


def test_every_test_file_the_table_names_exists() -> None:
    files = set(re.findall(r"`(tests/[\w/]+\.py)`", PAGE))
    assert len(files) > 60
    missing = sorted(f for f in files if not (ROOT / f).is_file())
    assert not missing, f"docs/architecture.md names test files that do not exist: {missing}"


def test_every_row_names_modules_and_tests() -> None:
    rows = [line for line in TABLE.splitlines() if line.startswith("| ") and not line.startswith("| spec")]
    assert len(rows) >= 40
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        assert len(cells) == 3, row
        assert "`zigai" in cells[1] and "`tests/" in cells[2], row


def _spec_dir() -> Path:
    configured = os.environ.get("ZIGAI_SPEC_DIR")
    return Path(configured) if configured else ROOT.parent / "shared" / "spec"


@pytest.mark.skipif(not (_spec_dir() / "architecture.txt").is_file(),
                    reason="needs the specification: set ZIGAI_SPEC_DIR to the folder holding architecture.txt, "
                           "api.txt and tools.txt (default ../shared/spec beside the checkout)")
def test_every_section_of_the_specification_has_a_row() -> None:
    sections = []
    for name, marker in (("architecture", "¶"), ("api", " #"), ("tools", "¶")):
        text = (_spec_dir() / f"{name}.txt").read_text(encoding="utf-8")
        sections += [(name, line[: -len(marker)].strip()) for line in text.splitlines() if line.endswith(marker)]
    assert len(sections) > 40
    first_cells = [line.split(" | ")[0].lstrip("| ") for line in TABLE.splitlines() if line.startswith("| ")]
    missing = [f"{doc}: {title}" for doc, title in sections
               if not any(cell.startswith(f"{doc}: ") and title in cell for cell in first_cells)]
    assert not missing, f"add rows to docs/architecture.md for: {missing}"
