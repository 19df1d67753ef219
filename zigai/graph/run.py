"""Run: the pull-based state machine of one graph execution.

States::

    ready     ``upcoming`` is a node; ``next()`` runs it
    finished  the last transition reached END; ``output`` is set, ``next()`` raises
              GraphRunFinished
    failed    a terminal error is latched; every later ``next()`` raises it again

``next()`` performs exactly one callback (a step, a decision or a whole fork/join) and one
route transition.  The transition commits -- value, position and completed-step count
change together -- only after the callback returned, its value passed the declared type,
and the route resolved; otherwise nothing moves and the error is latched.  The graph
state object is application data that callbacks may mutate in place; it is not rolled back.

Between two ``next()`` calls the run is *settled*: no callback or fork branch is running,
so that is where :meth:`Run.snapshot` (``zigai.graph.persist``) may capture it.

Lifecycle events (:class:`GraphEvent`) are delivered synchronously to the optional
observer, in order: ``run_start``, then per step ``node_start`` and ``node_end`` (or
``node_error``), then ``run_end`` or ``run_error``.  They are graph events, not agent
hooks.  An observer that raises fails the run like a callback would.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from zigai.control import RunControl
from zigai.graph.context import StepContext
from zigai.graph.definition import END_INDEX, NodeInfo
from zigai.graph.errors import (
    GraphRunFinished,
    InvalidGraphInput,
    StepLimitExceeded,
    UnmatchedRoute,
)
from zigai.graph.fork import run_fork
from zigai.graph.nodes import Decision, Fork, Step
from zigai.graph.types import check_value

if TYPE_CHECKING:
    from zigai.graph.definition import GraphDefinition

__all__ = ["Run", "GraphEvent", "GraphResult", "GraphEventKind", "RunStatus"]

S = TypeVar("S")
D = TypeVar("D")
I = TypeVar("I")  # noqa: E741 - the spec's Input type parameter
V = TypeVar("V")
O = TypeVar("O")  # noqa: E741 - the spec's Output type parameter

RunStatus = Literal["ready", "finished", "failed"]
GraphEventKind = Literal["run_start", "node_start", "node_end", "node_error", "run_end", "run_error"]

_MAX_RUN_ID_CHARS = 256


@dataclass(frozen=True, slots=True)
class GraphEvent:
    """One synchronous lifecycle observation (see module docstring for the order)."""

    kind: GraphEventKind
    run_id: str
    step: int
    node_index: int | None = None
    node_name: str | None = None
    branch: str | None = None
    target: str | None = None
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class GraphResult(Generic[S, O]):
    """A finished run: its output, the final state and how many transitions it completed."""

    output: O
    state: S
    steps: int
    run_id: str


def _step_ceiling(graph: GraphDefinition[Any, Any, Any, Any, Any], max_steps: int | None) -> int:
    ceiling = graph.limits.max_steps
    if max_steps is None:
        return ceiling
    if type(max_steps) is not int or max_steps < 1:
        raise InvalidGraphInput(f"max_steps must be None or an int >= 1, got {max_steps!r}")
    return min(ceiling, max_steps)


class Run(Generic[S, D, I, V, O]):
    """One execution of a :class:`~zigai.graph.Graph` (see module docstring)."""

    __slots__ = (
        "_graph", "_state", "_deps", "_value", "_position", "_completed", "_max_steps",
        "_control", "_observer", "_run_id", "_status", "_error", "_output", "_started",
    )

    def __init__(
        self,
        graph: GraphDefinition[S, D, I, V, O],
        *,
        state: S,
        deps: D,
        value: V,
        position: int,
        completed: int,
        max_steps: int | None,
        control: RunControl | None,
        observer: Callable[[GraphEvent], None] | None,
        run_id: str | None,
    ) -> None:
        if control is not None and not isinstance(control, RunControl):
            raise InvalidGraphInput("control must be a zigai.control.RunControl")
        if observer is not None and not callable(observer):
            raise InvalidGraphInput("observer must be callable")
        if run_id is not None and (not isinstance(run_id, str) or not run_id or len(run_id) > _MAX_RUN_ID_CHARS):
            raise InvalidGraphInput(f"run_id must be a non-empty string of <= {_MAX_RUN_ID_CHARS} characters")
        self._graph = graph
        self._max_steps = _step_ceiling(graph, max_steps)
        self._state = check_value(graph.types, "state", state)
        self._deps = check_value(graph.types, "deps", deps)
        self._value = value
        self._position = position
        self._completed = completed
        self._control = control if control is not None else RunControl()
        self._observer = observer
        self._run_id = run_id if run_id is not None else uuid.uuid4().hex
        self._status: RunStatus = "ready"
        self._error: BaseException | None = None
        self._output: Any = None
        self._started = False

    @classmethod
    def fresh(
        cls, graph: GraphDefinition[S, D, I, V, O], input: I, *, state: S, deps: D | None,
        max_steps: int | None, control: RunControl | None,
        observer: Callable[[GraphEvent], None] | None, run_id: str | None,
    ) -> Run[S, D, I, V, O]:
        types = graph.types
        check_value(types, "input", input)
        value = check_value(types, "value", graph._begin(input))
        return cls(
            graph, state=state, deps=deps, value=value, position=graph.entry.index, completed=0,  # type: ignore[arg-type]
            max_steps=max_steps, control=control, observer=observer, run_id=run_id,
        )

    # -- observation -------------------------------------------------------------------------

    @property
    def graph(self) -> GraphDefinition[S, D, I, V, O]:
        return self._graph

    @property
    def status(self) -> RunStatus:
        return self._status

    @property
    def done(self) -> bool:
        """True once the run finished or failed."""
        return self._status != "ready"

    @property
    def upcoming(self) -> NodeInfo | None:
        """The node the next ``next()`` will run (None once the run is done)."""
        return self._graph.nodes[self._position] if self._status == "ready" else None

    @property
    def completed_steps(self) -> int:
        return self._completed

    @property
    def max_steps(self) -> int:
        """The effective step ceiling: the graph's, tightened by the run's."""
        return self._max_steps

    @property
    def state(self) -> S:
        return self._state

    @property
    def deps(self) -> D:
        return self._deps

    @property
    def value(self) -> V:
        """The current intermediate value (the last committed one)."""
        return self._value

    @property
    def control(self) -> RunControl:
        return self._control

    @property
    def run_id(self) -> str:
        return self._run_id

    @property
    def error(self) -> BaseException | None:
        """The latched terminal failure, if the run failed."""
        return self._error

    @property
    def output(self) -> O:
        """The run's output; raises GraphRunFinished-style errors until the run finished."""
        if self._status == "failed":
            assert self._error is not None
            raise self._error
        if self._status != "finished":
            raise GraphRunFinished("the run has not finished yet; call next() until done")
        return self._output

    def result(self) -> GraphResult[S, O]:
        return GraphResult(self.output, self._state, self._completed, self._run_id)

    # -- the state machine -------------------------------------------------------------------

    def _emit(self, event: GraphEvent) -> None:
        if self._observer is not None:
            self._observer(event)

    def _event(self, kind: GraphEventKind, node: NodeInfo | None = None, *, step: int | None = None,
               **fields: Any) -> GraphEvent:
        return GraphEvent(
            kind, self._run_id, self._completed if step is None else step,
            node.index if node is not None else None, node.name if node is not None else None, **fields,
        )

    def _fail(self, error: BaseException, node: NodeInfo | None, branch: str | None = None) -> BaseException:
        self._status = "failed"
        self._error = error
        try:
            if node is not None:
                self._emit(self._event("node_error", node, branch=branch, error=error))
            self._emit(self._event("run_error", node, error=error))
        except Exception as observer_error:  # the original failure stays the reported one
            error.add_note(f"graph observer also failed: {observer_error!r}")
        return error

    def next(self) -> NodeInfo | None:
        """Run the upcoming node's callback and its route transition; return the new upcoming
        node (None when the run finished).  Failures latch and are raised again on every call."""
        if self._status == "failed":
            assert self._error is not None
            raise self._error
        if self._status == "finished":
            raise GraphRunFinished("the run already finished; read output or start a new run")
        node = self._graph.nodes[self._position]
        try:
            if not self._started:
                self._started = True
                self._emit(self._event("run_start"))
            if self._completed >= self._max_steps:
                raise StepLimitExceeded(
                    f"run {self._run_id} completed {self._completed} steps without finishing "
                    f"(step limit {self._max_steps}); the graph may cycle forever",
                    limit=self._max_steps,
                )
            self._control.check()
            self._emit(self._event("node_start", node))
        except Exception as error:
            raise self._fail(error, None) from None
        branch: str | None = None
        try:
            branch, value = self._call(node)
            check_value(self._graph.types, "value", value, node.name)
            target = self._resolve(node, branch)
            output = None
            if target == END_INDEX:
                output = check_value(self._graph.types, "output", self._graph._end(value), node.name)
        except Exception as error:
            raise self._fail(error, node, branch) from None
        # commit: position, value and count move together
        self._value = value
        self._completed += 1
        target_name = None if target == END_INDEX else self._graph.nodes[target].name
        if target == END_INDEX:
            self._status = "finished"
            self._output = output
        else:
            self._position = target
        try:
            self._emit(self._event("node_end", node, step=self._completed - 1, branch=branch, target=target_name))
            if target == END_INDEX:
                self._emit(self._event("run_end"))
        except Exception as error:
            raise self._fail(error, None) from None
        return self.upcoming

    def run_to_end(self) -> GraphResult[S, O]:
        """Call ``next()`` until the run finishes; return its result (failures raise)."""
        while self._status == "ready":
            self.next()
        return self.result()

    def _context(self, node: NodeInfo) -> StepContext[S, D]:
        return StepContext(
            self._state, self._deps, self._control, self._run_id, node.index, node.name, self._completed
        )

    def _call(self, node: NodeInfo) -> tuple[str | None, Any]:
        definition = self._graph.definition(node.index)
        context = self._context(node)
        if isinstance(definition, Step):
            return None, definition.run(context, self._value)
        if isinstance(definition, Decision):
            returned = definition.decide(context, self._value)
            if not isinstance(returned, tuple) or len(returned) != 2 or not isinstance(returned[0], str):
                raise UnmatchedRoute(
                    f"decision {node.name!r} must return (branch_name, value), got {returned!r}",
                    node=node.name,
                )
            return returned
        assert isinstance(definition, Fork)
        return None, run_fork(definition, context, self._value, self._graph.limits, self._graph.types)

    def _resolve(self, node: NodeInfo, branch: str | None) -> int:
        for route in self._graph.routes_of(node):
            if route.branch == branch:
                return route.target
        known = [r.branch for r in self._graph.routes_of(node)]
        raise UnmatchedRoute(
            f"decision {node.name!r} chose branch {branch!r}, which it did not register; "
            f"registered branches: {known}",
            branch=branch or "", node=node.name,
        )

    def __repr__(self) -> str:
        upcoming = self.upcoming
        return (
            f"Run(run_id={self._run_id!r}, status={self._status!r}, steps={self._completed}, "
            f"upcoming={upcoming.name if upcoming else None!r})"
        )
