"""The named errors of the planning subsystem.

Invariant: constructors pass only the message positionally; extra data are keyword-only
attributes with defaults, so every error pickles with its attributes.  Messages name step ids
and counts, never step inputs or outputs.
"""

from __future__ import annotations

from zigai.errors import PlanningError

__all__ = [
    "InvalidPlan",
    "DuplicateStepId",
    "UnknownDependency",
    "PlanCycle",
    "PlanTooLarge",
    "UnknownPlan",
    "StaleRevision",
    "ApprovalMissing",
    "UnexpectedApproval",
    "InvalidStepOutput",
    "StepOutputTooLarge",
    "PlanExecutionClosed",
]


class InvalidPlan(PlanningError):
    """A plan or step was malformed (id, description, dependency list, input); nothing became visible."""


class DuplicateStepId(InvalidPlan):
    """Two steps of one plan share an id."""

    def __init__(self, message: str, *, step_id: str = "") -> None:
        super().__init__(message)
        self.step_id = step_id


class UnknownDependency(InvalidPlan):
    """A step depends on an id no step of the same plan has."""

    def __init__(self, message: str, *, step_id: str = "", dependency: str = "") -> None:
        super().__init__(message)
        self.step_id = step_id
        self.dependency = dependency


class PlanCycle(InvalidPlan):
    """The dependencies form a cycle (a step depending on itself included)."""

    def __init__(self, message: str, *, cycle: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.cycle = cycle


class PlanTooLarge(InvalidPlan):
    """A plan exceeds one of its :class:`PlanLimits` (steps, dependencies, text, input)."""

    def __init__(self, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.limit = limit


class UnknownPlan(PlanningError):
    """A :class:`PlanBoard` holds no plan with this id."""

    def __init__(self, message: str, *, plan_id: str = "") -> None:
        super().__init__(message)
        self.plan_id = plan_id


class StaleRevision(PlanningError):
    """A revision or approval was made against an older revision than the visible one."""

    def __init__(self, message: str, *, expected: int = 0, actual: int = 0) -> None:
        super().__init__(message)
        self.expected = expected
        self.actual = actual


class ApprovalMissing(PlanningError):
    """Steps that require approval have no decision; no callback ran."""

    def __init__(self, message: str, *, step_ids: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.step_ids = step_ids


class UnexpectedApproval(PlanningError):
    """A decision names a step that does not exist or does not require approval; no callback ran."""

    def __init__(self, message: str, *, step_ids: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.step_ids = step_ids


class InvalidStepOutput(PlanningError):
    """A step or advisor callback returned something that is not a bounded JSON value."""

    def __init__(self, message: str, *, step_id: str = "") -> None:
        super().__init__(message)
        self.step_id = step_id


class StepOutputTooLarge(InvalidStepOutput):
    """A step's output (or all outputs together) exceeds :class:`ExecutionLimits`."""

    def __init__(self, message: str, *, step_id: str = "", limit: int = 0) -> None:
        super().__init__(message, step_id=step_id)
        self.limit = limit


class PlanExecutionClosed(PlanningError):
    """A :class:`PlanExecution` was used after ``close()``."""
