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
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from zigai.agent._partial import PartialOutputDeriver
from zigai.messages import ResponseMessage

if TYPE_CHECKING:
    from zigai.agent._core import RunCore
    from zigai.model import ModelStreamEvent, StreamedResponse

__all__ = ["StreamingRequest", "request_buffered"]


def request_buffered(run: RunCore) -> ResponseMessage:
    """One logical buffered request of ``run`` (through the retry policy when configured)."""
    request = run.request
    assert request is not None
    model = run.model
    policy = run.agent.retry_policy
    if policy is None:
        return model.request(request)
    from zigai.retry import run_with_retries

    timeout_ms = run.agent.request_timeout_ms
    control = run.control

    def attempt(number: int, key: str | None) -> ResponseMessage:
        current = request
        if number > 1 or key is not None:
            current = replace(
                request, idempotency_key=key, deadline=control.attempt_deadline(timeout_ms)
            )
        return model.request(current)

    return run_with_retries(
        attempt, policy=policy, control=control,
        idempotency_header=run.profile.idempotency_header,
    )


class StreamingRequest:
    """One open model stream of a run: opened (with retries) lazily, pulled one event per step."""

    __slots__ = ("stream", "_events", "first", "deriver", "guard")

    def __init__(self, run: RunCore) -> None:
        from zigai.retry import StreamRetryGuard

        request = run.request
        assert request is not None
        model = run.model
        self.guard = StreamRetryGuard()
        self.deriver = PartialOutputDeriver(run)
        self.stream: StreamedResponse | None = None
        self._events: Iterator[ModelStreamEvent] | None = None
        policy = run.agent.retry_policy

        def attempt(number: int, key: str | None) -> tuple[Any, Any, Any]:
            current = request
            if number > 1 or key is not None:
                current = replace(
                    request, idempotency_key=key,
                    deadline=run.control.attempt_deadline(run.agent.request_timeout_ms),
                )
            stream = model.stream(current)
            try:
                events = iter(stream)
                first = next(events, None)
            except BaseException:
                stream.close()
                raise
            return stream, events, first

        if policy is None:
            opened = attempt(1, None)
        else:
            from zigai.retry import run_with_retries

            opened = run_with_retries(
                attempt, policy=policy, control=run.control,
                idempotency_header=run.profile.idempotency_header, stream_guard=self.guard,
            )
        self.stream, self._events, self.first = opened

    def next(self) -> ModelStreamEvent | None:
        assert self._events is not None
        return next(self._events, None)

    def close(self) -> None:
        stream, self.stream = self.stream, None
        if stream is not None:
            stream.close()
