"""What callbacks see: :class:`StepContext` for steps and decisions, :class:`BranchContext`
for fork callbacks.  Both are frozen; the state they carry is the application's own object."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from zigai.control import RunControl

__all__ = ["StepContext", "BranchContext"]

S = TypeVar("S")
D = TypeVar("D")


@dataclass(frozen=True, slots=True)
class StepContext(Generic[S, D]):
    """State, dependencies, run control and the callback's position in the run.

    ``step`` is the completed-step ordinal of this visit (0 for the first callback), so
    ``(node_index, step)`` identifies one visit even in a cycle.
    """

    state: S
    deps: D
    control: RunControl
    run_id: str
    node_index: int
    node_name: str
    step: int


@dataclass(frozen=True, slots=True)
class BranchContext(Generic[S, D]):
    """A fork callback's context: the step's context plus its item and branch position.

    ``control`` carries the run deadline and the *fork's* token: it is cancelled when a
    sibling fails or the run is cancelled, so long branches should poll it.
    """

    state: S
    deps: D
    control: RunControl
    run_id: str
    node_index: int
    node_name: str
    step: int
    item_index: int
    branch_index: int
