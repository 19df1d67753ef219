"""The supervisor each local command runs under (a program: ``python -P _reaper.py SPEC STATUS``).

Job
    Become a Linux *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``), start the command in
    a new session, report ``started PID SUBREAPER`` (or ``failed ERRNO``) and then ``exit CODE``
    on the status descriptor, and kill every descendant -- including ones that called
    ``setsid()`` or double-forked, which an orphaned process would otherwise escape to init --
    as soon as the command exits or this supervisor receives ``SIGTERM``.  It exits once it has
    no child left.

Invariants
    * standard library only, no zigai imports, nothing slow to import (no ``json``/``re``): it
      starts for every command;
    * it keeps no copy of the command's stdin/stdout/stderr once the command started, so the
      pipes reach end-of-file exactly when every descendant is gone;
    * without the subreaper (a kernel or seccomp policy that refuses the ``prctl``), orphans
      are re-parented to init and only descendants still linked to this process are killed;
      ``started`` reports which case holds.
"""

from __future__ import annotations

import os
import signal
import sys

_PR_SET_CHILD_SUBREAPER = 36


class _Stop(Exception):
    pass


def _stop(signum: int, frame: object) -> None:
    raise _Stop


def _subreaper() -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):  # pragma: no cover - not Linux, or no prctl symbol
        return False


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                ppid = int(stat.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):  # pragma: no cover - it ended during the scan
            continue
        children.setdefault(ppid, []).append(int(name))
    found: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            found.append(child)
            stack.append(child)
    return found


def _kill_all() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    me = os.getpid()
    while True:
        for pid in _descendants(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:  # pragma: no cover - it ended between the scan and the kill
                pass
        try:
            os.waitpid(-1, 0)
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return


def _spawn(argv: list[bytes], env: dict[bytes, bytes]) -> int:
    # Python ignores SIGPIPE and SIGXFSZ; an ignored signal stays ignored across exec, so the
    # command gets their defaults back (as subprocess's restore_signals does).
    defaults = [getattr(signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(signal, name)]
    # posix_spawnp searches this process's PATH: make it the command's (as subprocess does)
    if b"PATH" in env:
        os.environb[b"PATH"] = env[b"PATH"]
    else:
        os.environb.pop(b"PATH", None)
    try:
        return os.posix_spawnp(argv[0], argv, env, setsid=True, setsigdef=defaults)
    except NotImplementedError:  # pragma: no cover - a libc without POSIX_SPAWN_SETSID
        return os.posix_spawnp(argv[0], argv, env, setpgroup=0, setsigdef=defaults)


def main() -> int:
    signal.signal(signal.SIGTERM, _stop)
    spec_fd, status_fd = int(sys.argv[1]), int(sys.argv[2])
    os.set_inheritable(status_fd, False)
    with os.fdopen(spec_fd, "rb") as spec_file:
        fields = spec_file.read().split(b"\0")  # argv count, argv, then NAME=value entries
    count = int(fields[0])
    argv = fields[1:count + 1]
    env = dict(entry.split(b"=", 1) for entry in fields[count + 1:])
    subreaper = _subreaper()
    pid = 0
    try:
        try:
            pid = _spawn(argv, env)
        except OSError as exc:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # nothing to stop; exit on our own
            os.write(status_fd, f"failed {exc.errno or 0}\n".encode())
            return 0
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        os.write(status_fd, f"started {pid} {int(subreaper)}\n".encode())
        while True:
            child, status = os.waitpid(-1, 0)
            if child == pid:
                os.write(status_fd, f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
                break
    except (_Stop, ChildProcessError):
        try:  # not reaped yet, so its group id cannot have been reused
            if pid:  # pragma: no branch - zero only when stopped before the spawn
                os.killpg(pid, signal.SIGKILL)
        except OSError:  # pragma: no cover - the whole group had ended
            pass
    _kill_all()
    return 0


if __name__ == "__main__":  # pragma: no branch - only ever run as a program
    sys.exit(main())
