"""AgentStep: one agent run per graph visit (see the package docstring for the invariants).

Order inside one visit::

    prepare(ctx, value) -> RunOptions      node-scoped options (a str is taken as the prompt)
    options completed                      deps, cancellation, timeout, correlation, usage tap
    observer(agent_start)
    agent run                              run / run_typed / run_stream_events
        stream_sink(event); observer(agent_event)     for every event, in agent order
    adapt(ctx, result) -> value            while the owned result is still open
    observer(agent_end)
    result.close()                         then the graph commits the transition

On failure: ``observer(agent_error)`` with the error and the usage captured by a temporary
lifecycle hook, the result (if any) is closed, and the error propagates unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from zigai.agent import Agent, Result, RunOptions, TypedResult
from zigai.durable.ids import StepScope
from zigai.errors import GraphError
from zigai.graph import BranchContext
from zigai.hooks import Correlation
from zigai.usage import RunUsage

if TYPE_CHECKING:
    from zigai.agent.events import AgentStreamEvent
    from zigai.graph import StepContext
    from zigai.hooks import Hook, HookEvent

__all__ = ["AgentStep", "AgentNodeEvent", "InvalidAgentStep", "durable_scope"]

AgentNodeEventKind = Literal["agent_start", "agent_event", "agent_end", "agent_error"]


class InvalidAgentStep(GraphError):
    """An AgentStep was configured or prepared in a way the bridge cannot honour."""


@dataclass(frozen=True, slots=True)
class AgentNodeEvent:
    """What the node observer sees; ``event`` for stream events, ``usage`` at the end."""

    kind: AgentNodeEventKind
    run_id: str
    node_index: int
    node_name: str
    step: int
    event: AgentStreamEvent | None = None
    usage: RunUsage | None = None
    error: BaseException | None = None


def durable_scope(ctx: StepContext[Any, Any]) -> StepScope:
    """The visit's stable node index and completed-step ordinal as a durable
    :class:`~zigai.durable.StepScope` (``DurableAgent(..., scope=durable_scope(ctx))``): every
    operation step id then carries ``n<node>.s<step>``, so separate nodes and repeated visits
    of a cyclic node never collide."""
    return StepScope(ctx.node_index, ctx.step)


def _default_prepare(ctx: StepContext[Any, Any], value: Any) -> RunOptions:
    if not isinstance(value, str):
        raise InvalidAgentStep(
            f"node {ctx.node_name!r}: the value is a {type(value).__name__}, not a prompt; "
            "give AgentStep a prepare(ctx, value) -> RunOptions"
        )
    return RunOptions(prompt=value)


def _default_adapt(ctx: StepContext[Any, Any], result: Result) -> Any:
    return result.value if isinstance(result, TypedResult) else result.output


class _UsageTap:
    """A temporary lifecycle hook: the usage of the run so far, even when it fails."""

    def __init__(self) -> None:
        self.usage = RunUsage()

    def __call__(self, event: HookEvent) -> None:
        usage = getattr(event, "usage", None)
        if event.kind in ("run_end", "run_error") and isinstance(usage, RunUsage):
            self.usage = usage


class AgentStep:
    """A graph step callback that runs ``agent`` once per visit (see module docstring).

    ``prepare(ctx, value)`` returns the visit's :class:`RunOptions` (or a prompt string);
    ``adapt(ctx, result)`` turns the open result into the graph value (default: the output,
    or the typed value with ``output_type``).  ``stream_sink`` selects the streaming path.
    ``timeout_ms`` tightens the agent deadline for this node; ``trace_parent`` is the W3C
    traceparent the agent run (and its telemetry span) nests under.
    """

    __slots__ = ("_agent", "_prepare", "_adapt", "_output_type", "_mode", "_sink", "_observer",
                 "_timeout_ms", "_trace_parent")

    def __init__(
        self,
        agent: Agent,
        *,
        prepare: Callable[[StepContext[Any, Any], Any], RunOptions | str] | None = None,
        adapt: Callable[[StepContext[Any, Any], Result], Any] | None = None,
        output_type: Any = None,
        mode: Literal["native", "tool", "prompted"] | None = None,
        stream_sink: Callable[[AgentStreamEvent], None] | None = None,
        observer: Callable[[AgentNodeEvent], None] | None = None,
        timeout_ms: int | None = None,
        trace_parent: str | None = None,
    ) -> None:
        if not isinstance(agent, Agent):
            raise InvalidAgentStep(f"AgentStep needs a zigai.Agent, got {type(agent).__name__}")
        for what, fn in (("prepare", prepare), ("adapt", adapt), ("stream_sink", stream_sink),
                         ("observer", observer)):
            if fn is not None and not callable(fn):
                raise InvalidAgentStep(f"AgentStep {what} must be callable")
        if timeout_ms is not None and (type(timeout_ms) is not int or timeout_ms < 0):
            raise InvalidAgentStep(f"AgentStep timeout_ms must be None or an int >= 0, got {timeout_ms!r}")
        if trace_parent is not None:
            Correlation(trace_parent=trace_parent)  # validates it once, here
        self._agent = agent
        self._prepare = prepare or _default_prepare
        self._adapt = adapt or _default_adapt
        self._output_type = output_type
        self._mode = mode
        self._sink = stream_sink
        self._observer = observer
        self._timeout_ms = timeout_ms
        self._trace_parent = trace_parent

    @property
    def agent(self) -> Agent:
        return self._agent

    def _observe(self, ctx: StepContext[Any, Any], kind: AgentNodeEventKind, **fields: Any) -> None:
        if self._observer is not None:
            self._observer(AgentNodeEvent(kind, ctx.run_id, ctx.node_index, ctx.node_name, ctx.step, **fields))

    def options_for(self, ctx: StepContext[Any, Any], value: Any, hooks: Sequence[Hook] = ()) -> RunOptions:
        """The complete options of this visit (prepared, then tightened and correlated)."""
        prepared = self._prepare(ctx, value)
        if isinstance(prepared, str):
            prepared = RunOptions(prompt=prepared)
        if not isinstance(prepared, RunOptions):
            raise InvalidAgentStep(
                f"node {ctx.node_name!r}: prepare must return RunOptions or a prompt str, "
                f"got {type(prepared).__name__}"
            )
        token = ctx.control.token
        if prepared.cancellation is not None and prepared.cancellation is not token:
            raise InvalidAgentStep(
                f"node {ctx.node_name!r}: prepare set its own cancellation token; the node uses the "
                "graph run's token (cancel the graph run's RunControl instead)"
            )
        return replace(
            prepared,
            deps=ctx.deps if prepared.deps is None else prepared.deps,
            cancellation=token,
            timeout_ms=self._tightest_timeout(ctx, prepared.timeout_ms),
            correlation=self._correlation(ctx, prepared.correlation),
            hooks=(*prepared.hooks, *hooks),
        )

    def _tightest_timeout(self, ctx: StepContext[Any, Any], prepared: int | None) -> int | None:
        candidates = [t for t in (prepared, self._timeout_ms) if t is not None]
        remaining = ctx.control.remaining()
        if remaining is not None:
            candidates.append(max(0, math.floor(remaining * 1000)))
        return min(candidates) if candidates else None

    def _correlation(self, ctx: StepContext[Any, Any], prepared: Correlation | None) -> Correlation:
        trace_parent = self._trace_parent
        if prepared is not None:
            for name, ours in (("run_id", ctx.run_id), ("node_index", ctx.node_index), ("node_name", ctx.node_name)):
                theirs = getattr(prepared, name)
                if theirs is not None and theirs != ours:
                    raise InvalidAgentStep(
                        f"node {ctx.node_name!r}: prepared correlation {name}={theirs!r} contradicts the "
                        f"graph's {ours!r}; leave it unset and the bridge fills it in"
                    )
            trace_parent = prepared.trace_parent or trace_parent
        return Correlation(run_id=ctx.run_id, trace_parent=trace_parent, node_index=ctx.node_index,
                           node_name=ctx.node_name)

    def __call__(self, ctx: StepContext[Any, Any], value: Any) -> Any:
        if isinstance(ctx, BranchContext):
            raise InvalidAgentStep(
                f"fork {ctx.node_name!r}: an AgentStep is a graph step, not a fork branch callback; "
                "run agents in steps before or after the fork"
            )
        ctx.control.check()
        tap = _UsageTap()
        options = self.options_for(ctx, value, hooks=(tap,))
        self._observe(ctx, "agent_start")
        try:
            result = self._execute(ctx, options)
        except BaseException as error:
            self._report(ctx, error, tap.usage)
            raise
        with result:  # released before the graph commits the transition
            try:
                adapted = self._adapt(ctx, result)
                self._observe(ctx, "agent_end", usage=result.usage)
            except BaseException as error:
                self._report(ctx, error, result.usage)
                raise
        return adapted

    def _report(self, ctx: StepContext[Any, Any], error: BaseException, usage: RunUsage) -> None:
        try:
            self._observe(ctx, "agent_error", usage=usage, error=error)
        except Exception as observer_error:
            error.add_note(f"agent node observer also failed: {observer_error!r}")

    def _execute(self, ctx: StepContext[Any, Any], options: RunOptions) -> Result:
        agent = self._agent
        if self._sink is not None:
            sink = self._sink

            def deliver(event: AgentStreamEvent) -> None:
                sink(event)
                self._observe(ctx, "agent_event", event=event)
            return agent.run_stream_events(options=options, sink=deliver, output_type=self._output_type,
                                           mode=self._mode)
        if self._output_type is not None:
            return agent.run_typed(self._output_type, options=options, mode=self._mode)
        return agent.run(options=options)

    def __repr__(self) -> str:
        return f"AgentStep(agent={self._agent.name!r}, streaming={self._sink is not None})"
