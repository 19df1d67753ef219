"""Type checkers see the generics: ``ToolRunContext[Deps]`` and ``Agent[Deps]`` (mypy, bounded).

``tests/typecheck/generics_ok.py`` must check clean; every line of ``generics_bad.py`` marked
``# expect: MESSAGE`` must produce a mypy error containing MESSAGE on that line, and no other
line may.  mypy runs in a subprocess with a timeout and the repository's mypy cache.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ROOT / "tests" / "typecheck"


def _run_mypy(*paths: str, strict: bool = False) -> subprocess.CompletedProcess[str]:
    """mypy in a subprocess; ``strict`` checks a user's files only (zigai itself: ``mypy zigai``)."""
    flags = ["--strict", "--follow-imports=silent"] if strict else []
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "setup.cfg"), *flags,
         "--cache-dir", str(ROOT / ".mypy_cache"), "--no-error-summary", *paths],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )


def _mypy(path: Path, *, strict: bool = False) -> tuple[int, list[str]]:
    done = _run_mypy(str(path), strict=strict)
    return done.returncode, [line for line in done.stdout.splitlines() if ": error:" in line]


def _assert_errors_on_exactly_the_marked_lines(path: Path) -> None:
    """Every ``# expect: MESSAGE`` line has a mypy error containing MESSAGE, and no other line has one."""
    expected = {
        number: match.group(1)
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if (match := re.search(r"# expect: (.+)$", line))
    }
    code, errors = _mypy(path)
    assert code == 1
    found: dict[int, list[str]] = {}
    for line in errors:
        found.setdefault(int(line.split(":")[1]), []).append(line)
    assert set(found) == set(expected), errors
    for number, message in expected.items():
        assert any(message in line for line in found[number]), (message, found[number])


def test_the_generic_spellings_type_check() -> None:
    code, errors = _mypy(FILES / "generics_ok.py")
    assert (code, errors) == (0, [])


def test_misused_deps_are_type_errors_on_exactly_the_marked_lines() -> None:
    _assert_errors_on_exactly_the_marked_lines(FILES / "generics_bad.py")


def test_pydantic_ai_shaped_code_type_checks_strictly() -> None:
    assert _mypy(FILES / "porting_ok.py", strict=True) == (0, [])


def test_typed_run_keywords_and_outputs_catch_misuse_on_exactly_the_marked_lines() -> None:
    _assert_errors_on_exactly_the_marked_lines(FILES / "porting_bad.py")


def test_the_from_pydantic_ai_page_examples_type_check_strictly(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "from-pydantic-ai.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", page, re.S | re.M)
    assert len(blocks) >= 6
    paths = []
    for index, code in enumerate(blocks):
        path = tmp_path / f"from_pydantic_ai_block_{index}.py"
        path.write_text(code, encoding="utf-8")
        paths.append(str(path))
    done = _run_mypy(*paths, strict=True)
    assert (done.returncode, done.stdout) == (0, "")
