"""The ``model_request`` step executor: one logical model request, buffered or streamed.

:func:`request_buffered` calls ``model.request`` once, or through the agent's retry policy
(a fresh per-attempt deadline and the logical request's idempotency key on every attempt).
:class:`StreamingRequest` is one open model stream of a run, opened lazily and pulled one
event per ``step()``:

1. opening pulls the stream's first event under the retry policy with a
   :class:`~zigai.retry.StreamRetryGuard`; the state machine marks the guard delivered right
   before the first event reaches the application, so once visible output exists a failed
   request is never retried;
2. the state machine forwards one raw model event per step, then the derived
   ``partial_output`` (:mod:`zigai.agent._partial`);
3. the step that finds the stream exhausted builds the ``ResponseMessage`` from the stream's
   accumulator and continues exactly like the buffered path.

Both paths share one :class:`_Attempts` tracker: it makes the logical request's idempotency
key (once, when the model profile names a header — with or without a retry policy), gives
every attempt its own deadline, spends the run's one :class:`~zigai.retry.RetryBudget`, and
delivers ``request_start`` / ``request_end`` / ``request_error`` (one per failed attempt,
with its retry category, whether a retry follows and the planned delay) to the run's hooks.
A response that arrives after the deadline or cancellation is discarded and reported as
that attempt's ``request_error``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from zigai.agent._partial import PartialOutputDeriver
from zigai.hooks import RequestEnd, RequestError, RequestStart
from zigai.messages import ResponseMessage
from zigai.retry import RetryAttempt, StreamRetryGuard, classify, run_with_retries

if TYPE_CHECKING:
    from zigai.agent._core import RunCore
    from zigai.model import ModelRequest, ModelStreamEvent, StreamedResponse

__all__ = ["StreamingRequest", "request_buffered", "run_deadline_reached"]

#: A transport deadline is computed from the run's remaining time, so the socket timeout can
#: fire a hair before the monotonic clock passes the deadline itself.
_DEADLINE_SLACK_S = 0.05


def run_deadline_reached(control: Any) -> bool:
    """True when the run's own deadline has (all but) passed."""
    remaining = control.remaining()
    return remaining is not None and remaining <= _DEADLINE_SLACK_S

T = TypeVar("T")


class _Attempts:
    """The attempts of one logical request: key, per-attempt deadline, hook events."""

    __slots__ = ("run", "request", "number", "stream", "attempt", "started", "failed", "settled")

    def __init__(self, run: RunCore, request: ModelRequest, *, stream: bool) -> None:
        self.run = run
        self.request = request
        self.number = run.usage.requests + 1
        self.stream = stream
        self.attempt = 0
        self.started = 0.0
        self.failed: BaseException | None = None
        self.settled = False  # request_end or the final request_error was delivered

    def call(self, send: Callable[[ModelRequest], T], guard: StreamRetryGuard | None = None) -> T:
        """Run ``send`` once per attempt until it succeeds or retrying stops."""
        run = self.run
        key = str(uuid.uuid4()) if run.profile.idempotency_header else None
        policy = run.agent.retry_policy

        def attempt(number: int, attempt_key: str | None) -> T:
            current = self.request
            if number > 1 or attempt_key is not None:
                current = replace(
                    current, idempotency_key=attempt_key,
                    deadline=run.control.attempt_deadline(run.agent.request_timeout_ms),
                )
            self.attempt = number
            if run.hooks:
                run.fire(RequestStart(run.info, self.number, number, current, self.stream))
            self.started = time.perf_counter()
            sent_ns = time.perf_counter_ns()
            try:
                return send(current)
            except BaseException as exc:
                self.failed = exc
                raise
            finally:
                run.pending_attempts += 1
                run.pending_provider_ns += time.perf_counter_ns() - sent_ns

        try:
            if policy is None:
                return attempt(1, key)
            return run_with_retries(
                attempt, policy=policy, control=run.control, stream_guard=guard,
                idempotency_key=key, budget=run.retry_budget,
                on_retry=self._retrying if run.hooks else None,
            )
        except BaseException as exc:
            self.error(exc)
            raise

    def _retrying(self, planned: RetryAttempt) -> None:
        self.failed = None
        run = self.run
        run.fire(RequestError(
            run.info, self.number, planned.attempt, planned.error, planned.category, True,
            planned.planned_delay_s, planned.cumulative_delay_s, time.perf_counter() - self.started,
        ))

    def error(self, exc: BaseException) -> None:
        """The logical request failed; report the last attempt's error (once)."""
        failed, self.failed = self.failed, None
        run = self.run
        if failed is None or self.settled or not run.hooks:
            return
        self.settled = True
        run.fire_failure(RequestError(
            run.info, self.number, self.attempt, failed, classify(failed), False, None,
            run.retry_budget.spent_ms / 1000.0, time.perf_counter() - self.started,
        ), exc)

    def late(self, exc: BaseException) -> None:
        """The attempt returned after the run stopped: its response is discarded."""
        self.failed = exc
        self.error(exc)

    def end(self, response: ResponseMessage) -> None:
        run = self.run
        self.settled = True
        if run.hooks:
            run.fire(RequestEnd(
                run.info, self.number, self.attempt, response, time.perf_counter() - self.started,
            ))


def request_buffered(run: RunCore) -> ResponseMessage:
    """One logical buffered request of ``run``; the response is checked against the control."""
    request = run.request
    assert request is not None
    model = run.model
    if run.agent.retry_policy is None and not run.profile.idempotency_header:
        if run.hooks:
            return _request_once_hooked(run, request)
        sent_ns = time.perf_counter_ns()
        try:
            response = model.request(request)
        finally:
            run.pending_attempts += 1
            run.pending_provider_ns += time.perf_counter_ns() - sent_ns
        run.control.check()  # a response that arrives after the deadline is discarded
        return response
    attempts = _Attempts(run, request, stream=False)
    response = attempts.call(model.request)
    try:
        run.control.check()
    except BaseException as exc:
        attempts.late(exc)
        raise
    attempts.end(response)
    return response


def _request_once_hooked(run: RunCore, request: ModelRequest) -> ResponseMessage:
    """The single attempt of a request without retry policy or key, with its hook events."""
    info = run.info
    number = run.usage.requests + 1
    run.fire(RequestStart(info, number, 1, request, False))
    started = time.perf_counter()
    try:
        try:
            response = run.model.request(request)
        finally:
            run.pending_attempts += 1
            run.pending_provider_ns += int((time.perf_counter() - started) * 1e9)
        run.control.check()
    except BaseException as exc:
        run.fire_failure(RequestError(
            info, number, 1, exc, classify(exc), False, None, run.retry_budget.spent_ms / 1000.0,
            time.perf_counter() - started,
        ), exc)
        raise
    run.fire(RequestEnd(info, number, 1, response, time.perf_counter() - started))
    return response


class StreamingRequest:
    """One open model stream of a run: opened (with retries) lazily, pulled one event per step."""

    __slots__ = ("stream", "_events", "first", "deriver", "guard", "_attempts", "_run")

    def __init__(self, run: RunCore) -> None:
        request = run.request
        assert request is not None
        model = run.model
        self.guard = StreamRetryGuard()
        self.deriver = PartialOutputDeriver(run)
        self.stream: StreamedResponse | None = None
        self._events: Iterator[ModelStreamEvent] | None = None

        def open_stream(current: ModelRequest) -> tuple[Any, Any, Any]:
            stream = model.stream(current)
            try:
                events = iter(stream)
                first = next(events, None)
            except BaseException:
                stream.close()
                raise
            return stream, events, first

        self._run = run
        self._attempts = _Attempts(run, request, stream=True)
        self.stream, self._events, self.first = self._attempts.call(open_stream, self.guard)

    def next(self) -> ModelStreamEvent | None:
        """The stream's next event; the wait for it counts as provider time."""
        assert self._events is not None
        pulled_ns = time.perf_counter_ns()
        try:
            return next(self._events, None)
        except BaseException as exc:
            self._attempts.late(exc)
            raise
        finally:
            self._run.pending_provider_ns += time.perf_counter_ns() - pulled_ns

    def finish(self, control_check: Callable[[], None]) -> ResponseMessage:
        """The exhausted stream's response (checked against the run control); closes it."""
        stream, self.stream = self.stream, None
        assert stream is not None
        finished_ns = time.perf_counter_ns()
        try:
            try:
                response = stream.response()
                stream.close()
            finally:
                self._run.pending_provider_ns += time.perf_counter_ns() - finished_ns
            control_check()
        except BaseException as exc:
            stream.close()
            self._attempts.late(exc)
            raise
        self._attempts.end(response)
        return response

    def abandoned(self, exc: BaseException) -> None:
        """The run failed while this stream was open (between two events)."""
        self._attempts.late(exc)

    def close(self) -> None:
        stream, self.stream = self.stream, None
        if stream is not None:
            stream.close()
