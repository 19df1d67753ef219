"""The named capability errors, all under :class:`zigai.errors.CapabilityError`.

Structural errors (:class:`InvalidCapability`, :class:`DuplicateCapabilityId`,
:class:`UnknownCapabilityDependency`, :class:`CapabilityDependencyCycle`,
:class:`CapabilityLimitExceeded`, and a :class:`CapabilityConflict` among eagerly active
bundles) are raised by the registry, so an agent run finds them before its first model
request.  A load the model asks for that cannot be honoured (an unknown id, a conflict) is
not raised: it becomes a failed ``load_capability`` result.  Every error pickles with its
attributes (only the message is passed to ``Exception``).
"""

from __future__ import annotations

from zigai.errors import CapabilityError

__all__ = [
    "CapabilityError",
    "InvalidCapability",
    "DuplicateCapabilityId",
    "UnknownCapability",
    "UnknownCapabilityDependency",
    "CapabilityDependencyCycle",
    "CapabilityConflict",
    "CapabilityLimitExceeded",
    "LoadResolutionClosed",
]


class InvalidCapability(CapabilityError):
    """A capability descriptor or layer is malformed (bad id, anonymous on-demand bundle, ...)."""


class DuplicateCapabilityId(CapabilityError):
    """Two capabilities of one composition share an id."""

    def __init__(self, message: str, *, capability_id: str = "") -> None:
        super().__init__(message)
        self.capability_id = capability_id


class UnknownCapability(CapabilityError):
    """A load or plan named an id no registered capability has."""

    def __init__(self, message: str, *, capability_id: str = "") -> None:
        super().__init__(message)
        self.capability_id = capability_id


class UnknownCapabilityDependency(CapabilityError):
    """A capability depends on an id no registered capability has."""

    def __init__(self, message: str, *, capability_id: str = "", dependency: str = "") -> None:
        super().__init__(message)
        self.capability_id = capability_id
        self.dependency = dependency


class CapabilityDependencyCycle(CapabilityError):
    """Dependencies form a cycle; ``cycle`` lists it, first id repeated at the end.

    The one class for the error wherever it is found: a registry, an agent run's setup, or
    an agent spec's dry run (:mod:`zigai.agent_spec` re-exports it).  ``path`` is the spec
    document location of the listed capability the cycle was reached from (``$.capabilities[0]``),
    or ``""`` when no document is involved.
    """

    def __init__(self, message: str, *, cycle: tuple[str, ...] = (), path: str = "") -> None:
        super().__init__(message)
        self.cycle = tuple(cycle)
        self.path = path


class CapabilityConflict(CapabilityError):
    """Two capabilities that declare a conflict would be active together."""

    def __init__(self, message: str, *, capability_id: str = "", conflicting: str = "") -> None:
        super().__init__(message)
        self.capability_id = capability_id
        self.conflicting = conflicting


class CapabilityLimitExceeded(CapabilityError):
    """A composition is larger than its :class:`~zigai.capability.CapabilityLimits` allow."""

    def __init__(self, message: str, *, limit_name: str = "", limit: int = 0, value: int = 0) -> None:
        super().__init__(message)
        self.limit_name = limit_name
        self.limit = limit
        self.value = value


class LoadResolutionClosed(CapabilityError):
    """A :class:`~zigai.capability.LoadResolution` was used after ``close()``."""
