"""The named errors of durable execution.

Invariant: constructors pass only the message positionally; extra data are keyword-only
attributes with defaults, so every error pickles with its attributes (DBOS records step and
workflow errors by pickling them).
"""

from __future__ import annotations

from zigai.errors import DurableError

__all__ = [
    "DurableSetupError", "DurableStepUnbound", "DurableApprovalTimedOut", "DurableRunNotFound",
    "DurableRunWaitTimedOut", "DurableRunCancelled",
]


class DurableSetupError(DurableError):
    """The durable engine is missing, not launched, or the agent cannot be made durable."""


class DurableStepUnbound(DurableError):
    """A durable tool ran outside the workflow step its model response reserved for it."""


class DurableApprovalTimedOut(DurableError):
    """A paused durable run received no decisions within its approval timeout."""

    def __init__(self, message: str, *, workflow_id: str = "", round: int = 0) -> None:
        super().__init__(message)
        self.workflow_id = workflow_id
        self.round = round


class DurableRunNotFound(DurableError):
    """No durable run with that workflow id exists in the system database."""

    def __init__(self, message: str, *, workflow_id: str = "") -> None:
        super().__init__(message)
        self.workflow_id = workflow_id


class DurableRunWaitTimedOut(DurableError):
    """A bounded wait for a durable run's result ended before the run did."""

    def __init__(self, message: str, *, workflow_id: str = "") -> None:
        super().__init__(message)
        self.workflow_id = workflow_id


class DurableRunCancelled(DurableError):
    """The durable run was cancelled; resume it to continue from its last completed step."""

    def __init__(self, message: str, *, workflow_id: str = "") -> None:
        super().__init__(message)
        self.workflow_id = workflow_id
