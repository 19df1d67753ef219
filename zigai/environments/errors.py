"""The named errors of execution environments (rooted files, commands, workspaces).

Invariant: every constructor passes only the message positionally to ``Exception``; extra
data are keyword-only attributes with defaults, so every error pickles with its attributes.
No message or attribute ever contains a secret environment value.
"""

from __future__ import annotations

from zigai.errors import ExecutionEnvironmentError

__all__ = [
    "InvalidPath",
    "PathOutsideRoot",
    "SymlinkRefused",
    "SpecialFileRefused",
    "FileTooLarge",
    "EnvironmentClosed",
    "InvalidCommandRequest",
    "NetworkIsolationUnavailable",
    "CommandOutputTooLarge",
    "CommandTimedOut",
    "CommandStartFailed",
]


class InvalidPath(ExecutionEnvironmentError):
    """A relative path was malformed: empty, an empty or ``.`` component, NUL or a backslash."""

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class PathOutsideRoot(InvalidPath):
    """A path was absolute or contained ``..``: it would name something beyond the root."""


class SymlinkRefused(ExecutionEnvironmentError):
    """A path component was a symbolic link; rooted operations never follow links."""

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class SpecialFileRefused(ExecutionEnvironmentError):
    """A path named a device, FIFO, socket (or a directory where a file was needed)."""

    def __init__(self, message: str, *, path: str = "", kind: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.kind = kind


class FileTooLarge(ExecutionEnvironmentError):
    """A file read would exceed the caller's byte bound."""

    def __init__(self, message: str, *, path: str = "", limit: int = 0) -> None:
        super().__init__(message)
        self.path = path
        self.limit = limit


class EnvironmentClosed(ExecutionEnvironmentError):
    """A rooted directory, environment or workspace was used after ``close()``."""


class InvalidCommandRequest(ExecutionEnvironmentError):
    """A command request was malformed (argv, cwd, environment names, limits)."""


class NetworkIsolationUnavailable(ExecutionEnvironmentError):
    """The request denies network access but this backend cannot enforce that denial."""


class CommandOutputTooLarge(ExecutionEnvironmentError):
    """A command wrote more than its output bound; the process group was killed.

    ``stream`` is ``"stdout"`` or ``"stderr"``; ``limit`` the byte bound that was exceeded.
    """

    def __init__(self, message: str, *, stream: str = "", limit: int = 0) -> None:
        super().__init__(message)
        self.stream = stream
        self.limit = limit


class CommandTimedOut(ExecutionEnvironmentError):
    """A command ran past its own ``timeout_ms``; its process group was killed and reaped."""

    def __init__(self, message: str, *, timeout_ms: int = 0) -> None:
        super().__init__(message)
        self.timeout_ms = timeout_ms


class CommandStartFailed(ExecutionEnvironmentError):
    """The executable could not be started (not found, not executable)."""
