"""The execution-environment contract shared by the local backend and remote sandboxes.

A backend advertises, through :class:`SandboxCapabilities`, what it *enforces*: network
isolation (a ``denied`` request really has no network) and disposal (everything the command
left behind is destroyed when the environment closes).  :func:`check_request` is the one
place a denied-network request meets a backend that cannot enforce it; every backend calls it
before starting anything.

Invariants: capabilities are facts about the backend, not wishes of the request; a remote
adapter that cannot prove isolation must advertise ``network_isolation=False``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from zigai.environments.command import CommandRequest, CommandResult, NetworkAccess
from zigai.environments.errors import NetworkIsolationUnavailable

__all__ = ["SandboxCapabilities", "ExecutionEnvironment", "RemoteSandbox", "check_request"]


@dataclass(frozen=True, slots=True)
class SandboxCapabilities:
    """What a backend enforces (see module docstring)."""

    network_isolation: bool
    disposal: bool


@runtime_checkable
class ExecutionEnvironment(Protocol):
    """Anything that runs :class:`CommandRequest` values and says what it enforces."""

    @property
    def backend_name(self) -> str: ...

    @property
    def capabilities(self) -> SandboxCapabilities: ...

    def run(self, request: CommandRequest) -> CommandResult: ...

    def close(self) -> None: ...


@runtime_checkable
class RemoteSandbox(ExecutionEnvironment, Protocol):
    """A remote sandbox adapter: an environment that must be able to destroy itself.

    Adapters (containers, microVMs, hosted sandboxes) live in application code; zigai depends
    only on this shape.  ``dispose`` destroys the remote workspace and everything in it and is
    idempotent; ``close`` releases the local connection (and disposes when ``disposal`` is
    advertised).
    """

    def dispose(self) -> None: ...


def check_request(capabilities: SandboxCapabilities, request: CommandRequest, backend_name: str) -> None:
    """Refuse a request whose network denial this backend cannot enforce."""
    if request.network is NetworkAccess.denied and not capabilities.network_isolation:
        raise NetworkIsolationUnavailable(
            f"the {backend_name} backend cannot enforce network isolation, and the request denies "
            "network access; run it on a backend that advertises network_isolation, or pass "
            "network=NetworkAccess.allowed if the command may use the network"
        )
