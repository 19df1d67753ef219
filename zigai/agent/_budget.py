"""Applying a :class:`~zigai.context_budget.ContextBudget` to one prepared model request.

Runs in ``prepare_request`` after history processors and step toolsets, before the
``request_start`` hooks: measure, and on the first crossed boundary either raise its named
error or — when the budget has an ``on_overflow`` hook — call it once, measure the compacted
provider view once more and raise if it still does not fit.  Only the request's messages are
replaced; the run's canonical history is never touched.  The estimator and the overflow hook
are raced against the run control like every application callback.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from zigai.agent.errors import InvalidAgentConfiguration
from zigai.context_budget import ContextBudget, ContextOverflow, Measurement, measure
from zigai.messages import RequestMessage, ResponseMessage
from zigai.tool.race import call_bounded

if TYPE_CHECKING:
    from zigai.agent._core import RunCore
    from zigai.model import ModelRequest

__all__ = ["apply_budget"]


def _measure(run: RunCore, budget: ContextBudget, request: ModelRequest) -> Measurement:
    def raced(estimator: Any, current: Any, usage: Any) -> Any:
        return call_bounded(estimator, current, usage, control=run.control, what="a token estimator")

    return measure(request, budget, raced)


def apply_budget(run: RunCore, budget: ContextBudget, request: ModelRequest) -> ModelRequest:
    """``request`` when it fits, else its compacted copy; raise the boundary's error otherwise."""
    measurement = _measure(run, budget, request)
    error = budget.check(measurement)
    if error is None:
        return request
    hook = budget.on_overflow
    if hook is None:
        raise error
    overflow = ContextOverflow(measurement, error.boundary, request)  # type: ignore[arg-type]
    view = call_bounded(hook, overflow, control=run.control, what="ContextBudget.on_overflow")
    if view is None:
        raise error
    messages = tuple(view)
    if not messages or not all(isinstance(m, (RequestMessage, ResponseMessage)) for m in messages):
        raise InvalidAgentConfiguration(
            "ContextBudget.on_overflow must return a non-empty sequence of Message values "
            "(or None when it cannot compact)"
        )
    compacted = replace(request, messages=messages)
    again = budget.check(_measure(run, budget, compacted))
    if again is not None:
        raise again
    return compacted
