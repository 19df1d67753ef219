"""Third-party child processes (MCP and ACP stdio servers): what they inherit, how they stop.

Job
    Start a child with a small environment in its own session (process group), and stop the
    whole group -- the child and every helper it started -- when it is closed.

Environment
    Build the ``env`` mapping for ``subprocess.Popen`` from this process's environment: a small
    allowlist of variables a program needs to run (:data:`DEFAULT_INHERITED`, plus ``LANG`` and
    ``LC_*``), the variables the caller names, and nothing else unless full inheritance is asked
    for by name.  MCP stdio, ACP stdio and ``zigai run --mcp-env`` all go through
    :func:`child_environment`, so the three cannot drift apart.

Process group (POSIX)
    :func:`spawn_options` starts the child as the leader of a new session, so helpers it starts
    (the ``npx`` / wrapper pattern) share its process group.  :func:`stop_group` closes stdin,
    waits for the leader to exit, sends SIGTERM to the group, waits (``terminate_s``) until the
    leader is gone and the output is drained, then SIGKILLs whatever is left of the group and
    reaps the leader.
    The leader is reaped only after the group has been signalled, so the group id cannot be a
    recycled process id.  Elsewhere (Windows) only the child itself is terminated and killed;
    helpers it started are not tracked.

Invariants
    * By default no provider key, token or other secret of this process reaches the child: only
      the allowlisted names are copied.  ``inherit_all=True`` is the one way to copy everything.
    * Values that begin with ``()`` (exported shell functions) are never copied implicitly.
    * Explicit ``values`` win over inherited ones; ``pass_through`` names absent from this
      process's environment are simply left out.
    * Names are checked (non-empty, no ``=`` or NUL); a bad name or value raises
      :class:`InvalidChildEnvironment` before any process starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from zigai.errors import SecurityError

__all__ = ["DEFAULT_INHERITED", "InvalidChildEnvironment", "child_environment", "parse_env_flag",
           "spawn_options", "stop_group", "kill_group", "exit_status"]

#: The variables copied by default: the same set the official MCP SDK passes to stdio servers.
DEFAULT_INHERITED: tuple[str, ...] = (
    ("APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
     "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "COMSPEC", "WINDIR")
    if sys.platform == "win32"
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR")
)
_LOCALE_PREFIX = "LC_"


class InvalidChildEnvironment(SecurityError):
    """A variable name or value for a child process is unusable; fix the named variable."""


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not name or "=" in name or "\0" in name:
        raise InvalidChildEnvironment(
            f"environment variable name {name!r} is invalid: use a non-empty NAME without '=' or NUL")
    return name


def _inheritable(name: str) -> bool:
    return name in DEFAULT_INHERITED or name == "LANG" or name.startswith(_LOCALE_PREFIX)


def child_environment(values: Mapping[str, str] | None = None, *, pass_through: Iterable[str] = (),
                      inherit_all: bool = False, source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's complete environment (see the module docstring).

    ``source`` is the environment to copy from (default ``os.environ``).
    """
    parent = os.environ if source is None else source
    if inherit_all:
        env = dict(parent)
    else:
        env = {name: value for name, value in parent.items()
               if _inheritable(name) and not value.startswith("()")}
    for name in pass_through:
        if _check_name(name) in parent:
            env[name] = parent[name]
    for name, value in (values or {}).items():
        if not isinstance(value, str) or "\0" in value:
            raise InvalidChildEnvironment(f"the value of environment variable {name!r} must be a string without NUL")
        env[_check_name(name)] = value
    return env


def parse_env_flag(items: Iterable[str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """``NAME=VALUE`` items as values to set, bare ``NAME`` items as names to pass through."""
    values: dict[str, str] = {}
    names: list[str] = []
    for item in items:
        name, sep, value = item.partition("=")
        _check_name(name)
        if sep:
            values[name] = value
        else:
            names.append(name)
    return values, tuple(names)


_POLL_S = 0.01
_POSIX = os.name == "posix"
_KILL: int = getattr(signal, "SIGKILL", 9)  # Windows has no SIGKILL; _signal maps it to kill()


def spawn_options() -> dict[str, Any]:
    """Extra ``subprocess.Popen`` arguments: a new session on POSIX, a new process group elsewhere."""
    if _POSIX:
        return {"start_new_session": True}
    return {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}  # pragma: no cover - Windows


def exit_status(process: subprocess.Popen[bytes]) -> int | None:
    """The child's exit code (negative: killed by that signal) or None while it runs.

    On POSIX the child is *not* reaped, so its process id stays reserved as the group id
    until :func:`stop_group` has signalled the group; use this instead of ``poll()``.
    """
    if process.returncode is not None:
        return process.returncode
    if not _POSIX:  # pragma: no cover - Windows
        return process.poll()
    try:
        info = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # reaped by someone else meanwhile
        return process.poll() if process.returncode is None else process.returncode
    if info is None:
        return None
    return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status


def _exited(process: subprocess.Popen[bytes]) -> bool:
    return exit_status(process) is not None


def _signal(process: subprocess.Popen[bytes], sig: int) -> None:
    try:
        if _POSIX:
            os.killpg(process.pid, sig)
        elif sig == signal.SIGTERM:  # pragma: no cover - Windows
            process.terminate()
        else:  # pragma: no cover - Windows
            process.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass  # the group is already empty


def kill_group(process: subprocess.Popen[bytes], *, reap: bool = True) -> None:
    """SIGKILL the child's group and reap the child (for finalizers).

    ``reap=False`` leaves the leader unreaped (its id stays reserved as the group id) for a
    later :func:`stop_group`, e.g. when a peer stopped reading and the connection is dropped.
    """
    _signal(process, _KILL)
    if reap:
        process.wait()


def stop_group(process: subprocess.Popen[bytes], *, shutdown_s: float, terminate_s: float,
               drained: Callable[[float], bool] = lambda timeout: True) -> None:
    """Close stdin, then stop the child's whole group (see the module docstring) and reap it.

    ``drained(timeout)`` waits up to ``timeout`` seconds for the child's output to reach end of
    file (every holder of the pipe gone) and says whether it did.
    """
    try:
        if process.stdin is not None and not process.stdin.closed:
            process.stdin.close()
    except OSError:  # pragma: no cover - flushing into a pipe the child already closed
        pass
    end = time.monotonic() + shutdown_s
    while not _exited(process) and time.monotonic() < end:
        time.sleep(_POLL_S)
    _signal(process, signal.SIGTERM)
    end = time.monotonic() + terminate_s
    while not _exited(process) and time.monotonic() < end:
        time.sleep(_POLL_S)
    if _exited(process):
        drained(max(0.0, end - time.monotonic()))
    _signal(process, _KILL)  # whatever is left of the group; the leader is not reaped yet
    process.wait()
