"""Streaming runs: :class:`AgentStream` and :func:`run_with_sink`, sinks of the one state machine.

There is no second orchestration loop.  A streaming run is an ordinary
:class:`~zigai.agent.run.AgentRun` with an event sink; its ``model_request`` state then
consumes ``model.stream()`` one event per ``step()`` (the executor is
:mod:`zigai.agent._model_step`; partial output comes from :mod:`zigai.agent._partial`).

:class:`AgentStream` drives the run from the consumer's thread: ``__iter__`` is a
generator that calls ``step()`` and yields the events queued during it — no extra
thread, so back-pressure is natural and an abandoned iterator simply stops the run
(``close()`` releases the model stream and the tool pool).  ``result()`` (complete runs)
or ``outcome()`` (pause-aware runs) is valid once the iterator is exhausted; the returned
owner outlives the stream.  :func:`run_with_sink` drives a run to its end, handing every
event to a callback as it is produced.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from zigai.agent._core import RunState
from zigai.agent.errors import AwaitNotSupported
from zigai.agent.events import AgentStreamEvent
from zigai.hooks import StreamEventAfter, StreamEventBefore

if TYPE_CHECKING:
    from zigai.agent.deferred import RunOutcome
    from zigai.agent.result import Result
    from zigai.agent.run import AgentRun

__all__ = ["AgentStream", "run_with_sink"]


class AgentStream:
    """A synchronous stream of :data:`AgentStreamEvent` values for one run (see module docs).

    Use it as a context manager; iterate it to the end, then read :meth:`result`
    (or :meth:`outcome` for ``run_until_pause_stream`` / ``resume_run_stream``).
    """

    __slots__ = ("_run", "_queue", "_started", "_finished", "_closed", "_pause_aware")

    def __init__(self, run: AgentRun, *, pause_aware: bool = False) -> None:
        self._run = run
        self._queue: deque[AgentStreamEvent] = deque()
        run.set_sink(self._queue.append, delivers=False)
        self._started = False
        self._finished = False
        self._closed = False
        self._pause_aware = pause_aware

    def __iter__(self) -> Iterator[AgentStreamEvent]:
        if self._started:
            raise RuntimeError("an AgentStream can be iterated only once")
        self._started = True
        return self._events()

    def stream_text(self, *, delta: bool = False) -> Iterator[str]:
        """Iterate the stream (like ``for event in stream``) yielding only its text.

        ``delta=True`` yields each new piece (the first one comes from the part's start
        event); ``delta=False`` yields the text of the current text part so far, which
        restarts when a new text part begins.  Other events are consumed silently; read
        :meth:`result` afterwards as usual."""
        from zigai.messages import TextPart
        from zigai.model import PartDeltaEvent, PartStartEvent, TextPartDelta

        current = ""
        for event in self:
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                piece, current = event.part.content, event.part.content
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                piece = event.delta.content_delta
                current += piece
            else:
                continue
            if piece:
                yield piece if delta else current

    def stream_output(self) -> Iterator[Any]:
        """Iterate the stream yielding output snapshots, then the accepted output last.

        Each :class:`~zigai.agent.events.PartialOutputEvent` gives its provisional ``output``
        (text so far, or the repaired partial JSON of a structured output — partial values
        are not decoded into the typed output); the last item is the final output, decoded
        for typed runs.  Read :meth:`result` afterwards as usual."""
        from zigai.agent.events import FinalResultEvent, PartialOutputEvent

        for event in self:
            if isinstance(event, PartialOutputEvent):
                yield event.output
            elif isinstance(event, FinalResultEvent):
                yield event.output

    if not TYPE_CHECKING:  # so type checkers still flag `async with` / `async for`

        async def __aenter__(self) -> Any:
            raise AwaitNotSupported(
                "AgentStream is synchronous: write `with agent.run_stream(...) as stream:` and "
                "`for event in stream` (no async with / async for)"
            )

        async def __aexit__(self, *exc: object) -> None:
            return None

        def __aiter__(self) -> Any:
            raise AwaitNotSupported(
                "AgentStream is synchronous: iterate it with a plain `for event in stream`"
            )

    def _events(self) -> Iterator[AgentStreamEvent]:
        run = self._run
        queue = self._queue
        done = RunState.done
        step = run.step
        pop = queue.popleft
        hooks = run.hooks
        try:
            while run.state is not done:
                step()
                if hooks:
                    info = run.info
                    while queue:
                        event = pop()
                        run.fire(StreamEventBefore(info, event))
                        yield event
                        run.fire(StreamEventAfter(info, event))
                else:
                    while queue:
                        yield pop()
            self._finished = True
            run.flush_end()
        except GeneratorExit:
            raise
        except BaseException as exc:
            run.fail(exc)
            raise
        finally:
            if not self._finished:
                run.abandon()
                run.abort()
            run.close()

    def _drain(self) -> None:
        if not self._started:
            for _ in self:
                pass
        if not self._finished:
            raise RuntimeError("the stream was not consumed to its end")

    def result(self) -> Result:
        """The owned Result; consumes any events not yet iterated."""
        self._drain()
        return self._run.completed_result()

    def outcome(self) -> RunOutcome:
        """The owned RunOutcome (complete or paused); consumes any events not yet iterated."""
        self._drain()
        return self._run.outcome()

    def close(self) -> None:
        """Stop the run if it is still going and release its stream and tool pool."""
        if self._closed:
            return
        self._closed = True
        if not self._finished:
            self._run.abandon()
            self._run.abort()
        self._run.close()

    def __enter__(self) -> AgentStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_with_sink(run: AgentRun, sink: Callable[[AgentStreamEvent], None]) -> None:
    """Drive ``run`` to its end, handing every event to ``sink`` as it is produced."""
    run.set_sink(sink)
    run.drive()
