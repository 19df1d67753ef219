"""Command values: the policy-visible request, the owned result and the audit event.

A :class:`CommandRequest` says everything a policy needs to judge a command before it runs:
the exact argv, the working directory *relative to the environment root*, which environment
variables are plain and which are secret, whether the command needs the network, its own
timeout and output bounds, and the :class:`~zigai.control.RunControl` whose deadline and
cancellation token it shares with the rest of the invocation.

Invariants:

* values are immutable and validated at construction (:class:`InvalidCommandRequest`);
* secret environment values never appear in ``repr``, in an :class:`AuditEvent` or in an error;
  they do appear in the child's environment, which is the point;
* a :class:`CommandResult` owns output that was bounded *before* collection and had every exact
  secret value replaced by ``[REDACTED]`` before the result was built.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from zigai._owner import Owner
from zigai.control import RunControl
from zigai.environments.errors import EnvironmentClosed, InvalidCommandRequest
from zigai.environments.rooted import split_relative
from zigai.security import redact_text

__all__ = [
    "NetworkAccess",
    "CommandRequest",
    "CommandResult",
    "AuditEvent",
    "AuditSink",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "DEFAULT_MAX_STDIN_BYTES",
]

DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024
DEFAULT_MAX_STDIN_BYTES = 1024 * 1024

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class NetworkAccess(enum.Enum):
    """What a command needs from the network; ``denied`` must be *enforced* to be honoured."""

    denied = "denied"
    allowed = "allowed"


def _env_map(value: object, what: str) -> Mapping[str, str]:
    if not isinstance(value, Mapping):
        raise InvalidCommandRequest(f"{what} must be a mapping of names to strings")
    checked: dict[str, str] = {}
    for name, item in value.items():
        if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
            raise InvalidCommandRequest(f"{what}: environment name {name!r} is not [A-Za-z_][A-Za-z0-9_]*")
        if not isinstance(item, str) or "\x00" in item:
            raise InvalidCommandRequest(f"{what}: the value of {name} must be a string without NUL")
        checked[name] = item
    return MappingProxyType(checked)


def _bound(name: str, value: object, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidCommandRequest(f"CommandRequest.{name} must be an int >= 0")


@dataclass(frozen=True, slots=True, repr=False)
class CommandRequest:
    """One command to run inside an environment (see module docstring).

    ``env`` holds plain variables, ``secret_env`` sensitive ones (redacted from output and
    never audited by value); ``inherit_env`` names variables copied from the host process
    (``PATH`` by default, so an executable name resolves; pass ``()`` for none).
    ``max_output_bytes`` bounds stdout and stderr separately; ``timeout_ms`` is the command's
    own ceiling, ``control`` the invocation's deadline and cancellation.
    """

    argv: tuple[str, ...]
    cwd: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    secret_env: Mapping[str, str] = field(default_factory=dict, repr=False)
    inherit_env: tuple[str, ...] = ("PATH",)
    network: NetworkAccess = NetworkAccess.denied
    stdin: bytes = b""
    timeout_ms: int | None = None
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES
    control: RunControl = field(default_factory=RunControl, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if isinstance(self.argv, str):
            raise InvalidCommandRequest("CommandRequest.argv must be a sequence of strings, not one string")
        argv = tuple(self.argv)
        if not argv:
            raise InvalidCommandRequest("CommandRequest.argv must not be empty")
        for arg in argv:
            if not isinstance(arg, str) or "\x00" in arg:
                raise InvalidCommandRequest("every argv entry must be a string without NUL")
        if not argv[0]:
            raise InvalidCommandRequest("argv[0] must name an executable")
        set_(self, "argv", argv)
        try:
            split_relative(self.cwd)
        except Exception as exc:
            raise InvalidCommandRequest(f"CommandRequest.cwd: {exc}") from None
        env = _env_map(self.env, "CommandRequest.env")
        secret_env = _env_map(self.secret_env, "CommandRequest.secret_env")
        both = sorted(set(env) & set(secret_env))
        if both:
            raise InvalidCommandRequest(f"names in both env and secret_env: {', '.join(both)}")
        set_(self, "env", env)
        set_(self, "secret_env", secret_env)
        inherit = tuple(self.inherit_env)
        for name in inherit:
            if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
                raise InvalidCommandRequest(f"inherit_env name {name!r} is not a valid environment name")
        set_(self, "inherit_env", inherit)
        try:
            set_(self, "network", NetworkAccess(self.network))
        except ValueError:
            raise InvalidCommandRequest(f"unknown network access {self.network!r}") from None
        if not isinstance(self.stdin, bytes | bytearray | memoryview):
            raise InvalidCommandRequest("CommandRequest.stdin must be bytes")
        set_(self, "stdin", bytes(self.stdin))
        if len(self.stdin) > DEFAULT_MAX_STDIN_BYTES:
            raise InvalidCommandRequest(f"stdin is larger than {DEFAULT_MAX_STDIN_BYTES} bytes")
        _bound("timeout_ms", self.timeout_ms, allow_none=True)
        _bound("max_output_bytes", self.max_output_bytes)
        if not isinstance(self.control, RunControl):
            raise InvalidCommandRequest("CommandRequest.control must be a RunControl")

    @property
    def secret_values(self) -> tuple[str, ...]:
        """The exact values redacted from output (non-empty ones)."""
        return tuple(v for v in self.secret_env.values() if v)

    def __repr__(self) -> str:
        secrets = self.secret_values
        argv = tuple(redact_text(arg, secrets) for arg in self.argv)
        return (f"CommandRequest(argv={argv!r}, cwd={self.cwd!r}, env_names={sorted(self.env)!r}, "
                f"secret_env_names={sorted(self.secret_env)!r}, network={self.network.value}, "
                f"timeout_ms={self.timeout_ms}, max_output_bytes={self.max_output_bytes})")


AuditKind = Literal["command_refused", "command_started", "command_finished", "command_failed"]


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """What an audit sink sees: names and facts, never a secret value.

    ``argv`` has exact secret values replaced; ``secret_env_names`` lists which variables were
    secret.  ``outcome`` is ``""`` until the command ends, then ``exit``, ``timed_out``,
    ``output_too_large``, ``cancelled``, ``run_timed_out``, ``start_failed`` or the refusal
    reason.
    """

    kind: AuditKind
    argv: tuple[str, ...]
    cwd: str
    env_names: tuple[str, ...]
    secret_env_names: tuple[str, ...]
    inherited_env_names: tuple[str, ...]
    network: NetworkAccess
    backend: str
    outcome: str = ""
    exit_code: int | None = None
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    duration_s: float = 0.0


AuditSink = Callable[[AuditEvent], None]
"""Receives audit events synchronously; whatever it raises propagates to the caller."""


class CommandResult(Owner):
    """The owned, bounded and redacted outcome of a command that ran to its end."""

    __slots__ = ("_exit_code", "_stdout", "_stderr", "_duration_s")

    _closed_error = EnvironmentClosed

    def __init__(self, *, exit_code: int, stdout: bytes, stderr: bytes, duration_s: float) -> None:
        super().__init__()
        self._exit_code = exit_code
        self._stdout = stdout
        self._stderr = stderr
        self._duration_s = duration_s

    def _release(self) -> None:
        self._stdout = b""
        self._stderr = b""

    @property
    def exit_code(self) -> int:
        """The process exit status; a negative number ``-N`` means it died of signal ``N``."""
        self._check()
        return self._exit_code

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def stdout(self) -> bytes:
        self._check()
        return self._stdout

    @property
    def stderr(self) -> bytes:
        self._check()
        return self._stderr

    @property
    def duration_s(self) -> float:
        self._check()
        return self._duration_s

    def stdout_text(self, encoding: str = "utf-8") -> str:
        return self.stdout.decode(encoding, errors="replace")

    def stderr_text(self, encoding: str = "utf-8") -> str:
        return self.stderr.decode(encoding, errors="replace")

    def __repr__(self) -> str:
        if self._closed:
            return "CommandResult(closed)"
        return (f"CommandResult(exit_code={self._exit_code}, stdout={len(self._stdout)} bytes, "
                f"stderr={len(self._stderr)} bytes)")
