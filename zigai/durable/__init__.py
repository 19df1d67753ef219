"""zigai.durable: run an ordinary agent as a durable DBOS workflow (layer 6, extra ``dbos``).

Job
    Make every model request and every tool call of an agent run a checkpointed DBOS step
    with a stable identity (run id + step ordinal), so a process killed mid-run resumes
    without repeating completed operations, and map approvals onto DBOS events and messages
    so a paused run waits durably.  No second agent loop: the agent runs through its public
    API with a wrapped model and wrapped tools.

Invariants
    * Importing this package imports no third-party module; DBOS is imported when a
      :class:`DurableAgent` is constructed or used (``pip install 'zigai[dbos]'``).
    * Step ordinals follow the agent's order on the workflow thread: each model request, then
      that response's tool calls in call order (reserved before any of them runs).
    * Step outputs are zigai's own versioned JSON (history for responses), never pickled
      zigai objects.
    * DBOS's embedded SQLite system database is the default local store; a PostgreSQL
      ``system_database_url`` is the same code path when one machine is not enough.

Submodules: ``errors``, ``ids`` (StepId, StepScope, StepCounter), ``codec`` (step output
formats), ``dbos_agent`` (DurableAgent, DurableHandle, DurableRunResult, PendingApproval),
``runs`` (DurableRuns: enqueue, list, inspect, cancel, resume, result from any process).
"""

from __future__ import annotations

from zigai.durable.dbos_agent import (
    DECISIONS_TOPIC,
    PAUSE_EVENT,
    DurableAgent,
    DurableHandle,
    DurableRunResult,
    PendingApproval,
    current_step_id,
)
from zigai.durable.errors import (
    DurableApprovalTimedOut,
    DurableRunCancelled,
    DurableRunNotFound,
    DurableRunWaitTimedOut,
    DurableSetupError,
    DurableStepUnbound,
)
from zigai.durable.ids import StepCounter, StepId, StepScope
from zigai.durable.runs import DurableRuns, RunDetails, RunSummary, StepRecord

__all__ = [
    "DurableAgent",
    "DurableHandle",
    "DurableRunResult",
    "PendingApproval",
    "current_step_id",
    "PAUSE_EVENT",
    "DECISIONS_TOPIC",
    "StepId",
    "StepScope",
    "StepCounter",
    "DurableSetupError",
    "DurableStepUnbound",
    "DurableApprovalTimedOut",
    "DurableRunNotFound",
    "DurableRunWaitTimedOut",
    "DurableRunCancelled",
    "DurableRuns",
    "RunSummary",
    "RunDetails",
    "StepRecord",
]
