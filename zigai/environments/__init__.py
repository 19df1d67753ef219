"""zigai.environments: where agent tools touch files and run commands (layer 6).

Job
    Separate tool logic from process and filesystem ownership.  A :class:`RootedDirectory`
    handle is the only filesystem authority; a :class:`CommandRequest` makes everything a
    policy must see explicit (argv, cwd, plain and secret environment, network need, timeout,
    output bound, run control); a :class:`LocalEnvironment` runs it as a local process group;
    a :class:`DisposableWorkspace` is a private directory destroyed on close; the
    :class:`RemoteSandbox` protocol is the shape remote adapters implement.

Invariants
    * Paths are relative and resolved beneath a directory descriptor one component at a
      time with ``O_NOFOLLOW``: absolute paths, ``..``, symbolic links (also ones swapped in
      between check and open), devices, FIFOs and sockets are refused with named errors.
    * A request that denies network access runs only on a backend that advertises
      ``network_isolation``; the local backend refuses it (:class:`NetworkIsolationUnavailable`).
    * Output is bounded while it is read (:class:`CommandOutputTooLarge` one byte past the
      bound), exact secret values are redacted before a :class:`CommandResult` exists, and
      audit events name secrets without their values.
    * A finished, timed-out, cancelled or over-bound command's whole process group is killed
      and the child reaped before the call returns.
    * Workspaces close their handle before deleting their tree.

Submodules: ``errors``, ``rooted`` (RootedDirectory), ``command`` (request, result, audit
values), ``sandbox`` (capabilities and protocols), ``local`` (LocalEnvironment),
``workspace`` (DisposableWorkspace).
"""

from __future__ import annotations

from zigai.environments.command import (
    DEFAULT_MAX_OUTPUT_BYTES,
    DEFAULT_MAX_STDIN_BYTES,
    AuditEvent,
    AuditSink,
    CommandRequest,
    CommandResult,
    NetworkAccess,
)
from zigai.environments.errors import (
    CommandOutputTooLarge,
    CommandStartFailed,
    CommandTimedOut,
    EnvironmentClosed,
    FileTooLarge,
    InvalidCommandRequest,
    InvalidPath,
    NetworkIsolationUnavailable,
    PathOutsideRoot,
    SpecialFileRefused,
    SymlinkRefused,
)
from zigai.environments.local import LocalEnvironment, redact_bytes
from zigai.environments.rooted import (
    DEFAULT_MAX_READ_BYTES,
    PathInfo,
    PathKind,
    RootedDirectory,
    split_relative,
)
from zigai.environments.sandbox import (
    ExecutionEnvironment,
    RemoteSandbox,
    SandboxCapabilities,
    check_request,
)
from zigai.environments.workspace import DisposableWorkspace

__all__ = [
    "RootedDirectory",
    "PathInfo",
    "PathKind",
    "split_relative",
    "DEFAULT_MAX_READ_BYTES",
    "CommandRequest",
    "CommandResult",
    "NetworkAccess",
    "AuditEvent",
    "AuditSink",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "DEFAULT_MAX_STDIN_BYTES",
    "LocalEnvironment",
    "redact_bytes",
    "DisposableWorkspace",
    "ExecutionEnvironment",
    "RemoteSandbox",
    "SandboxCapabilities",
    "check_request",
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
