"""zigai.multi_agent: programmatic orchestration over ordinary agent runs (layer 6).

Job
    Let application code compose agents -- delegate a task and get the result back, hand the
    next turn to another agent, or offer an agent to another as a tool -- while one
    :class:`Session` keeps the bounded identity, cumulative usage and lifecycle observation
    of the whole tree, and :class:`Scope` values pass dependencies, history, cancellation,
    deadline and trace parent explicitly.

Invariants
    * Explicit context: a child gets only the deps it is given and either ``Shared(history)``
      or ``Isolated()``; nothing is inherited through ambient state.
    * Depth: delegations and subagent tools run one level deeper and return; handoffs keep
      the depth.  ``SessionLimits`` bound depth, run count and usage budgets, checked before
      a child starts (exactly-at-limit allowed).
    * Identity: run indices follow start order and correlation ids are
      ``<session id>/<run index>``, so the same program produces the same ids.
    * Usage: every started run adds to ``Session.usage`` exactly once -- a completed run its
      canonical ``RunUsage``, a failed run what a temporary lifecycle hook captured.
    * Time: one absolute deadline per scope, converted to remaining time right before each
      child starts; the scope's token is the child's cancellation token.
    * Single-threaded by contract; independent trees use independent sessions.

Submodules: ``errors``, ``context`` (Shared, Isolated, run kinds), ``session`` (Session,
SessionLimits, SessionEvent, RunRecord), ``scope`` (Scope, agent-as-tool).
"""

from __future__ import annotations

from zigai.multi_agent.context import Context, Isolated, RunKind, Shared
from zigai.multi_agent.errors import (
    DelegationDepthExceeded,
    InvalidSession,
    MultiAgentError,
    SessionBudgetExceeded,
    SessionRunLimitExceeded,
)
from zigai.multi_agent.scope import Scope
from zigai.multi_agent.session import RunRecord, Session, SessionEvent, SessionLimits

__all__ = [
    "Session",
    "SessionLimits",
    "SessionEvent",
    "RunRecord",
    "RunKind",
    "Scope",
    "Shared",
    "Isolated",
    "Context",
    "MultiAgentError",
    "InvalidSession",
    "DelegationDepthExceeded",
    "SessionRunLimitExceeded",
    "SessionBudgetExceeded",
]
