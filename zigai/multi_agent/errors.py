"""The named errors of :mod:`zigai.multi_agent`, all under :class:`zigai.errors.MultiAgentError`."""

from __future__ import annotations

from zigai.errors import MultiAgentError

__all__ = [
    "MultiAgentError",
    "InvalidSession",
    "DelegationDepthExceeded",
    "SessionRunLimitExceeded",
    "SessionBudgetExceeded",
]


class InvalidSession(MultiAgentError):
    """A session, scope or delegation argument is invalid (identity, limits, context, deps)."""


class DelegationDepthExceeded(MultiAgentError):
    """A delegation would nest deeper than ``SessionLimits.max_depth``; nothing was started."""

    def __init__(self, message: str, *, depth: int = 0, limit: int = 0) -> None:
        super().__init__(message)
        self.depth = depth
        self.limit = limit


class SessionRunLimitExceeded(MultiAgentError):
    """The session already started ``SessionLimits.max_runs`` runs; nothing more starts."""


class SessionBudgetExceeded(MultiAgentError):
    """The session's cumulative usage reached a ``SessionLimits`` budget: before a child
    started, or inside a child whose run limits were tightened to what the budget had left
    (the child's own ``UsageLimitExceeded`` is the ``__cause__``)."""
