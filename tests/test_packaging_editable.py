"""An editable install is visible to type checkers (issue 31, #12).

The README's setup is ``pip install -e ".[dev]"``.  A user's own code type-checked against that
venv must find zigai and its annotations (``py.typed``), not "import-not-found".  The test does
what a user does: a fresh venv, an editable install of a copy of this project, mypy on a file.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
USER_CODE = """\
from zigai.agent import Agent
from zigai.testing import TestModel

agent = Agent(TestModel())
count: int = agent.run("hi").usage.requests
wrong: str = Agent  # mypy must know what Agent is to refuse this
"""


def _needs(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"needs {module} in this interpreter (pip install -e '.[dev]')")


@pytest.mark.timeout(300)
def test_mypy_finds_zigai_through_an_editable_install(tmp_path: Path) -> None:
    for module in ("mypy", "wheel", "setuptools"):
        _needs(module)
    project = tmp_path / "project"
    project.mkdir()
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "zigai", project / "zigai",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        # built by this interpreter (setuptools, wheel), installed into the fresh venv
        # --ignore-installed: never uninstall the zigai this interpreter runs (pip would, --prefix or not)
        [sys.executable, "-m", "pip", "install", "--quiet", "--ignore-installed", "--prefix", str(env_dir), "--no-deps",
         "--no-build-isolation", "--no-index", "--no-warn-script-location", "-e", str(project)],
        capture_output=True, text=True, timeout=240, env=clean,
    )
    assert install.returncode == 0, install.stderr
    user = tmp_path / "user_code.py"
    user.write_text(USER_CODE, encoding="utf-8")
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--python-executable", str(python), "--no-incremental",
         "--cache-dir", str(tmp_path / "mypy-cache"), str(user)],
        capture_output=True, text=True, timeout=240, cwd=tmp_path, env=clean,
    )
    assert "import-not-found" not in checked.stdout and "import-untyped" not in checked.stdout, checked.stdout
    errors = [line for line in checked.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and "user_code.py:6:" in errors[0], checked.stdout
