"""``LocalEnvironment``: run commands as local processes inside a :class:`RootedDirectory`.

Job: turn a :class:`CommandRequest` into one child process group whose working directory is
reached through the rooted handle, collect its output within bounds, redact exact secret values,
and report every start and end to an audit sink.

Invariants:

* a request that denies the network is refused (:class:`NetworkIsolationUnavailable`): a
  plain local process cannot be kept off the network, so pretending would be a lie;
* the working directory is opened with the no-follow walk and entered through
  ``/proc/self/fd/N`` of that descriptor, so no host path derived from the request is used;
* the child gets only ``env``, ``secret_env`` and the ``inherit_env`` names from the host;
* every command runs in its own session under a small supervisor (:mod:`._reaper`, run by this
  interpreter) that is a Linux child subreaper: a descendant that calls ``setsid()`` or
  double-forks is re-parented to the supervisor, not to init.  When the command ends --
  normally, by timeout, by cancellation, by the run deadline or by exceeding its output bound --
  every descendant is sent ``SIGKILL`` and reaped before this call returns, so no stray process
  keeps running or keeps a pipe open;
* a command that exited is reported as exited, with the output it wrote, even when a detached
  descendant still held the pipes (the descendant is killed, the pipes then end);
* output is read in bounded chunks: exactly ``max_output_bytes`` per stream passes, one more
  byte kills the group and raises :class:`CommandOutputTooLarge`;
* exact secret values (as UTF-8) are replaced with ``[REDACTED]`` in stdout and stderr before the
  :class:`CommandResult` is built; audit events carry secret *names* only.

Python honesty: the reader polls the run's cancellation token at least every 50 ms, so
cancellation latency is bounded by that slice.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from zigai._owner import Owner
from zigai.control import Cancelled, RunTimedOut
from zigai.environments.command import AuditEvent, AuditSink, CommandRequest, CommandResult
from zigai.environments.errors import (
    CommandOutputTooLarge,
    CommandStartFailed,
    CommandTimedOut,
    EnvironmentClosed,
    ExecutionEnvironmentError,
)
from zigai.environments.rooted import RootedDirectory, split_relative
from zigai.environments.sandbox import SandboxCapabilities, check_request
from zigai.security import REDACTED, redact_text

__all__ = ["LocalEnvironment", "redact_bytes"]

_POLL_SLICE_S = 0.05
_READ_CHUNK = 64 * 1024
_PROC_FD = "/proc/self/fd"
_REAPER = str(Path(__file__).with_name("_reaper.py"))
_STOP_WAIT_S = 10.0


def redact_bytes(data: bytes, secrets: tuple[str, ...]) -> bytes:
    """Replace every exact UTF-8 occurrence of each secret (longest first) with ``[REDACTED]``."""
    marker = REDACTED.encode()
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        data = data.replace(secret.encode("utf-8"), marker)
    return data


class _Outcome(Exception):
    """Internal: carries the audit outcome name with the error that ends a run."""


class LocalEnvironment(Owner):
    """Local processes rooted in one directory handle (see module docstring).

    The environment borrows ``root`` unless ``owns_root`` is true, in which case
    :meth:`close` closes it.
    """

    __slots__ = ("_root", "_owns_root", "_audit", "_capabilities")

    _closed_error = EnvironmentClosed

    def __init__(
        self,
        root: RootedDirectory,
        *,
        audit: AuditSink | None = None,
        owns_root: bool = False,
        disposal: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(root, RootedDirectory):
            raise TypeError("LocalEnvironment needs a RootedDirectory")
        if audit is not None and not callable(audit):
            raise TypeError("audit must be callable")
        self._root = root
        self._owns_root = owns_root
        self._audit: Callable[[AuditEvent], None] | None = audit
        self._capabilities = SandboxCapabilities(network_isolation=False, disposal=disposal)

    def _release(self) -> None:
        if self._owns_root:
            self._root.close()

    @property
    def backend_name(self) -> str:
        return "local"

    @property
    def capabilities(self) -> SandboxCapabilities:
        return self._capabilities

    @property
    def files(self) -> RootedDirectory:
        """The rooted directory commands run in (borrowed)."""
        self._check()
        return self._root

    # -- audit --------------------------------------------------------------------------------

    def _event(self, request: CommandRequest, kind: str, **facts: object) -> None:
        if self._audit is None:
            return
        secrets = request.secret_values
        self._audit(AuditEvent(
            kind=kind,  # type: ignore[arg-type]
            argv=tuple(redact_text(arg, secrets) for arg in request.argv),
            cwd=request.cwd,
            env_names=tuple(sorted(request.env)),
            secret_env_names=tuple(sorted(request.secret_env)),
            inherited_env_names=tuple(n for n in request.inherit_env if n in os.environ),
            network=request.network,
            backend=self.backend_name,
            **facts,  # type: ignore[arg-type]
        ))

    # -- running ------------------------------------------------------------------------------

    def run(self, request: CommandRequest) -> CommandResult:
        """Run one command to its end and return its owned, bounded, redacted output."""
        self._check()
        if not isinstance(request, CommandRequest):
            raise TypeError("LocalEnvironment.run needs a CommandRequest")
        try:
            check_request(self._capabilities, request, self.backend_name)
            request.control.check()
            cwd_fd = self._root._walk(split_relative(request.cwd))
        except (ExecutionEnvironmentError, Cancelled, RunTimedOut, OSError) as exc:
            self._event(request, "command_refused", outcome=type(exc).__name__)
            raise
        started = time.monotonic()
        self._event(request, "command_started")
        try:
            process, status_fd, command_pid = self._spawn(request, cwd_fd)
        except CommandStartFailed:
            self._event(request, "command_failed", outcome="start_failed")
            raise
        finally:
            os.close(cwd_fd)
        counts = [0, 0]
        try:
            exit_code, stdout, stderr = self._collect(process, (status_fd, command_pid), request, started, counts)
        except _Outcome as wrapped:
            error = wrapped.args[1]
            self._event(request, "command_failed", outcome=wrapped.args[0], stdout_bytes=counts[0],
                        stderr_bytes=counts[1], duration_s=time.monotonic() - started)
            raise error from None
        duration = time.monotonic() - started
        secrets = request.secret_values
        result = CommandResult(exit_code=exit_code, stdout=redact_bytes(stdout, secrets),
                               stderr=redact_bytes(stderr, secrets), duration_s=duration)
        self._event(request, "command_finished", outcome="exit", exit_code=exit_code,
                    stdout_bytes=len(stdout), stderr_bytes=len(stderr), duration_s=duration)
        return result

    def _environment(self, request: CommandRequest) -> dict[str, str]:
        env = {name: os.environ[name] for name in request.inherit_env if name in os.environ}
        env.update(request.env)
        env.update(request.secret_env)
        return env

    def _spawn(self, request: CommandRequest, cwd_fd: int) -> tuple[subprocess.Popen[bytes], int, int]:
        if not os.path.isdir(_PROC_FD):  # pragma: no cover - every Linux zigai supports has /proc
            raise CommandStartFailed("the local backend needs /proc/self/fd to enter the rooted cwd")
        spec_read, spec_write = os.pipe()
        status_read, status_write = os.pipe()
        try:
            # The cwd descriptor is close-on-exec: still open in the forked child when it changes
            # directory, closed before the supervisor runs.  The supervisor keeps this process's
            # environment; the command gets only its own (sent with the argv on the spec pipe).
            process = subprocess.Popen(
                [sys.executable, "-P", _REAPER, str(spec_read), str(status_write)],
                stdin=subprocess.PIPE if request.stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=f"{_PROC_FD}/{cwd_fd}",
                start_new_session=True,
                close_fds=True,
                pass_fds=(spec_read, status_write),
            )
        except OSError as exc:  # pragma: no cover - the interpreter itself cannot start
            os.close(status_read)
            raise CommandStartFailed(f"could not start the command supervisor: {exc.strerror or exc}") from None
        finally:
            os.close(spec_read)
            os.close(status_write)
        try:
            with os.fdopen(spec_write, "wb") as spec:
                spec.write(_spec(request.argv, self._environment(request)))
            line = _read_line(status_read)
        except BaseException:  # pragma: no cover - an interrupt while the supervisor starts
            _stop(process)
            os.close(status_read)
            raise
        if not line.startswith("started "):
            _stop(process)
            os.close(status_read)
            errno = int(line.split()[1]) if line.startswith("failed ") else 0
            reason = os.strerror(errno) if errno else "the supervisor ended before starting it"
            raise CommandStartFailed(
                f"could not start {redact_text(request.argv[0], request.secret_values)!r}: {reason}")
        return process, status_read, int(line.split()[1])

    def _collect(
        self, process: subprocess.Popen[bytes], status: tuple[int, int], request: CommandRequest,
        started: float, counts: list[int],
    ) -> tuple[int, bytes, bytes]:
        chunks: tuple[list[bytes], list[bytes]] = ([], [])
        names = ("stdout", "stderr")
        limit = request.max_output_bytes
        control = request.control
        command_deadline = None if request.timeout_ms is None else started + request.timeout_ms / 1000.0
        selector = selectors.DefaultSelector()
        assert process.stdout is not None and process.stderr is not None
        for index, pipe in enumerate((process.stdout, process.stderr)):
            os.set_blocking(pipe.fileno(), False)
            selector.register(pipe.fileno(), selectors.EVENT_READ, index)
        status_fd, command_pid = status
        selector.register(status_fd, selectors.EVENT_READ, -2)
        reported = b""
        exit_code: int | None = None
        pending_input = memoryview(request.stdin)
        if process.stdin is not None:
            os.set_blocking(process.stdin.fileno(), False)
            selector.register(process.stdin.fileno(), selectors.EVENT_WRITE, -1)
        try:
            while True:
                readers = [k for k in selector.get_map().values() if k.data >= 0]
                if not readers and exit_code is not None:
                    break
                self._check_time(process, request, command_deadline)
                wait = _POLL_SLICE_S
                remaining = control.remaining()
                if remaining is not None:
                    wait = min(wait, remaining)
                if command_deadline is not None:
                    wait = min(wait, max(0.0, command_deadline - time.monotonic()))
                for key, _mask in selector.select(wait):
                    if key.data == -1:
                        pending_input = self._feed(process, selector, pending_input)
                        continue
                    if key.data == -2:
                        # the supervisor reports the command's exit, then kills what is left
                        data = os.read(status_fd, 64)
                        reported += data
                        if reported.startswith(b"exit ") and reported.endswith(b"\n"):
                            exit_code = int(reported[5:])
                        if not data:
                            selector.unregister(status_fd)
                            if exit_code is None:  # someone killed the supervisor: best effort
                                _kill_orphaned(command_pid)
                                _stop(process)
                                exit_code = process.returncode
                        continue
                    data = os.read(key.fd, _READ_CHUNK)
                    if not data:
                        selector.unregister(key.fd)
                        continue
                    counts[key.data] += len(data)
                    if counts[key.data] > limit:
                        _stop(process)
                        raise _Outcome("output_too_large", CommandOutputTooLarge(
                            f"the command wrote more than {limit} bytes to {names[key.data]}; its "
                            "process group was killed (raise max_output_bytes or write less)",
                            stream=names[key.data], limit=limit))
                    chunks[key.data].append(data)
            _stop(process)
        except BaseException:
            _stop(process)
            raise
        finally:
            selector.close()
            os.close(status_fd)
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
        return exit_code, b"".join(chunks[0]), b"".join(chunks[1])

    def _feed(self, process: subprocess.Popen[bytes], selector: selectors.BaseSelector,
              pending: memoryview) -> memoryview:
        assert process.stdin is not None
        try:
            written = os.write(process.stdin.fileno(), pending[:_READ_CHUNK])
        except BlockingIOError:  # pragma: no cover - the selector reported space; a race at most
            return pending
        except BrokenPipeError:  # the command closed its stdin: the rest of the input is dropped
            written = len(pending)
        pending = pending[written:]
        if not pending:
            selector.unregister(process.stdin.fileno())
            process.stdin.close()
        return pending

    def _check_time(self, process: subprocess.Popen[bytes], request: CommandRequest,
                    command_deadline: float | None) -> None:
        control = request.control
        try:
            control.check()
        except Cancelled as exc:
            _stop(process)
            raise _Outcome("cancelled", exc) from None
        except RunTimedOut as exc:
            _stop(process)
            raise _Outcome("run_timed_out", exc) from None
        if command_deadline is not None and time.monotonic() >= command_deadline:
            _stop(process)
            raise _Outcome("timed_out", CommandTimedOut(
                f"the command ran longer than timeout_ms={request.timeout_ms}; it and every process "
                "it started were killed", timeout_ms=request.timeout_ms or 0))

    def with_audit(self, audit: AuditSink | None) -> LocalEnvironment:
        """A second environment over the same (borrowed) root with a different audit sink."""
        self._check()
        return LocalEnvironment(self._root, audit=audit, disposal=self._capabilities.disposal)

    def __repr__(self) -> str:
        return f"LocalEnvironment(closed={self._closed}, capabilities={self._capabilities})"


def _spec(argv: tuple[str, ...], env: dict[str, str]) -> bytes:
    """What the supervisor reads: the argv count, the argv, then NAME=value, NUL-separated."""
    fields = [str(len(argv)).encode(), *map(os.fsencode, argv),
              *(os.fsencode(name) + b"=" + os.fsencode(value) for name, value in env.items())]
    return b"\0".join(fields)


def _read_line(fd: int) -> str:
    """One short status line from the supervisor ('' when it ended first)."""
    line = b""
    while not line.endswith(b"\n") and len(line) < 256:
        data = os.read(fd, 1)
        if not data:  # pragma: no cover - the supervisor died before it could answer
            break
        line += data
    return line.decode("ascii", "replace").strip()


def _kill_orphaned(command_pid: int) -> None:
    """SIGKILL the command's own group after its supervisor died (what setsid() left is lost)."""
    try:
        os.killpg(command_pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # pragma: no cover - it had ended too
        pass


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Have the supervisor kill every descendant of the command, then reap the supervisor."""
    if process.poll() is None:
        try:
            os.kill(process.pid, signal.SIGTERM)
        except ProcessLookupError:  # pragma: no cover - it exited since poll()
            pass
        try:
            process.wait(_STOP_WAIT_S)
        except subprocess.TimeoutExpired:  # pragma: no cover - a supervisor stuck in the kernel
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
