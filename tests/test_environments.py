"""Execution environments: the rooted handle refuses escapes; commands are bounded, redacted, audited."""

from __future__ import annotations

import os
import stat
import sys
import threading
import time
from pathlib import Path

import pytest

from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut
from zigai.environments import (
    AuditEvent,
    CommandOutputTooLarge,
    CommandRequest,
    CommandResult,
    CommandStartFailed,
    CommandTimedOut,
    DisposableWorkspace,
    EnvironmentClosed,
    ExecutionEnvironment,
    FileTooLarge,
    InvalidCommandRequest,
    InvalidPath,
    LocalEnvironment,
    NetworkAccess,
    NetworkIsolationUnavailable,
    PathOutsideRoot,
    RemoteSandbox,
    RootedDirectory,
    SandboxCapabilities,
    SpecialFileRefused,
    SymlinkRefused,
    check_request,
    redact_bytes,
    split_relative,
)
from zigai.environments import rooted as rooted_module

PY = sys.executable


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "sub" / "file.txt").write_text("inside")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("outside secret")
    return root


@pytest.fixture
def root(tree: Path):
    with RootedDirectory.open(tree) as handle:
        yield handle


def allowed(*argv: str, **options) -> CommandRequest:
    return CommandRequest(argv, network=NetworkAccess.allowed, **options)


# -- paths ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/etc/passwd", "/", "..", "../outside", "sub/../../outside", "sub/.."])
def test_absolute_and_dotdot_paths_are_refused_before_io(root: RootedDirectory, path: str) -> None:
    with pytest.raises(PathOutsideRoot):
        root.read_bytes(path)


@pytest.mark.parametrize("path", ["a//b", "a/", "./a", "a/./b", "a\\b", "a\x00b", 7])
def test_malformed_paths_are_invalid(root: RootedDirectory, path: object) -> None:
    with pytest.raises(InvalidPath):
        root.read_bytes(path)  # type: ignore[arg-type]


def test_root_itself_is_spelled_empty_or_dot() -> None:
    assert split_relative("") == ()
    assert split_relative(".") == ()
    assert split_relative("a/b") == ("a", "b")


def test_absolute_symlink_escape_is_refused(root: RootedDirectory, tree: Path) -> None:
    (tree / "abs").symlink_to(tree.parent / "outside")
    (tree / "abs_file").symlink_to(tree.parent / "outside" / "secret.txt")
    with pytest.raises(SymlinkRefused):
        root.read_bytes("abs/secret.txt")
    with pytest.raises(SymlinkRefused):
        root.read_bytes("abs_file")
    with pytest.raises(SymlinkRefused):
        root.list_dir("abs")
    with pytest.raises(SymlinkRefused):
        root.write_bytes("abs_file", b"overwrite")
    assert (tree.parent / "outside" / "secret.txt").read_text() == "outside secret"


def test_relative_symlink_escape_is_refused_even_when_it_stays_inside(root: RootedDirectory, tree: Path) -> None:
    (tree / "sub" / "up").symlink_to("../../outside")
    (tree / "sub" / "sibling").symlink_to("file.txt")
    with pytest.raises(SymlinkRefused):
        root.read_bytes("sub/up/secret.txt")
    with pytest.raises(SymlinkRefused):
        root.read_bytes("sub/sibling")
    with pytest.raises(SymlinkRefused):
        root.open_dir("sub/up")
    with pytest.raises(SymlinkRefused):
        root.mkdir("sub/up/new", parents=True)


def test_a_directory_swapped_for_a_symlink_between_check_and_open_is_refused(
    root: RootedDirectory, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_lstat = rooted_module._lstat
    swapped = []

    def check_then_swap(name: str, dir_fd: int):
        result = real_lstat(name, dir_fd)  # the check sees the real directory ...
        if name == "sub" and not swapped:
            os.rename(tree / "sub", tree / "sub-moved")  # ... then the attacker swaps it
            (tree / "sub").symlink_to(tree.parent / "outside")
            (tree.parent / "outside" / "file.txt").write_text("planted outside")
            swapped.append(True)
        return result

    monkeypatch.setattr(rooted_module, "_lstat", check_then_swap)
    with pytest.raises(SymlinkRefused):
        root.read_bytes("sub/file.txt")
    assert swapped  # the race really happened between the check and the open


def test_a_file_swapped_for_a_symlink_between_check_and_open_is_refused(
    root: RootedDirectory, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_lstat = rooted_module._lstat

    def check_then_swap(name: str, dir_fd: int):
        result = real_lstat(name, dir_fd)
        if name == "file.txt":
            os.unlink(tree / "sub" / "file.txt")
            (tree / "sub" / "file.txt").symlink_to(tree.parent / "outside" / "secret.txt")
        return result

    monkeypatch.setattr(rooted_module, "_lstat", check_then_swap)
    with pytest.raises(SymlinkRefused):
        root.read_bytes("sub/file.txt")


def test_a_fifo_is_refused_without_blocking(root: RootedDirectory, tree: Path) -> None:
    os.mkfifo(tree / "pipe")
    for call in (lambda: root.read_bytes("pipe"), lambda: root.write_bytes("pipe", b"x"),
                 lambda: root.open_file("pipe", "ab")):
        with pytest.raises(SpecialFileRefused) as info:
            call()
        assert info.value.kind == "fifo"


def test_a_fifo_planted_after_the_check_is_caught_by_fstat(
    root: RootedDirectory, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_lstat = rooted_module._lstat
    planted = []

    def check_then_plant(name: str, dir_fd: int):
        result = real_lstat(name, dir_fd)
        if name == "later" and not planted:
            os.mkfifo(tree / "later")
            planted.append(True)
        return result

    monkeypatch.setattr(rooted_module, "_lstat", check_then_plant)
    with pytest.raises(SpecialFileRefused):
        root.read_bytes("later")  # O_NONBLOCK: opening the FIFO does not wait for a writer


def test_device_files_are_refused(root: RootedDirectory, tree: Path) -> None:
    try:
        os.mknod(tree / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root (CAP_MKNOD); run the suite as root to cover it")
    with pytest.raises(SpecialFileRefused) as info:
        root.read_bytes("null")
    assert info.value.kind == "char_device"
    with pytest.raises(SpecialFileRefused):
        root.write_bytes("null", b"x")
    assert root.stat("null").kind == "char_device"


def test_block_devices_are_refused(root: RootedDirectory, tree: Path) -> None:
    try:
        os.mknod(tree / "blk", 0o600 | stat.S_IFBLK, os.makedev(7, 0))
    except PermissionError:
        pytest.skip("creating a device node needs root (CAP_MKNOD); run the suite as root to cover it")
    with pytest.raises(SpecialFileRefused) as info:
        root.read_bytes("blk")
    assert info.value.kind == "block_device"


def test_a_directory_planted_after_the_check_is_not_opened_as_a_file(
    root: RootedDirectory, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_lstat = rooted_module._lstat

    def check_then_plant(name: str, dir_fd: int):
        result = real_lstat(name, dir_fd)
        if name == "planted" and not (tree / "planted").exists():
            (tree / "planted").mkdir()
        return result

    monkeypatch.setattr(rooted_module, "_lstat", check_then_plant)
    with pytest.raises(IsADirectoryError):
        root.read_bytes("planted")


def test_an_entry_that_vanishes_again_keeps_its_plain_os_error(
    root: RootedDirectory, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    (tree / "ln").symlink_to("sub/file.txt")
    monkeypatch.setattr(rooted_module, "_lstat", lambda name, dir_fd: None)
    with pytest.raises(OSError) as info:
        root.read_bytes("ln")  # the no-follow open still refuses the link: ELOOP
    assert info.value.errno == errno.ELOOP and info.value.filename == "ln"
    with pytest.raises(FileExistsError):
        root.mkdir("sub", exist_ok=True)


def test_a_socket_is_refused(root: RootedDirectory, tree: Path) -> None:
    import socket

    with socket.socket(socket.AF_UNIX) as server:
        os.chdir(tree)
        try:
            server.bind("sock")
        finally:
            os.chdir("/")
        with pytest.raises(SpecialFileRefused):
            root.read_bytes("sock")


def test_reads_are_bounded_at_the_exact_limit(root: RootedDirectory) -> None:
    root.write_bytes("ten", b"0123456789")
    assert root.read_bytes("ten", max_bytes=10) == b"0123456789"
    with pytest.raises(FileTooLarge) as info:
        root.read_bytes("ten", max_bytes=9)
    assert info.value.limit == 9
    with pytest.raises(ValueError):
        root.read_bytes("ten", max_bytes=-1)


def test_file_and_directory_operations_stay_beneath_the_root(root: RootedDirectory, tree: Path) -> None:
    root.mkdir("a/b/c", parents=True)
    root.mkdir("a/b/c", exist_ok=True)
    root.mkdir("", exist_ok=True)
    with pytest.raises(FileExistsError):
        root.mkdir("a")
    with pytest.raises(FileExistsError):
        root.mkdir("")
    root.write_text("a/b/c/x.txt", "one")
    with pytest.raises(FileExistsError):
        root.write_text("a/b/c/x.txt", "two", exclusive=True)
    with root.open_file("a/b/c/x.txt", "ab") as handle:
        handle.write(b"+more")
    assert root.read_text("a/b/c/x.txt") == "one+more"
    assert (tree / "a" / "b" / "c" / "x.txt").read_text() == "one+more"
    root.rename("a/b/c/x.txt", "a/y.txt")
    assert root.list_dir("a") == (("b", "directory"), ("y.txt", "file"))
    info = root.stat("a/y.txt")
    assert (info.kind, info.size) == ("file", 8)
    assert root.stat("").kind == "directory"
    assert root.exists("a/y.txt") and not root.exists("a/missing")
    with root.open_dir("a") as child:
        assert child.read_text("y.txt") == "one+more"
        with pytest.raises(PathOutsideRoot):
            child.read_text("../sub/file.txt")
    with pytest.raises(IsADirectoryError):
        root.read_bytes("a")
    with pytest.raises(FileNotFoundError):
        root.read_bytes("nope/x")
    with pytest.raises(NotADirectoryError):
        root.read_bytes("a/y.txt/x")
    with pytest.raises(InvalidPath):
        root.remove("")
    with pytest.raises(ValueError):
        root.open_file("a/y.txt", "w")
    root.remove("a/y.txt")
    root.remove_dir("a/b/c")
    root.remove_tree("a")
    assert not (tree / "a").exists()
    with pytest.raises(FileNotFoundError):
        root.remove_tree("a")
    with pytest.raises(NotADirectoryError):
        root.remove_tree("sub/file.txt")


def test_mkdir_over_a_file_or_link_is_refused(root: RootedDirectory, tree: Path) -> None:
    with pytest.raises(FileExistsError):
        root.mkdir("sub/file.txt", exist_ok=True)
    (tree / "ln").symlink_to(tree.parent / "outside")
    with pytest.raises(SymlinkRefused):
        root.mkdir("ln", exist_ok=True)
    with pytest.raises(SymlinkRefused):
        root.remove_tree("ln")
    assert (tree.parent / "outside" / "secret.txt").exists()


def test_remove_tree_never_follows_links_inside_the_tree(root: RootedDirectory, tree: Path) -> None:
    (tree / "sub" / "deep" / "escape").symlink_to(tree.parent / "outside")
    root.remove_tree("sub")
    assert (tree.parent / "outside" / "secret.txt").read_text() == "outside secret"


def test_a_closed_root_refuses_every_use(tree: Path) -> None:
    handle = RootedDirectory.open(tree)
    handle.close()
    handle.close()
    with pytest.raises(EnvironmentClosed):
        handle.read_bytes("sub/file.txt")
    with pytest.raises(EnvironmentClosed):
        handle.fileno()
    assert "closed=True" in repr(handle)


# -- commands -------------------------------------------------------------------------------------


def test_a_command_runs_in_its_rooted_cwd_with_only_the_given_environment(root: RootedDirectory, monkeypatch) -> None:
    monkeypatch.setenv("ZIGAI_AMBIENT", "should-not-leak")
    env = LocalEnvironment(root)
    script = "import os; print(os.listdir('.')); print(sorted(k for k in os.environ if k.startswith('ZIG')))"
    with env.run(allowed(PY, "-c", script, cwd="sub", env={"ZIG_PLAIN": "1"})) as result:
        assert result.exit_code == 0 and result.ok
        lines = result.stdout_text().splitlines()
        assert sorted(eval(lines[0])) == ["deep", "file.txt"]
        assert eval(lines[1]) == ["ZIG_PLAIN"]
        assert result.duration_s >= 0
    with pytest.raises(EnvironmentClosed):
        result.stdout  # noqa: B018


def test_stdin_and_exit_codes_and_stderr(root: RootedDirectory) -> None:
    env = LocalEnvironment(root)
    script = "import sys; data = sys.stdin.buffer.read(); sys.stderr.write(str(len(data))); sys.exit(3)"
    payload = b"x" * 200_000  # larger than a pipe buffer: written while output is read
    with env.run(allowed(PY, "-c", script, stdin=payload)) as result:
        assert result.exit_code == 3 and not result.ok
        assert result.stderr_text() == "200000"
        assert result.stdout == b""


def test_stdin_to_a_command_that_does_not_read_it(root: RootedDirectory) -> None:
    env = LocalEnvironment(root)
    script = "import os, time; os.close(0); time.sleep(0.3)"  # the pipe breaks while input is pending
    with env.run(allowed(PY, "-c", script, stdin=b"y" * 300_000)) as result:
        assert result.exit_code == 0


def test_a_signal_death_is_a_negative_exit_code(root: RootedDirectory) -> None:
    env = LocalEnvironment(root)
    with env.run(allowed(PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)")) as result:
        assert result.exit_code == -15


def test_a_denied_network_request_is_refused_by_the_local_backend(root: RootedDirectory) -> None:
    events: list[AuditEvent] = []
    env = LocalEnvironment(root, audit=events.append)
    assert env.capabilities == SandboxCapabilities(network_isolation=False, disposal=False)
    with pytest.raises(NetworkIsolationUnavailable):
        env.run(CommandRequest((PY, "-c", "print(1)")))
    assert [e.kind for e in events] == ["command_refused"]
    assert events[0].outcome == "NetworkIsolationUnavailable"


def test_output_exactly_at_the_bound_passes_and_one_byte_more_is_cut(root: RootedDirectory) -> None:
    env = LocalEnvironment(root)
    write = "import sys; sys.stdout.write('a' * {})"
    with env.run(allowed(PY, "-c", write.format(1000), max_output_bytes=1000)) as result:
        assert result.stdout == b"a" * 1000
    with pytest.raises(CommandOutputTooLarge) as info:
        env.run(allowed(PY, "-c", write.format(1001), max_output_bytes=1000))
    assert (info.value.stream, info.value.limit) == ("stdout", 1000)
    with pytest.raises(CommandOutputTooLarge) as info:
        env.run(allowed(PY, "-c", "import sys; sys.stderr.write('e' * 5000)", max_output_bytes=10))
    assert info.value.stream == "stderr"


def test_an_endless_writer_is_cut_promptly(root: RootedDirectory) -> None:
    env = LocalEnvironment(root)
    started = time.monotonic()
    with pytest.raises(CommandOutputTooLarge):
        env.run(allowed(PY, "-c", "import sys\nwhile True: sys.stdout.write('z' * 65536)", max_output_bytes=100_000))
    assert time.monotonic() - started < 10


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _dies_soon(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not _alive(pid)


def test_a_timeout_kills_and_reaps_the_whole_process_group(root: RootedDirectory) -> None:
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "open('grandchild.pid', 'w').write(str(child.pid))\n"
        "time.sleep(60)\n"
    )
    events: list[AuditEvent] = []
    env = LocalEnvironment(root).with_audit(events.append)
    started = time.monotonic()
    with pytest.raises(CommandTimedOut) as info:
        env.run(allowed(PY, "-c", script, timeout_ms=1500))
    assert info.value.timeout_ms == 1500
    assert time.monotonic() - started < 10
    assert events[-1].kind == "command_failed" and events[-1].outcome == "timed_out"
    assert _dies_soon(int(root.read_text("grandchild.pid")))


def test_a_grandchild_left_behind_is_killed_when_the_command_exits(root: RootedDirectory) -> None:
    env = LocalEnvironment(root)
    script = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(child.pid)\n"
    )
    started = time.monotonic()
    with env.run(allowed(PY, "-c", script, timeout_ms=20_000)) as result:
        pid = int(result.stdout_text())
    assert time.monotonic() - started < 10
    assert _dies_soon(pid)


def test_a_grandchild_holding_the_pipe_does_not_hang_the_call(root: RootedDirectory) -> None:
    env = LocalEnvironment(root)
    script = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(child.pid, flush=True)\n"
    )
    started = time.monotonic()
    with env.run(allowed(PY, "-c", script)) as result:
        pid = int(result.stdout_text())
    assert time.monotonic() - started < 10
    assert _dies_soon(pid)


def test_cancellation_kills_the_command(root: RootedDirectory) -> None:
    token = CancellationToken()
    env = LocalEnvironment(root)
    timer = threading.Timer(0.3, token.cancel, args=("user stop",))
    timer.start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        env.run(allowed(PY, "-c", "import time; time.sleep(60)", control=RunControl(token=token)))
    assert time.monotonic() - started < 10
    timer.cancel()
    with pytest.raises(Cancelled):  # an already-cancelled control never starts a process
        env.run(allowed(PY, "-c", "print(1)", control=RunControl(token=token)))


def test_the_run_deadline_kills_the_command(root: RootedDirectory) -> None:
    env = LocalEnvironment(root)
    with pytest.raises(RunTimedOut):
        env.run(allowed(PY, "-c", "import time; time.sleep(60)", control=RunControl.start(300)))


def test_a_secret_env_value_never_reaches_output_or_audit(root: RootedDirectory) -> None:
    secret = "hunter2-very-secret"
    events: list[AuditEvent] = []
    env = LocalEnvironment(root, audit=events.append)
    script = ("import os, sys; v = os.environ['API_TOKEN']; print(v); print('x' + v + 'y');"
              " sys.stderr.write(v)")
    request = allowed(PY, "-c", script, f"--token={secret}", secret_env={"API_TOKEN": secret},
                      env={"PLAIN": "visible"})
    assert secret not in repr(request)
    with env.run(request) as result:
        assert secret.encode() not in result.stdout + result.stderr
        assert result.stdout_text().splitlines() == ["[REDACTED]", "x[REDACTED]y"]
        assert result.stderr_text() == "[REDACTED]"
    assert [e.kind for e in events] == ["command_started", "command_finished"]
    for event in events:
        assert secret not in repr(event)
        assert event.secret_env_names == ("API_TOKEN",)
        assert event.env_names == ("PLAIN",)
        assert event.argv[-1] == "--token=[REDACTED]"
        assert event.network is NetworkAccess.allowed
    assert events[-1].exit_code == 0 and events[-1].stdout_bytes > 0


def test_a_secret_is_redacted_even_when_it_crosses_read_chunks(root: RootedDirectory) -> None:
    secret = "S" * 10 + "ECRET"
    env = LocalEnvironment(root)
    script = "import os, sys; sys.stdout.write('p' * 65531 + os.environ['K'])"
    with env.run(allowed(PY, "-c", script, secret_env={"K": secret})) as result:
        assert result.stdout.endswith(b"[REDACTED]") and secret.encode() not in result.stdout


def test_redact_bytes_replaces_longer_secrets_first() -> None:
    assert redact_bytes(b"abc-abcdef-", ("abc", "abcdef", "")) == b"[REDACTED]-[REDACTED]-"


def test_a_missing_executable_is_a_named_start_failure(root: RootedDirectory) -> None:
    events: list[AuditEvent] = []
    env = LocalEnvironment(root, audit=events.append)
    with pytest.raises(CommandStartFailed):
        env.run(allowed("zigai-no-such-program-here"))
    assert [e.outcome for e in events] == ["", "start_failed"]


def test_a_cwd_through_a_symlink_is_refused_and_audited(root: RootedDirectory, tree: Path) -> None:
    (tree / "ln").symlink_to(tree.parent / "outside")
    events: list[AuditEvent] = []
    env = LocalEnvironment(root, audit=events.append)
    with pytest.raises(SymlinkRefused):
        env.run(allowed(PY, "-c", "print(1)", cwd="ln"))
    assert events[0].kind == "command_refused" and events[0].outcome == "SymlinkRefused"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"argv": ()},
        {"argv": "ls -l"},
        {"argv": ("",)},
        {"argv": ("a\x00",)},
        {"argv": ("ls",), "cwd": "../x"},
        {"argv": ("ls",), "env": {"1BAD": "x"}},
        {"argv": ("ls",), "env": {"OK": 1}},
        {"argv": ("ls",), "env": []},
        {"argv": ("ls",), "env": {"A": "1"}, "secret_env": {"A": "2"}},
        {"argv": ("ls",), "inherit_env": ("BAD-NAME",)},
        {"argv": ("ls",), "network": "sometimes"},
        {"argv": ("ls",), "stdin": "text"},
        {"argv": ("ls",), "stdin": b"x" * (1024 * 1024 + 1)},
        {"argv": ("ls",), "timeout_ms": -1},
        {"argv": ("ls",), "max_output_bytes": True},
        {"argv": ("ls",), "control": object()},
    ],
)
def test_malformed_requests_are_refused_at_construction(kwargs: dict) -> None:
    with pytest.raises(InvalidCommandRequest):
        CommandRequest(**kwargs)


def test_environment_construction_and_closing(root: RootedDirectory) -> None:
    with pytest.raises(TypeError):
        LocalEnvironment("/tmp")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        LocalEnvironment(root, audit="log")  # type: ignore[arg-type]
    env = LocalEnvironment(root)
    with pytest.raises(TypeError):
        env.run(["ls"])  # type: ignore[arg-type]
    assert isinstance(env, ExecutionEnvironment) and env.backend_name == "local"
    assert env.files is root
    env.close()
    assert not root.closed  # borrowed
    with pytest.raises(EnvironmentClosed):
        env.run(allowed("true"))
    assert "closed=True" in repr(env)


def test_an_owning_environment_closes_its_root(tree: Path) -> None:
    handle = RootedDirectory.open(tree)
    LocalEnvironment(handle, owns_root=True).close()
    assert handle.closed


def test_command_result_repr_and_closing() -> None:
    result = CommandResult(exit_code=0, stdout=b"ab", stderr=b"", duration_s=0.1)
    assert repr(result) == "CommandResult(exit_code=0, stdout=2 bytes, stderr=0 bytes)"
    result.close()
    assert repr(result) == "CommandResult(closed)"


# -- workspaces and sandboxes ----------------------------------------------------------------------


def test_a_disposable_workspace_closes_its_handle_before_deleting_its_tree(tmp_path: Path, monkeypatch) -> None:
    import shutil

    from zigai.environments import workspace as workspace_module

    order: list[str] = []
    workspace = DisposableWorkspace(parent=tmp_path)
    handle = workspace.files
    real_rmtree = shutil.rmtree

    def recording_rmtree(path, *args, **kwargs):
        order.append(f"rmtree handle_closed={handle.closed}")
        return real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(workspace_module.shutil, "rmtree", recording_rmtree)
    workspace.files.mkdir("nested/deeper", parents=True)
    workspace.files.write_text("nested/deeper/f.txt", "x")
    (Path(tmp_path) / "victim").mkdir()
    os.symlink(tmp_path / "victim", Path(next(tmp_path.glob("zigai-workspace-*"))) / "link")
    assert workspace.capabilities == SandboxCapabilities(network_isolation=False, disposal=True)
    with workspace.run(allowed("sh", "-c", "ls nested")) as result:
        assert result.stdout_text() == "deeper\n"
    workspace.close()
    workspace.close()
    assert order == ["rmtree handle_closed=True"]
    assert list(tmp_path.glob("zigai-workspace-*")) == []
    assert (tmp_path / "victim").is_dir()
    with pytest.raises(EnvironmentClosed):
        workspace.files  # noqa: B018
    assert "closed=True" in repr(workspace)


class _FakeRemote:
    """A remote sandbox adapter shape: it advertises what it enforces."""

    def __init__(self, isolated: bool) -> None:
        self._caps = SandboxCapabilities(network_isolation=isolated, disposal=True)
        self.disposed = False

    @property
    def backend_name(self) -> str:
        return "fake-remote"

    @property
    def capabilities(self) -> SandboxCapabilities:
        return self._caps

    def run(self, request: CommandRequest) -> CommandResult:
        check_request(self._caps, request, self.backend_name)
        return CommandResult(exit_code=0, stdout=b"remote", stderr=b"", duration_s=0.0)

    def dispose(self) -> None:
        self.disposed = True

    def close(self) -> None:
        self.dispose()


def test_remote_sandboxes_advertise_enforcement_and_check_requests_the_same_way() -> None:
    isolated, open_net = _FakeRemote(True), _FakeRemote(False)
    assert isinstance(isolated, RemoteSandbox)
    denied = CommandRequest(("ls",))
    with isolated.run(denied) as result:
        assert result.stdout == b"remote"
    with pytest.raises(NetworkIsolationUnavailable) as info:
        open_net.run(denied)
    assert "fake-remote" in str(info.value)
    open_net.run(CommandRequest(("ls",), network=NetworkAccess.allowed)).close()
