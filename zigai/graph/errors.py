"""The named errors of :mod:`zigai.graph`, all under :class:`zigai.errors.GraphError`.

Definition errors (raised by the builder, before any run exists) derive from
:class:`InvalidGraphDefinition`; run errors latch the run that raised them; snapshot errors
derive from :class:`InvalidGraphSnapshot`.  Extra data (the attempted branch, a node name)
lives in attributes so every error pickles with it.
"""

from __future__ import annotations

from zigai.errors import GraphError

__all__ = [
    "GraphError",
    "InvalidGraphDefinition",
    "GraphLimitExceeded",
    "InvalidGraphInput",
    "GraphTypeMismatch",
    "UnmatchedRoute",
    "StepLimitExceeded",
    "GraphRunFinished",
    "ForkItemLimitExceeded",
    "InvalidGraphSnapshot",
    "UnsupportedSnapshotVersion",
    "SnapshotMismatch",
    "VisualizationTooLarge",
]


class InvalidGraphDefinition(GraphError):
    """The builder refused a definition: duplicate or bad names, missing routes, unknown
    targets, unreachable nodes.  Fix the definition; nothing ran."""


class GraphLimitExceeded(InvalidGraphDefinition):
    """A definition is larger than its :class:`~zigai.graph.GraphLimits` allow."""


class InvalidGraphInput(GraphError):
    """A run was started with arguments the graph cannot accept (bad step limit, control)."""


class GraphTypeMismatch(GraphError):
    """A value crossing a graph boundary is not of the declared type.

    ``boundary`` names where the check failed (``state``, ``deps``, ``input``, ``value``,
    ``output``); ``node`` the node whose callback produced the value, when one did.
    """

    def __init__(self, message: str, *, boundary: str = "", node: str | None = None) -> None:
        super().__init__(message)
        self.boundary = boundary
        self.node = node


class UnmatchedRoute(GraphError):
    """A decision returned a branch name it did not register (``branch``) at ``node``."""

    def __init__(self, message: str, *, branch: str = "", node: str = "") -> None:
        super().__init__(message)
        self.branch = branch
        self.node = node


class StepLimitExceeded(GraphError):
    """The run completed ``limit`` transitions without finishing (a cycle did not end)."""

    def __init__(self, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.limit = limit


class GraphRunFinished(GraphError):
    """``Run.next()`` (or a snapshot) was asked for after the run had already ended."""


class ForkItemLimitExceeded(GraphError):
    """A map fork emitted more items than ``GraphLimits.max_fork_items`` allows."""


class InvalidGraphSnapshot(GraphError):
    """A snapshot document is malformed, too large, or does not fit this graph."""


class UnsupportedSnapshotVersion(InvalidGraphSnapshot):
    """The snapshot envelope or payload version is newer than this code understands
    (or an older payload arrived without a migration hook)."""


class SnapshotMismatch(InvalidGraphSnapshot):
    """The snapshot was taken from another definition (identity, digest, node index or
    name differ); restoring it would resume the wrong workflow."""


class VisualizationTooLarge(GraphError):
    """Rendered visualization text would exceed ``GraphLimits.max_visualization_bytes``."""
