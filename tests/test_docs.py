"""Every code block in README.md and docs/*.md runs: python in-process, `$ zigai` as a subprocess.

* ```python blocks are executed in a fresh namespace (offline: test model, no keys);
* ```console blocks run each ``$ zigai …`` line as ``python -m zigai …`` with provider keys
  removed from the environment; a following ``[exit code N…]`` line states the expected
  status (default 0);
* ```json blocks are CLI configuration examples and must load as one;
* ```yaml blocks are agent specs (docs/agent-spec.md) and must parse as one;
* the ```sh block of the README must be exactly the two set-up commands, and ``.ci/run``
  must run the same install and test commands.
Any other fence fails, so no block escapes.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([a-z]*)\n(.*?)^```", re.S | re.M)
SETUP = [
    'python3 -m venv .venv && .venv/bin/pip install -e ".[dev]" && .venv/bin/zigai demo',
    ".venv/bin/python -m pytest -q",
]


def _blocks() -> list[tuple[str, int, str, str]]:
    found = []
    for path in DOCS:
        for index, match in enumerate(FENCE.finditer(path.read_text(encoding="utf-8"))):
            found.append((path.relative_to(ROOT).as_posix(), index, match.group(1), match.group(2)))
    return found


BLOCKS = _blocks()


def _ids() -> list[str]:
    return [f"{path}#{index}-{lang}" for path, index, lang, _ in BLOCKS]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.endswith(("_API_KEY", "_TOKEN", "_PAT")) and not k.startswith("ZIGAI_")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def test_docs_exist_and_have_blocks() -> None:
    names = {p.name for p in DOCS}
    assert {"README.md", "agents.md", "tools.md", "output-and-streaming.md", "providers.md",
            "security.md", "errors.md", "testing.md"} <= names
    assert len(BLOCKS) >= 15
    assert len((ROOT / "README.md").read_text().splitlines()) <= 150


def test_docs_index_links_every_page_and_only_real_ones() -> None:
    index = (ROOT / "docs" / "index.md").read_text()
    linked = set(re.findall(r"\]\(([\w.-]+\.md)\)", index))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    assert pages - linked == set(), "add these pages to docs/index.md"
    assert linked - pages == set(), "docs/index.md links pages that do not exist"
    assert "(docs/index.md)" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize(("path", "index", "lang", "code"), BLOCKS, ids=_ids())
def test_block_runs(path: str, index: int, lang: str, code: str, tmp_path: Path,
                    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    if lang == "python":
        import types

        monkeypatch.chdir(tmp_path)
        module = types.ModuleType(f"docs_block_{index}")
        monkeypatch.setitem(sys.modules, module.__name__, module)  # dataclasses look it up
        exec(compile(code, f"{path}#{index}", "exec"), module.__dict__)
    elif lang == "console":
        _run_console(code, tmp_path)
    elif lang == "json":
        from zigai.cli import load_config

        target = tmp_path / "zigai.json"
        target.write_text(json.dumps(json.loads(code)))
        assert load_config(target).model
    elif lang == "yaml":
        from zigai.agent_spec import parse

        with parse(code, format="yaml") as spec:  # every YAML block is an agent spec
            assert spec.spec.model.provider
    elif lang == "sh":
        assert path == "README.md"
        assert code.splitlines() == SETUP
        ci = (ROOT / ".ci" / "run").read_text()
        assert 'pip install --quiet -e ".[dev]"' in ci and '-m pytest -q' in ci
    else:
        pytest.fail(f"{path}: code block with unsupported language {lang!r}")


def _command_line(value: str) -> str:
    """A command line inside one argument: ``python`` is this interpreter, repo paths absolute."""
    tokens = shlex.split(value)
    return shlex.join(sys.executable if t == "python" else str(ROOT / t) if "/" in t and (ROOT / t).exists() else t
                      for t in tokens)


def _run_console(code: str, cwd: Path) -> None:
    lines = code.splitlines()
    commands = [(i, line[2:]) for i, line in enumerate(lines) if line.startswith("$ ")]
    assert commands, "a console block needs at least one '$ zigai' command"
    for i, command in commands:
        argv = shlex.split(command)
        assert argv[0] == "zigai"
        args = [str(ROOT / a) if (ROOT / a).exists() and "/" in a else a for a in argv[1:]]
        args = [_command_line(a) if i and args[i - 1] == "--mcp-stdio" else a for i, a in enumerate(args)]
        if "--mcp-stdio" in args:  # the servers get only the allowlist; let them import this checkout
            args += ["--mcp-env", "PYTHONPATH"]
        expected = 0
        if i + 1 < len(lines):
            marker = re.match(r"\[exit code (\d+)", lines[i + 1])
            if marker:
                expected = int(marker.group(1))
        done = subprocess.run([sys.executable, "-m", "zigai", *args], cwd=cwd, env=_env(),
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == expected, done.stderr
        if expected == 0:
            assert done.stdout.strip(), "the command printed nothing"
