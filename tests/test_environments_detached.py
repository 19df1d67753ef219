"""Detached descendants cannot escape a local command (issue 32, defect 8), with real processes.

A child that calls ``setsid()`` leaves the command's process group, and a double fork leaves
its parent chain: neither may survive ``LocalEnvironment.run`` or a ``DisposableWorkspace``,
and a command that printed and exited at once is reported as exited with its output even
while such a child still holds the pipes.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from zigai.environments import (
    CommandRequest,
    CommandStartFailed,
    CommandTimedOut,
    DisposableWorkspace,
    LocalEnvironment,
    NetworkAccess,
    RootedDirectory,
)

PY = sys.executable

# The detached child sleeps for a minute; it inherits stdout and stderr unless told otherwise.
DETACHED = (
    "import subprocess, sys\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
    "print('child', child.pid, flush=True)\n"
)

DOUBLE_FORK = (
    "import os, sys, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        open('daemon.pid', 'w').write(str(os.getpid()))\n"
    "        time.sleep(60)\n"
    "    os._exit(0)\n"
    "os.wait()\n"
    "while not os.path.exists('daemon.pid') or not open('daemon.pid').read():\n"
    "    time.sleep(0.01)\n"
    "print('parent done', flush=True)\n"
)


def command(*argv: str, **options: object) -> CommandRequest:
    return CommandRequest(argv, network=NetworkAccess.allowed, **options)  # type: ignore[arg-type]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def gone_soon(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


@pytest.fixture
def root(tmp_path: Path) -> RootedDirectory:
    with RootedDirectory.open(tmp_path) as handle:
        yield handle


def test_a_command_that_exited_is_reported_with_its_output_though_a_setsid_child_holds_the_pipe(
        root: RootedDirectory) -> None:
    env = LocalEnvironment(root)
    started = time.monotonic()
    with env.run(command(PY, "-c", DETACHED + "sys.stderr.write('bye')\nsys.exit(3)", timeout_ms=20_000)) as result:
        assert result.exit_code == 3
        words = result.stdout_text().split()
        assert words[0] == "child" and result.stderr == b"bye"
        pid = int(words[1])
    assert time.monotonic() - started < 15  # not the 20 s timeout: the pipe holder was killed
    assert gone_soon(pid)


def test_a_double_forked_daemon_is_killed_when_the_command_exits(root: RootedDirectory) -> None:
    env = LocalEnvironment(root)
    with env.run(command(PY, "-c", DOUBLE_FORK, timeout_ms=20_000)) as result:
        assert (result.exit_code, result.stdout_text()) == (0, "parent done\n")
    assert gone_soon(int(root.read_text("daemon.pid")))


def test_a_timeout_kills_a_setsid_child_too(root: RootedDirectory) -> None:
    env = LocalEnvironment(root)
    script = DOUBLE_FORK.replace("print('parent done', flush=True)\n", "time.sleep(60)\n")
    with pytest.raises(CommandTimedOut):  # long enough for three interpreters to start under load
        env.run(command(PY, "-c", script, timeout_ms=8000))
    assert gone_soon(int(root.read_text("daemon.pid")))


def test_a_disposable_workspace_leaves_no_detached_process(tmp_path: Path) -> None:
    with DisposableWorkspace(parent=tmp_path) as workspace:
        with workspace.run(command(PY, "-c", DOUBLE_FORK, timeout_ms=20_000)) as result:
            assert result.exit_code == 0
        pid = int(workspace.files.read_text("daemon.pid"))
    assert gone_soon(pid)


def test_the_command_keeps_its_own_environment_and_start_errors(root: RootedDirectory) -> None:
    env = LocalEnvironment(root)
    script = "import os; print(sorted(k for k in os.environ if k != 'LC_CTYPE'), os.getsid(0) == os.getpid())"
    with env.run(command(PY, "-c", script, env={"ONLY": "1"}, inherit_env=())) as result:
        assert result.stdout_text() == "['ONLY'] True\n"
    with pytest.raises(CommandStartFailed, match="No such file or directory"):
        env.run(command("zigai-no-such-program-here"))
    with pytest.raises(CommandStartFailed, match="Permission denied"):
        root.write_text("script.sh", "echo hi\n")
        env.run(command("./script.sh"))


def test_an_orphan_that_ends_first_is_reaped_by_the_supervisor_not_left_a_zombie(root: RootedDirectory) -> None:
    script = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    if os.fork() == 0:\n"
        "        open('orphan.pid', 'w').write(str(os.getpid()))\n"
        "        time.sleep(0.2)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "while not os.path.exists('orphan.pid') or not open('orphan.pid').read():\n"
        "    time.sleep(0.01)\n"
        "pid = open('orphan.pid').read()\n"
        "for _ in range(500):\n"
        "    if not os.path.exists(f'/proc/{pid}'):\n"
        "        break\n"
        "    time.sleep(0.01)\n"
        "print('reaped' if not os.path.exists(f'/proc/{pid}') else 'left')\n"
    )
    with LocalEnvironment(root).run(command(PY, "-c", script, timeout_ms=20_000)) as result:
        assert result.stdout_text() == "reaped\n"


def test_a_killed_supervisor_still_ends_the_command(root: RootedDirectory) -> None:
    import os
    import signal
    import threading

    script = ("import os, time\nopen('supervisor.pid', 'w').write(str(os.getppid()))\n"
              "print('started', flush=True)\ntime.sleep(60)\n")

    def kill_supervisor() -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                text = root.read_text("supervisor.pid")
            except Exception:  # noqa: BLE001 - not written yet
                text = ""
            if text:
                os.kill(int(text), signal.SIGKILL)
                return
            time.sleep(0.01)

    killer = threading.Thread(target=kill_supervisor)
    killer.start()
    started = time.monotonic()
    with LocalEnvironment(root).run(command(PY, "-c", script, timeout_ms=30_000)) as result:
        assert result.exit_code == -signal.SIGKILL and result.stdout_text() == "started\n"
    killer.join()
    assert time.monotonic() - started < 20


def test_the_command_gets_default_signal_dispositions_back(root: RootedDirectory) -> None:
    # Python ignores SIGPIPE; a command must not inherit that (``yes | head`` would then fail)
    env = LocalEnvironment(root)
    with env.run(command("sh", "-c", "yes | head -n 1")) as result:
        assert (result.exit_code, result.stdout_text(), result.stderr) == (0, "y\n", b"")
    with env.run(command("grep", "SigIgn", "/proc/self/status")) as result:
        ignored = int(result.stdout_text().split()[1], 16)
    assert not ignored & (1 << (13 - 1)) and not ignored & (1 << (25 - 1))  # SIGPIPE, SIGXFSZ


def test_the_program_is_looked_up_on_the_commands_own_path(root: RootedDirectory, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin-only-here"
    bin_dir.mkdir()
    (bin_dir / "zigai-hello").write_text("#!/bin/sh\necho hello from $0\n")
    (bin_dir / "zigai-hello").chmod(0o755)
    env = LocalEnvironment(root)
    with env.run(command("zigai-hello", env={"PATH": str(bin_dir)}, inherit_env=())) as result:
        assert result.stdout_text() == f"hello from {bin_dir}/zigai-hello\n"
    with pytest.raises(CommandStartFailed):
        env.run(command("zigai-hello"))  # not on the host's PATH
