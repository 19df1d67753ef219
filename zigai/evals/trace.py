"""Trace evaluators: judge a case by the telemetry spans its agent run exported.

Invariants:

* no second trace model: spans are :class:`zigai.telemetry.Span` values, the same shape
  production exporters receive;
* per case run, the agent's :class:`~zigai.telemetry.Telemetry` hook is replaced by a copy
  whose exporter is a :class:`SpanTee`: every finished span is deep-copied into the case's
  result *before* the original span is forwarded to the application's exporter; span starts
  and metric points are forwarded unchanged; concurrent cases never see each other's spans;
* a dataset with trace evaluators over a task that is not an Agent with a ``Telemetry``
  hook fails with :class:`TraceTelemetryMissing` before any case runs;
* trace evaluators run after the task completes, with the ordinary :class:`EvalContext`
  and the owned span tuple (in the order the spans ended).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from typing import Any

from zigai.agent import Agent
from zigai.evals.errors import InvalidEvaluator, TraceTelemetryMissing
from zigai.evals.evaluators import EvalContext, Grade
from zigai.telemetry import Exporter, MetricPoint, Span, SpanEvent, Telemetry

__all__ = ["TraceEvaluator", "TraceCheck", "SpanTee", "copy_span", "teed_agent", "check_traceable"]


class TraceEvaluator:
    """Base of every trace evaluator: a unique ``name`` and :meth:`evaluate`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidEvaluator(f"a trace evaluator name must be a non-empty str, got {name!r}")
        self.name = name

    def evaluate(self, context: EvalContext, spans: tuple[Span, ...]) -> bool | int | float | Grade:
        raise NotImplementedError  # pragma: no cover - abstract

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class TraceCheck(TraceEvaluator):
    """A trace evaluator from ``function(context, spans) -> bool | number | Grade``."""

    __slots__ = ("_function",)

    def __init__(
        self, name: str, function: Callable[[EvalContext, tuple[Span, ...]], bool | int | float | Grade]
    ) -> None:
        super().__init__(name)
        if not callable(function):
            raise InvalidEvaluator(f"TraceCheck {name!r} needs a callable, got {type(function).__name__}")
        self._function = function

    def evaluate(self, context: EvalContext, spans: tuple[Span, ...]) -> bool | int | float | Grade:
        return self._function(context, spans)


def copy_span(span: Span) -> Span:
    """A deep copy of ``span``: fresh attribute mappings and events (values are immutable)."""
    events = tuple(SpanEvent(event.name, event.time_ns, dict(event.attributes)) for event in span.events)
    return dataclasses.replace(span, attributes=dict(span.attributes), events=events)


class SpanTee:
    """An exporter that keeps a copy of every finished span, then forwards to ``target``."""

    def __init__(self, target: Exporter) -> None:
        self._target = target
        self._lock = threading.Lock()
        self._spans: list[Span] = []

    def on_start(self, span: Span) -> None:
        self._target.on_start(span)

    def on_end(self, span: Span) -> None:
        owned = copy_span(span)
        with self._lock:
            self._spans.append(owned)
        self._target.on_end(span)

    def on_metric(self, point: MetricPoint) -> None:
        self._target.on_metric(point)

    @property
    def spans(self) -> tuple[Span, ...]:
        with self._lock:
            return tuple(self._spans)


def _telemetry_hooks(agent: Agent) -> list[Telemetry]:
    return [hook for hook in agent.hooks if isinstance(hook, Telemetry)]


def check_traceable(task: Any, trace_evaluators: Sequence[TraceEvaluator]) -> None:
    """Fail before execution when trace evaluators cannot see the task's telemetry."""
    if not trace_evaluators:
        return
    if not isinstance(task, Agent):
        raise TraceTelemetryMissing(
            f"trace evaluators need an Agent task, got {type(task).__name__}; pass the Agent itself"
        )
    found = _telemetry_hooks(task)
    if len(found) != 1:
        raise TraceTelemetryMissing(
            f"trace evaluators need exactly one zigai.telemetry.Telemetry hook on the agent, found "
            f"{len(found)}; build it with Agent(..., hooks=[Telemetry(exporter)])"
        )


def teed_agent(agent: Agent) -> tuple[Agent, SpanTee]:
    """A copy of ``agent`` whose Telemetry hook exports through a fresh :class:`SpanTee`."""
    (original,) = _telemetry_hooks(agent)
    tee = SpanTee(original.exporter)
    clone = Telemetry(
        tee, content=original.content, price_table=original.price_table,
        reported_cost=original.reported_cost, parent=original.parent, fail_closed=original.fail_closed,
    )
    hooks = tuple(clone if hook is original else hook for hook in agent.hooks)
    return dataclasses.replace(agent, hooks=hooks), tee
