"""Errors of :mod:`zigai.agent_spec`, one class per failure a reviewer or operator must act on.

Every class defined here derives from :class:`zigai.errors.AgentSpecError`.  A capability
dependency cycle is the capability package's own :class:`CapabilityDependencyCycle`
(re-exported here, one class for one error), with the document ``path`` set; the other
structural capability errors the dry run's registry check finds (a conflict, a size limit)
are likewise the capability package's classes, their message prefixed with the path.  Each carries the exact document
``path`` it is about (``$.limits.max_requests``, ``$.tools[2]``; ``$`` for the whole document)
when there is one, and the message starts with that path.  No message contains an
environment-variable *value*: only names.
"""

from __future__ import annotations

from zigai.capability.errors import CapabilityDependencyCycle
from zigai.errors import AgentSpecError

__all__ = [
    "AgentSpecError",
    "InvalidAgentSpec",
    "UnresolvedReference",
    "CapabilityDependencyCycle",
    "MissingEnvironment",
    "ProviderValidationFailed",
    "AgentSpecClosed",
]


class InvalidAgentSpec(AgentSpecError):
    """The document is not a valid agent spec: syntax, size, version, an unknown key, a wrong
    type, a duplicate key, a value out of range, a refused credential or substitution.

    ``path`` is the location of the offending value (``$`` for the whole document).
    """

    def __init__(self, message: str, *, path: str = "$") -> None:
        super().__init__(message)
        self.path = path


class UnresolvedReference(AgentSpecError):
    """A name in the spec is not in the application's catalog: a provider, a tool, a toolset,
    a capability (or one of its dependencies), or an MCP server with no connector.

    ``path`` locates the reference; ``name`` is the name that was not found.
    """

    def __init__(self, message: str, *, path: str = "$", name: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.name = name


class MissingEnvironment(AgentSpecError):
    """Environment variables the spec needs are not set; ``variables`` names every one.

    For a provider credential with alternatives (``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``) the
    alternatives appear as one entry joined by ``" or "``.
    """

    def __init__(self, message: str, *, variables: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.variables = tuple(variables)


class ProviderValidationFailed(AgentSpecError):
    """The provider catalog's secret-free check refused the model reference."""

    def __init__(self, message: str, *, path: str = "$.model") -> None:
        super().__init__(message)
        self.path = path


class AgentSpecClosed(AgentSpecError):
    """An owned spec or a resolved agent was used after ``close()``."""
