"""Stdio children (MCP, ACP, ``zigai run --mcp-stdio``): a small environment, nothing left behind.

Real child processes: one writes the environment it got to a file, another starts a helper
that keeps the shared stdout pipe open (the ``npx`` / wrapper pattern) and records its pid.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import sys
import threading
import time
from pathlib import Path

import pytest

from zigai import mcp
from zigai.acp.transport import StdioTransport as AcpStdioTransport
from zigai.child_process import (
    DEFAULT_INHERITED,
    InvalidChildEnvironment,
    child_environment,
    parse_env_flag,
)
from zigai.cli import ExitCode, main
from zigai.cli.config import settings_from_json
from zigai.cli.errors import InvalidCliConfig

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "mcp_server.py"

DUMP_ENV = """
import json, os, sys
with open(sys.argv[1] + ".tmp", "w") as f:
    json.dump(dict(os.environ), f)
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
if len(sys.argv) > 2:
    import runpy
    runpy.run_path(sys.argv[2], run_name="__main__")
else:
    sys.stdin.read()
"""

# The wrapper starts a helper sharing its stdout, records the helper's pid, and exits when its
# stdin closes -- leaving the helper holding the pipe, as an npx-started server does.
WRAPPER = """
import subprocess, sys
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(helper.pid))
import os
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
sys.stdin.read()
"""


def _wait_for(path: Path, timeout: float = 30.0) -> str:
    end = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < end, f"the child never wrote {path}"
        time.sleep(0.02)
    return path.read_text()


def _gone(pid: int, within: float = 5.0) -> bool:
    """The process stops running within ``within`` s (SIGKILL lands asynchronously; a zombie is gone)."""
    end = time.monotonic() + within
    while not _stopped(pid):
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def _stopped(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent-secret")
    monkeypatch.setenv("ZIGAI_PASSED", "by-name")
    monkeypatch.setenv("LC_TIME", "C")
    monkeypatch.setenv("BASH_FUNC_x%%", "() { echo hi; }")
    monkeypatch.setenv("LC_EVIL", "() { echo hi; }")


# ----------------------------------------------------------------------------- the helper


def test_the_default_environment_is_the_allowlist_only() -> None:
    source = {"PATH": "/bin", "HOME": "/h", "LANG": "C.UTF-8", "LC_ALL": "C", "OPENAI_API_KEY": "sk",
              "AWS_SECRET_ACCESS_KEY": "x", "LC_FN": "() { :; }", "TERM": "xterm"}
    env = child_environment(source=source)
    expected = {"LANG": "C.UTF-8", "LC_ALL": "C"}
    expected.update({k: v for k, v in source.items() if k in DEFAULT_INHERITED})
    assert env == expected
    assert "OPENAI_API_KEY" not in env and "LC_FN" not in env


def test_named_variables_values_and_full_inheritance() -> None:
    source = {"PATH": "/bin", "OPENAI_API_KEY": "sk", "GITHUB_TOKEN": "gh"}
    env = child_environment({"MODE": "x", "PATH": "/override"}, pass_through=["GITHUB_TOKEN", "ABSENT"],
                            source=source)
    assert env == {"PATH": "/override", "GITHUB_TOKEN": "gh", "MODE": "x"}
    assert child_environment(inherit_all=True, source=source) == source


@pytest.mark.parametrize("bad", ["", "A=B", "A\0"])
def test_bad_names_and_values_are_refused_before_any_process_starts(bad: str) -> None:
    with pytest.raises(InvalidChildEnvironment, match="invalid"):
        child_environment(pass_through=[bad], source={})
    with pytest.raises(InvalidChildEnvironment):
        child_environment({bad: "v"}, source={})
    with pytest.raises(InvalidChildEnvironment, match="without NUL"):
        child_environment({"OK": "a\0b"}, source={})
    with pytest.raises(mcp.InvalidMcpRequest, match="StdioOptions"):
        mcp.StdioOptions(env={bad: "v"})
    with pytest.raises(mcp.InvalidMcpRequest, match="not one string"):
        mcp.StdioOptions(pass_env="HOME")  # type: ignore[arg-type]


def test_env_flag_items_split_into_values_and_names() -> None:
    assert parse_env_flag(["A", "B=1", "C=", "D=x=y"]) == ({"B": "1", "C": "", "D": "x=y"}, ("A",))
    with pytest.raises(InvalidChildEnvironment):
        parse_env_flag(["=v"])


# ----------------------------------------------------------------------------- real children


def test_an_mcp_stdio_child_gets_no_secret_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _secret_env(monkeypatch)
    out = tmp_path / "env.json"
    options = mcp.StdioOptions(stderr=mcp.StderrMode.discard, pass_env=("ZIGAI_PASSED",), env={"EXTRA": "1"})
    with mcp.StdioTransport([sys.executable, "-c", DUMP_ENV, str(out)], options):
        seen = json.loads(_wait_for(out))
    assert "OPENAI_API_KEY" not in seen and "BASH_FUNC_x%%" not in seen and "LC_EVIL" not in seen
    assert seen["ZIGAI_PASSED"] == "by-name" and seen["EXTRA"] == "1" and seen["LC_TIME"] == "C"
    assert seen["PATH"] == os.environ["PATH"]


def test_full_inheritance_is_a_named_opt_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _secret_env(monkeypatch)
    out = tmp_path / "env.json"
    options = mcp.StdioOptions(stderr=mcp.StderrMode.discard, inherit_env=True)
    with mcp.StdioTransport([sys.executable, "-c", DUMP_ENV, str(out)], options):
        assert json.loads(_wait_for(out))["OPENAI_API_KEY"] == "sk-parent-secret"


def test_an_acp_stdio_child_gets_no_secret_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _secret_env(monkeypatch)
    out = tmp_path / "env.json"
    transport = AcpStdioTransport([sys.executable, "-c", DUMP_ENV, str(out)], pass_env=["ZIGAI_PASSED"])
    try:
        seen = json.loads(_wait_for(out))
    finally:
        transport.close()
    assert "OPENAI_API_KEY" not in seen and seen["ZIGAI_PASSED"] == "by-name"
    with pytest.raises(ValueError, match="not one string"):
        AcpStdioTransport([sys.executable, "-c", ""], pass_env="HOME")  # type: ignore[arg-type]
    out.unlink()
    transport = AcpStdioTransport([sys.executable, "-c", DUMP_ENV, str(out)], inherit_env=True)
    try:
        assert json.loads(_wait_for(out))["OPENAI_API_KEY"] == "sk-parent-secret"
    finally:
        transport.close()


def _cli(tmp_path: Path, *flags: str) -> tuple[int, dict[str, str], str]:
    out = tmp_path / "env.json"
    command = shlex.join([sys.executable, "-c", DUMP_ENV, str(out), str(EXAMPLE)])
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(["run", "hi", "--mcp-stdio", command, "--mcp-env", f"PYTHONPATH={ROOT}", *flags],
                env={}, out=stdout, err=stderr)
    return code, json.loads(out.read_text()) if out.exists() else {}, stderr.getvalue()


def test_zigai_run_mcp_stdio_passes_only_the_allowlist_and_mcp_env(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _secret_env(monkeypatch)
    code, seen, err = _cli(tmp_path, "--mcp-env", "ZIGAI_PASSED", "--mcp-env", "MODE=fast")
    assert code == ExitCode.ok, err
    assert "OPENAI_API_KEY" not in seen
    assert seen["ZIGAI_PASSED"] == "by-name" and seen["MODE"] == "fast" and seen["PYTHONPATH"] == str(ROOT)
    code, seen, err = _cli(tmp_path, "--mcp-inherit-env")
    assert code == ExitCode.ok, err
    assert seen["OPENAI_API_KEY"] == "sk-parent-secret"


def test_mcp_env_flags_are_checked_and_secret_values_are_not_saved(tmp_path: Path) -> None:
    code, _, err = _cli(tmp_path, "--mcp-env", "GITHUB_TOKEN=abc")
    assert code == ExitCode.usage and "--mcp-env GITHUB_TOKEN" in err
    code, _, err = _cli(tmp_path, "--mcp-env", "=x")
    assert code == ExitCode.usage and "invalid" in err
    settings = settings_from_json({"mcp_env": ["A", "B=1"], "mcp_inherit_env": True}, "config")
    assert settings.mcp_env == ("A", "B=1") and settings.mcp_inherit_env is True
    assert settings.to_json()["mcp_env"] == ["A", "B=1"]
    with pytest.raises(InvalidCliConfig, match="at most 64"):
        settings_from_json({"mcp_env": [1]}, "config")


def test_run_help_names_the_environment_flags() -> None:
    out = io.StringIO()
    assert main(["run", "--help"], env={}, out=out, err=io.StringIO()) == ExitCode.ok
    text = " ".join(out.getvalue().split())
    assert "--mcp-env NAME[=VALUE]" in text and "--mcp-inherit-env" in text


# ----------------------------------------------------------------------------- nothing left behind


def _threads_named(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix) and t.is_alive()]


def test_mcp_stdio_close_stops_a_helper_holding_stdout_and_joins_the_reader(tmp_path: Path) -> None:
    pid_file = tmp_path / "helper.pid"
    options = mcp.StdioOptions(stderr=mcp.StderrMode.discard, shutdown_timeout_s=0.5, terminate_timeout_s=0.5)
    transport = mcp.StdioTransport([sys.executable, "-c", WRAPPER, str(pid_file)], options)
    helper = int(_wait_for(pid_file))
    name = f"zigai-mcp-stdio-read-{transport.pid}"
    started = time.monotonic()
    transport.close()
    assert time.monotonic() - started < 10
    assert _gone(helper), "the helper outlived close()"
    assert not _threads_named(name), "the reader thread outlived close()"


def test_acp_stdio_close_stops_a_helper_holding_stdout_and_joins_the_reader(tmp_path: Path) -> None:
    pid_file = tmp_path / "helper.pid"
    transport = AcpStdioTransport([sys.executable, "-c", WRAPPER, str(pid_file)],
                                  shutdown_timeout_s=0.5, terminate_timeout_s=0.5)
    helper = int(_wait_for(pid_file))
    transport.close()
    assert _gone(helper), "the helper outlived close()"
    assert not transport._reader.is_alive()


def test_stop_group_handles_a_child_reaped_elsewhere_and_kill_group_reaps() -> None:
    import subprocess

    from zigai.child_process import kill_group, spawn_options, stop_group

    quick = subprocess.Popen([sys.executable, "-c", ""], stdin=subprocess.PIPE, **spawn_options())
    os.waitpid(quick.pid, 0)  # someone else reaped it: the group is already empty
    stop_group(quick, shutdown_s=0.1, terminate_s=0.1)
    assert quick.returncode is not None
    stubborn = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], **spawn_options())
    kill_group(stubborn)
    assert stubborn.returncode == -9


def test_mcp_toolset_refuses_a_bad_env_item_before_starting_anything() -> None:
    from contextlib import ExitStack

    from zigai.cli.errors import CliUsageError
    from zigai.cli.mcp_stdio import mcp_toolset

    with ExitStack() as stack, pytest.raises(CliUsageError, match="--mcp-env"):
        mcp_toolset(["/nonexistent/never-started"], "label", stack, env_items=["=bad"])


def test_closing_an_acp_transport_twice_is_harmless() -> None:
    transport = AcpStdioTransport([sys.executable, "-c", "import sys; sys.stdin.read()"])
    transport.close()
    transport.close()
    assert transport._process.returncode is not None


def test_exit_status_reports_without_reaping() -> None:
    import signal
    import subprocess

    from zigai.child_process import exit_status, spawn_options, stop_group

    killed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], **spawn_options())
    assert exit_status(killed) is None
    os.kill(killed.pid, signal.SIGKILL)
    end = time.monotonic() + 10
    while exit_status(killed) is None and time.monotonic() < end:
        time.sleep(0.01)
    assert exit_status(killed) == -signal.SIGKILL
    assert _stopped(killed.pid) and killed.returncode is None  # a zombie, still reserving its id
    stop_group(killed, shutdown_s=0, terminate_s=0)
    assert killed.returncode == -signal.SIGKILL
