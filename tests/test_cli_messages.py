"""The CLI's error lines (issue 31, #12): one prefix, one line, and type errors that name the type.

The command runs as a real child process so what is pinned is what an operator reads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from zigai import json as zjson
from zigai.cli.config import settings_from_json
from zigai.cli.errors import InvalidCliConfig, error_line

ROOT = Path(__file__).resolve().parent.parent


def _zigai(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "zigai", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=env)


def test_a_usage_error_is_prefixed_once_and_points_at_the_subcommand_help(tmp_path: Path) -> None:
    done = _zigai("run", "hi", "--model", "test", "--timeout", "-1", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == ("zigai: error: CliUsageError: argument --timeout: expected a number of "
                           "seconds > 0, got '-1' (see 'zigai run --help')\n")


def test_a_config_type_error_says_which_type_and_a_multi_line_error_stays_one_line(tmp_path: Path) -> None:
    config = tmp_path / "zigai.json"
    config.write_text(json.dumps({"version": 1, "max_requests": "5"}), encoding="utf-8")
    done = _zigai("run", "hi", "--model", "test", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.endswith("'max_requests' has the wrong type: expected integer, got string\n")
    spec = tmp_path / "agent.yaml"
    spec.write_text("x: [\n", encoding="utf-8")
    done = _zigai("check", str(spec), cwd=tmp_path)
    assert done.stderr.startswith("zigai: error: InvalidAgentSpec: ") and done.stderr.count("\n") == 1


@pytest.mark.parametrize(("key", "value", "words"), [
    ("max_requests", "5", "expected integer, got string"),
    ("max_requests", True, "expected integer, got boolean"),
    ("timeout", "1", "expected number, got string"),
    ("model", 3, "expected string, got number"),
    ("mcp_stdio", "npx server", "expected array, got string"),
])
def test_each_wrong_type_names_the_expected_and_the_given_type(key: str, value: Any, words: str) -> None:
    with pytest.raises(InvalidCliConfig, match=f"'{key}' has the wrong type: {words}$"):
        settings_from_json({key: value}, "settings")


def test_the_type_words_are_json_words() -> None:
    assert zjson.expected_kinds((int, float)) == "number"
    assert zjson.expected_kinds((str, type(None))) == "string or null"
    assert zjson.expected_kinds(dict) == "object"
    assert zjson.expected_kinds(Path) == "Path"
    assert zjson.wrong_type("ttl", [], int) == "'ttl' has the wrong type: expected integer, got array"
    assert error_line(ValueError("two\n  lines")) == "zigai: error: ValueError: two lines\n"
