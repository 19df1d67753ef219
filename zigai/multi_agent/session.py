"""Session: bounded identity, cumulative usage and lifecycle observation of agent runs.

A :class:`Session` starts nothing by itself.  Runs start through a :class:`~zigai.multi_agent.Scope`
(``session.scope(...)``) and every started run, whatever its kind, goes through
:meth:`Session._execute`, which is the only place that:

* checks the bounds before anything starts -- the depth (``max_depth``), the number of runs
  (``max_runs``) and the usage budgets (``max_requests``, ``max_total_tokens``) -- and
  tightens the child's ``RunLimits`` to what the budgets have left, so one run cannot pass
  them either (a child stopped there raises :class:`SessionBudgetExceeded`); a nested
  child's share is computed from the finished runs, so an ancestor still running is not
  counted until it ends;
* assigns the run index (0, 1, 2 ... in start order) and the deterministic correlation id
  ``<session id>/<run index>``;
* converts the scope's one absolute deadline into the remaining time, right before the
  child starts, and hands it the scope's cancellation token;
* taps the run with a temporary lifecycle hook, so a child that fails still contributes the
  usage it accumulated; a completed run contributes its canonical ``RunUsage`` instead, so
  nothing is counted twice;
* delivers :class:`SessionEvent` values (``run_start``, then ``run_end`` or ``run_error``)
  synchronously to the observer.

Sessions are single-threaded by contract: one tree of runs, driven from one thread at a time
(agent-as-tool delegations are sequential tools for that reason).  Run concurrent trees in
independent sessions so indices, identities and budget checks stay deterministic.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Literal

from zigai.agent import Agent, Result, RunLimits, RunOptions, UsageLimitExceeded
from zigai.hooks import Correlation
from zigai.multi_agent.context import Isolated, RunKind
from zigai.multi_agent.errors import (
    DelegationDepthExceeded,
    InvalidSession,
    SessionBudgetExceeded,
    SessionRunLimitExceeded,
)
from zigai.usage import RunUsage

if TYPE_CHECKING:
    from zigai.control import RunControl
    from zigai.hooks import HookEvent
    from zigai.multi_agent.scope import Scope

__all__ = ["Session", "SessionLimits", "SessionEvent", "RunRecord", "RunKind"]

SessionEventKind = Literal["run_start", "run_end", "run_error"]

_SESSION_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


@dataclass(frozen=True, slots=True)
class SessionLimits:
    """Bounds of one session; ``None`` budgets are unlimited.  Exactly-at-limit is allowed:
    ``max_depth=2`` admits depths 0, 1 and 2; ``max_runs=3`` admits three runs."""

    max_depth: int = 8
    max_runs: int = 256
    max_requests: int | None = None
    max_total_tokens: int | None = None

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            optional = item.name in ("max_requests", "max_total_tokens")
            if value is None and optional:
                continue
            if type(value) is not int or value < (0 if item.name != "max_runs" else 1):
                raise InvalidSession(f"SessionLimits.{item.name} must be an int >= "
                                     f"{0 if item.name != 'max_runs' else 1}{' or None' if optional else ''}, "
                                     f"got {value!r}")


@dataclass(frozen=True, slots=True)
class RunRecord:
    """What the session keeps about one started run (never its messages)."""

    index: int
    kind: RunKind
    depth: int
    target: str
    correlation_id: str
    parent: int | None
    usage: RunUsage
    ok: bool
    error: str | None = None


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """A synchronous lifecycle observation of one run of the session."""

    kind: SessionEventKind
    session_id: str
    run_index: int
    run_kind: RunKind
    depth: int
    target: str
    correlation_id: str
    parent: int | None
    usage: RunUsage | None = None
    error: BaseException | None = None


class _UsageTap:
    """The temporary lifecycle hook: the run's usage at its end, even when it failed."""

    def __init__(self) -> None:
        self.usage = RunUsage()

    def __call__(self, event: HookEvent) -> None:
        usage = getattr(event, "usage", None)
        if event.kind in ("run_end", "run_error") and isinstance(usage, RunUsage):
            self.usage = usage


def _target_name(agent: Agent) -> str:
    return agent.name or "agent"


class Session:
    """One tree of agent runs (see module docstring)."""

    __slots__ = ("_id", "_limits", "_observer", "_usage", "_records", "_active", "_lock")

    def __init__(self, session_id: str, *, limits: SessionLimits | None = None,
                 observer: Callable[[SessionEvent], None] | None = None) -> None:
        if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
            raise InvalidSession(
                f"session id must be 1..128 characters of [A-Za-z0-9_.:-], got {session_id!r}"
            )
        if limits is not None and not isinstance(limits, SessionLimits):
            raise InvalidSession("Session limits must be a SessionLimits")
        if observer is not None and not callable(observer):
            raise InvalidSession("Session observer must be callable")
        self._id = session_id
        self._limits = limits if limits is not None else SessionLimits()
        self._observer = observer
        self._usage = RunUsage()
        self._records: list[RunRecord] = []
        self._active: list[int] = []
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        return self._id

    @property
    def limits(self) -> SessionLimits:
        return self._limits

    @property
    def usage(self) -> RunUsage:
        """Cumulative usage of every run the session started (failed runs included)."""
        return self._usage

    @property
    def records(self) -> tuple[RunRecord, ...]:
        return tuple(self._records)

    def scope(self, *, deps: Any = None, history: Any = None, control: RunControl | None = None,
              trace_parent: str | None = None) -> Scope:
        """The root scope (depth 0).  ``history`` is a ``Shared``/``Isolated`` context choice."""
        from zigai.multi_agent.scope import Scope

        return Scope(self, depth=0, deps=deps, context=history if history is not None else Isolated(),
                     control=control, trace_parent=trace_parent)

    # -- the one execution path ------------------------------------------------------------------

    def _check_bounds(self, depth: int) -> None:
        limits = self._limits
        if depth > limits.max_depth:
            raise DelegationDepthExceeded(
                f"session {self._id}: a run at depth {depth} exceeds SessionLimits.max_depth={limits.max_depth}",
                depth=depth, limit=limits.max_depth,
            )
        if len(self._records) + len(self._active) >= limits.max_runs:
            raise SessionRunLimitExceeded(
                f"session {self._id} already started {limits.max_runs} runs (SessionLimits.max_runs)"
            )
        if limits.max_requests is not None and self._usage.requests >= limits.max_requests:
            raise SessionBudgetExceeded(
                f"session {self._id} used {self._usage.requests} requests; the budget is {limits.max_requests}"
            )
        if limits.max_total_tokens is not None and self._usage.total_tokens >= limits.max_total_tokens:
            raise SessionBudgetExceeded(
                f"session {self._id} used {self._usage.total_tokens} tokens; the budget is {limits.max_total_tokens}"
            )

    def _within_budget(self, limits: RunLimits) -> tuple[RunLimits, dict[str, int]]:
        """The child's limits, tightened to what the session budgets have left (finished runs
        counted), and the fields that were tightened."""
        budgets = self._limits
        tightened: dict[str, int] = {}
        for name, budget, used in (("max_requests", budgets.max_requests, self._usage.requests),
                                   ("max_total_tokens", budgets.max_total_tokens, self._usage.total_tokens)):
            own = getattr(limits, name)
            if budget is not None and (own is None or own > budget - used):
                tightened[name] = budget - used
        return (replace(limits, **tightened) if tightened else limits), tightened

    def _emit(self, event: SessionEvent) -> None:
        if self._observer is not None:
            self._observer(event)

    def _execute(
        self, *, agent: Agent, kind: RunKind, depth: int, options: RunOptions, control: RunControl | None,
        trace_parent: str | None, output_type: Any, start: Callable[[Agent, RunOptions, Any], Result],
    ) -> Result:
        if not isinstance(agent, Agent):
            raise InvalidSession(f"a session runs zigai.Agent values, got {type(agent).__name__}")
        with self._lock:
            self._check_bounds(depth)
            if control is not None:
                control.check()
            limits, tightened = self._within_budget(options.limits if options.limits is not None else agent.limits)
            index = len(self._records) + len(self._active)
            parent = self._active[-1] if self._active else None
            self._active.append(index)
        target = _target_name(agent)
        correlation_id = f"{self._id}/{index}"
        tap = _UsageTap()
        timeout_ms = options.timeout_ms
        if control is not None and control.deadline is not None:
            remaining = math.floor((control.remaining() or 0.0) * 1000)  # converted right before start
            timeout_ms = remaining if timeout_ms is None else min(timeout_ms, remaining)
        options = replace(
            options,
            limits=limits,
            timeout_ms=timeout_ms,
            cancellation=control.token if control is not None else options.cancellation,
            correlation=Correlation(run_id=correlation_id, trace_parent=trace_parent, node_index=index,
                                    node_name=target),
            hooks=(*options.hooks, tap),
        )
        base = SessionEvent("run_start", self._id, index, kind, depth, target, correlation_id, parent)
        try:
            self._emit(base)
            result = start(agent, options, output_type)
        except BaseException as error:
            self._finish(base, tap.usage, error)
            if isinstance(error, UsageLimitExceeded) and tightened.get(error.limit_name or "") == error.limit:
                raise SessionBudgetExceeded(
                    f"session {self._id}: run {index} stopped at the session budget "
                    f"(SessionLimits.{error.limit_name}): {error}"
                ) from error
            raise
        try:
            self._finish(base, result.usage, None)
        except BaseException:
            result.close()  # the observer refused the run_end: nothing is handed out
            raise
        return result

    def _finish(self, base: SessionEvent, usage: RunUsage, error: BaseException | None) -> None:
        with self._lock:
            self._active.remove(base.run_index)
            self._usage = self._usage + usage
            self._records.append(RunRecord(
                base.run_index, base.run_kind, base.depth, base.target, base.correlation_id, base.parent,
                usage, error is None, None if error is None else type(error).__name__,
            ))
            self._records.sort(key=lambda record: record.index)
        if error is None:
            self._emit(replace(base, kind="run_end", usage=usage))
            return
        try:
            self._emit(replace(base, kind="run_error", usage=usage, error=error))
        except Exception as observer_error:
            error.add_note(f"session observer also failed: {observer_error!r}")

    def __repr__(self) -> str:
        return f"Session(id={self._id!r}, runs={len(self._records)}, requests={self._usage.requests})"
