"""``PlanBoard``: where plan revisions become visible, one optimistic revision at a time.

Invariants: a revision is validated (it is a :class:`Plan`) before it is published; publishing
revision ``n + 1`` requires that the caller saw revision ``n`` (otherwise
:class:`StaleRevision` and nothing changes); readers always see one complete revision.  The
board is thread-safe (one lock around each read or swap).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from zigai.planning.errors import StaleRevision, UnknownPlan
from zigai.planning.plan import Plan, PlanLimits, PlanStep

__all__ = ["PlanBoard"]


class PlanBoard:
    """The visible revision of each plan, keyed by plan id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._plans: dict[str, Plan] = {}

    def create(self, plan_id: str, steps: Sequence[PlanStep], *, limits: PlanLimits | None = None) -> Plan:
        """Validate and publish revision 1; :class:`StaleRevision` when the id is already in use."""
        plan = Plan.create(plan_id, steps, limits=limits)
        with self._lock:
            current = self._plans.get(plan_id)
            if current is not None:
                raise StaleRevision(f"plan {plan_id!r} already exists at revision {current.revision}",
                                    expected=0, actual=current.revision)
            self._plans[plan_id] = plan
        return plan

    def current(self, plan_id: str) -> Plan:
        with self._lock:
            plan = self._plans.get(plan_id)
        if plan is None:
            raise UnknownPlan(f"no plan {plan_id!r} on this board", plan_id=plan_id)
        return plan

    def revise(self, plan_id: str, steps: Sequence[PlanStep], *, expected_revision: int) -> Plan:
        """Publish the next revision when ``expected_revision`` is still the visible one."""
        base = self.current(plan_id)
        if base.revision != expected_revision:
            raise _stale(plan_id, expected_revision, base.revision)
        candidate = base.revise(steps)  # validated outside the lock; invisible until the swap
        with self._lock:
            visible = self._plans[plan_id]
            if visible is not base:  # another writer published while this revision was validated
                raise _stale(plan_id, expected_revision, visible.revision)
            self._plans[plan_id] = candidate
        return candidate

    def plan_ids(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._plans)


def _stale(plan_id: str, expected: int, actual: int) -> StaleRevision:
    return StaleRevision(f"plan {plan_id!r} is at revision {actual}, not {expected}; re-read it and "
                         "revise again", expected=expected, actual=actual)
