"""Streaming runs: the streamed mode of the ``model_request`` state and the synchronous iterator.

There is no second orchestration loop.  A streaming run is an ordinary
:class:`~zigai.agent.run.AgentRun` with an event sink; its ``model_request`` state then
consumes ``model.stream()`` one event per ``step()``:

1. the first step opens the stream and pulls its first event under the retry policy
   (with a :class:`~zigai.retry.StreamRetryGuard`); the guard is marked delivered right
   before the first event reaches the application, so once visible output exists a failed
   request is never retried;
2. every step forwards one raw model event, then the derived ``partial_output`` (the
   raw event is always delivered first);
3. the step that finds the stream exhausted builds the ``ResponseMessage`` from the
   stream's accumulator and continues exactly like the buffered path (usage, limits,
   history, ``handle_response``).

:class:`AgentStream` drives the run from the consumer's thread: ``__iter__`` is a
generator that calls ``step()`` and yields the events queued during it — no extra
thread, so back-pressure is natural and an abandoned iterator simply stops the run
(``close()`` releases the model stream and the tool pool).  ``result()`` (complete runs)
or ``outcome()`` (pause-aware runs) is valid once the iterator is exhausted; the returned
owner outlives the stream.

Partial output (see :mod:`zigai.output.partial`): text output snapshots are the text so
far; structured snapshots come from the output-bearing text (native, prompted, JSON
object) or the output tool's arguments, repaired and partially checked; partial-aware
output functions and validators then see them with ``partial_output=True`` (``retry``
suppresses the snapshot, a raised error stops the stream).  A snapshot equal to the last
delivered one is not repeated.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from zigai.agent.events import AgentStreamEvent, PartialOutputEvent
from zigai.messages import TextPart, ToolCallPart
from zigai.model import PartDeltaEvent, PartStartEvent, TextPartDelta, ToolCallPartDelta
from zigai.output import OutputMode, OutputResult, OutputRunContext
from zigai.output.partial import partial_check, repair_json, strip_partial_fences

if TYPE_CHECKING:
    from zigai.agent.deferred import RunOutcome
    from zigai.agent.result import Result
    from zigai.agent.run import AgentRun
    from zigai.model import ModelStreamEvent, StreamedResponse

__all__ = ["AgentStream", "StreamingRequest", "PartialOutputDeriver"]

_NO_SNAPSHOT = object()


class PartialOutputDeriver:
    """Turns raw model events of one response into partial output snapshots."""

    __slots__ = ("_run", "_mode", "_text", "_args", "_names", "_last", "_callbacks",
                 "_output_tools")

    def __init__(self, run: AgentRun) -> None:
        self._run = run
        self._mode = run.output.mode
        self._text = ""
        self._args: dict[int, str] = {}
        self._names: dict[int, list[str]] = {}  # [tool name, call id] per output-tool part
        self._last: Any = _NO_SNAPSHOT
        output = run.output
        self._callbacks = bool(run.agent.output_validators) or any(
            c.choice.function is not None for c in output.choices
        )
        self._output_tools = output.tool_names

    def derive(self, event: ModelStreamEvent) -> PartialOutputEvent | None:
        mode = self._mode
        if mode is OutputMode.tool:
            return self._derive_tool(event)
        chunk: str | None = None
        if isinstance(event, PartDeltaEvent):
            delta = event.delta
            if isinstance(delta, TextPartDelta):
                chunk = delta.content_delta
        elif isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
            chunk = event.part.content
        if not chunk:
            return None
        self._text += chunk
        text = self._text
        if mode is OutputMode.text:
            return self._deliver(text, None, None, None, event.index)
        source = strip_partial_fences(text) if mode is OutputMode.prompted else text
        repaired = repair_json(source)
        if repaired is None:
            return None
        value = repaired[0]
        if value == self._last:
            return None
        if mode is OutputMode.json_object:
            if not isinstance(value, dict):
                return None
            return self._deliver(value, value, None, None, event.index)
        for prepared in self._run.output.choices:
            if partial_check(value, prepared.choice.schema):
                return self._deliver(value, value, prepared.choice, None, event.index)
        return None

    def _derive_tool(self, event: ModelStreamEvent) -> PartialOutputEvent | None:
        index = event.index
        if isinstance(event, PartStartEvent):
            part = event.part
            if not isinstance(part, ToolCallPart) or part.tool_name not in self._output_tools:
                return None
            args = part.args
            self._args[index] = args if isinstance(args, str) else _dumps(args)
            self._names[index] = [part.tool_name, part.tool_call_id]
        elif isinstance(event, PartDeltaEvent) and index in self._args:
            delta = event.delta
            if not isinstance(delta, ToolCallPartDelta):
                return None
            if delta.tool_name_delta:
                self._names[index][0] += delta.tool_name_delta
            if delta.tool_call_id:
                self._names[index][1] = delta.tool_call_id
            if not delta.args_delta:
                return None
            self._args[index] += delta.args_delta
        else:
            return None
        repaired = repair_json(self._args[index])
        if repaired is None or not isinstance(repaired[0], dict):
            return None
        arguments = repaired[0]
        if arguments == self._last:
            return None
        tool_name, call_id = self._names[index]
        prepared = self._run.output.choice_for_tool(tool_name)
        if prepared is None:
            return None
        if prepared.wrapped:
            if set(arguments) - {"value"}:
                return None
            if "value" not in arguments:
                return None
            value = arguments["value"]
        else:
            value = arguments
        if not partial_check(value, prepared.choice.schema):
            return None
        self._last = arguments
        return self._deliver(value, value, prepared.choice, call_id, index, remember=False)

    def _deliver(
        self, value: Any, json_value: Any, choice: Any, call_id: str | None, index: int,
        *, remember: bool = True,
    ) -> PartialOutputEvent | None:
        if remember:
            self._last = value
        name = choice.name if choice is not None else None
        output = value
        if self._callbacks:
            output = self._partial_callbacks(value, choice, name, call_id)
            if output is _NO_SNAPSHOT:
                return None
        return PartialOutputEvent(output, json_value, name, call_id, index)

    def _partial_callbacks(self, value: Any, choice: Any, name: str | None, call_id: str | None) -> Any:
        run = self._run
        ctx: OutputRunContext = replace(run.output_context(name, call_id), partial_output=True)
        function = choice.function if choice is not None else None
        if function is not None:
            run.control.check()
            returned = function(ctx, value)
            if isinstance(returned, OutputResult):
                if returned.kind == "retry":
                    return _NO_SNAPSHOT
                value = returned.value
            else:
                value = returned
        label = name if name is not None else run.output.mode.value
        for validator in run.agent.output_validators:
            run.control.check()
            verdict = validator(label, ctx, value)
            if not isinstance(verdict, OutputResult) or verdict.kind == "retry":
                return _NO_SNAPSHOT
            if function is None and verdict.value is not value and choice is not None:
                if not partial_check(verdict.value, choice.schema):
                    return _NO_SNAPSHOT
            value = verdict.value
        return value


def _dumps(value: Any) -> str:
    import json

    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class StreamingRequest:
    """One open model stream of a run: opened (with retries) lazily, pulled one event per step."""

    __slots__ = ("stream", "_events", "first", "deriver", "guard")

    def __init__(self, run: AgentRun) -> None:
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


class AgentStream:
    """A synchronous stream of :data:`AgentStreamEvent` values for one run (see module docs).

    Use it as a context manager; iterate it to the end, then read :meth:`result`
    (or :meth:`outcome` for ``run_until_pause_stream`` / ``resume_run_stream``).
    """

    __slots__ = ("_run", "_queue", "_started", "_finished", "_closed", "_pause_aware")

    def __init__(self, run: AgentRun, *, pause_aware: bool = False) -> None:
        self._run = run
        self._queue: deque[AgentStreamEvent] = deque()
        run.set_sink(self._queue.append)
        self._started = False
        self._finished = False
        self._closed = False
        self._pause_aware = pause_aware

    def __iter__(self) -> Iterator[AgentStreamEvent]:
        if self._started:
            raise RuntimeError("an AgentStream can be iterated only once")
        self._started = True
        return self._events()

    def _events(self) -> Iterator[AgentStreamEvent]:
        from zigai.agent.run import RunState

        run = self._run
        queue = self._queue
        done = RunState.done
        step = run.step
        pop = queue.popleft
        try:
            while run.state is not done:
                step()
                while queue:
                    yield pop()
            self._finished = True
        finally:
            if not self._finished:
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
            self._run.abort()
        self._run.close()

    def __enter__(self) -> AgentStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_with_sink(run: AgentRun, sink: Callable[[AgentStreamEvent], None]) -> None:
    """Drive ``run`` to its end, handing every event to ``sink`` as it is produced."""
    run.set_sink(sink)
    try:
        run.drive()
    except BaseException:
        run.abort()
        raise
    finally:
        run.close()
