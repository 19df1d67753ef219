"""Graph: the validated routing table plus its entry points: ``start``, ``run``,
``snapshot``, ``restore``, ``view`` and ``mermaid``.

The table itself (nodes, routes, digest) lives in :mod:`zigai.graph.definition`; this
module only adds the two ways to execute it, so the run state machine can depend on the
table without depending on its entry points.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, TypeVar

from zigai.graph.definition import GraphDefinition
from zigai.graph.mermaid import render_mermaid
from zigai.graph.persist import SnapshotCodec, restore_run, snapshot_run
from zigai.graph.run import GraphEvent, GraphResult, Run
from zigai.graph.view import GraphView, graph_view

if TYPE_CHECKING:
    from zigai.control import RunControl

__all__ = ["Graph"]

S = TypeVar("S")
D = TypeVar("D")
I = TypeVar("I")  # noqa: E741 - the spec's Input type parameter
V = TypeVar("V")
O = TypeVar("O")  # noqa: E741 - the spec's Output type parameter


class Graph(GraphDefinition[S, D, I, V, O]):
    """An immutable, validated workflow: the routing table and its run entry points."""

    __slots__ = ()

    # -- runs ------------------------------------------------------------------------------------

    def start(
        self,
        input: I,
        *,
        state: S,
        deps: D | None = None,
        max_steps: int | None = None,
        control: RunControl | None = None,
        observer: Callable[[GraphEvent], None] | None = None,
        run_id: str | None = None,
    ) -> Run[S, D, I, V, O]:
        """A fresh run positioned at the entry node; drive it with ``Run.next()``."""
        return Run.fresh(
            self, input, state=state, deps=deps, max_steps=max_steps, control=control,
            observer=observer, run_id=run_id,
        )

    def run(
        self,
        input: I,
        *,
        state: S,
        deps: D | None = None,
        max_steps: int | None = None,
        control: RunControl | None = None,
        observer: Callable[[GraphEvent], None] | None = None,
        run_id: str | None = None,
    ) -> GraphResult[S, O]:
        """Start a run and call ``next()`` until it finishes; return its result."""
        run = self.start(
            input, state=state, deps=deps, max_steps=max_steps, control=control,
            observer=observer, run_id=run_id,
        )
        return run.run_to_end()


    # -- persistence (zigai.graph.persist) -----------------------------------------------------

    def snapshot(self, run: Run[S, D, I, V, O], codec: SnapshotCodec[S, V] | None = None) -> str:
        """The JSON envelope of ``run`` at its settled frontier (see :mod:`zigai.graph.persist`)."""
        if run.graph is not self:
            raise ValueError("this run belongs to another graph; snapshot it with its own graph")
        return snapshot_run(run, codec if codec is not None else SnapshotCodec())

    def restore(
        self,
        text: str | bytes,
        codec: SnapshotCodec[S, V] | None = None,
        *,
        deps: D | None = None,
        max_steps: int | None = None,
        control: RunControl | None = None,
        observer: Callable[[GraphEvent], None] | None = None,
    ) -> Run[S, D, I, V, O]:
        """Check a snapshot against this definition and rebuild its run at the saved frontier.

        Dependencies, the step limit, the control and the observer are process-local and
        supplied again here.
        """
        return restore_run(
            self, text, codec if codec is not None else SnapshotCodec(), deps=deps,
            max_steps=max_steps, control=control, observer=observer,
        )

    # -- visualization (zigai.graph.view, zigai.graph.mermaid) ----------------------------------

    def view(self) -> GraphView:
        """The versioned visualization view (stable node/edge arrays, boundaries, digest)."""
        return graph_view(self)

    def mermaid(self, *, direction: Literal["TD", "LR"] = "TD", max_bytes: int | None = None) -> str:
        """Mermaid flowchart text of :meth:`view`, within ``GraphLimits.max_visualization_bytes``."""
        return render_mermaid(self.view(), direction=direction, max_bytes=max_bytes)
