"""Partial output for streamed runs: raw model events of one response → ``PartialOutputEvent``.

A step executor of the streamed ``model_request`` state (see :mod:`zigai.output.partial`
for the JSON repair and the monotonic checks).  Text output snapshots are the text so far;
structured snapshots come from the output-bearing text (native, prompted, JSON object) or the
output tool's arguments, repaired and partially checked; partial-aware output functions and
validators then see them with ``partial_output=True`` (``retry`` suppresses the snapshot, a
raised error stops the stream).  A snapshot equal to the last delivered one is not repeated.

Per-delta work for plain text output (no output functions or validators) is O(delta): the
pieces go into one :class:`~zigai.agent.events.TextSoFar` and each snapshot records only
its piece count, joining on first read.  Structured snapshots still re-repair the whole
prefix per delta (the JSON repair is not incremental).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from zigai.agent.events import PartialOutputEvent, TextSoFar
from zigai.messages import TextPart, ToolCallPart
from zigai.model import PartDeltaEvent, PartStartEvent, TextPartDelta, ToolCallPartDelta
from zigai.output import OutputMode, OutputResult, OutputRunContext
from zigai.output.partial import partial_check, repair_json, strip_partial_fences
from zigai.tool import ModelRetry

if TYPE_CHECKING:
    from zigai.agent._core import RunCore
    from zigai.model import ModelStreamEvent

__all__ = ["PartialOutputDeriver"]

_NO_SNAPSHOT = object()


class PartialOutputDeriver:
    """Turns raw model events of one response into partial output snapshots."""

    __slots__ = ("_run", "_mode", "_text", "_args", "_names", "_last", "_callbacks",
                 "_output_tools", "_pieces")

    def __init__(self, run: RunCore) -> None:
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
        # Plain text output without callbacks keeps pieces, not a growing copy: O(delta).
        self._pieces = TextSoFar() if self._mode is OutputMode.text and not self._callbacks else None

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
        pieces = self._pieces
        if pieces is not None:
            pieces.pieces.append(chunk)
            return PartialOutputEvent.text_so_far(pieces, len(pieces.pieces), event.index)
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
            try:
                returned = function(ctx, value)
            except ModelRetry:  # not acceptable yet: no snapshot, the final check decides
                return _NO_SNAPSHOT
            if isinstance(returned, OutputResult):
                if returned.kind == "retry":
                    return _NO_SNAPSHOT
                value = returned.value
            else:
                value = returned
        label = name if name is not None else run.output.mode.value
        for validator in run.agent.output_validators:
            run.control.check()
            try:
                verdict = validator(label, ctx, value)
            except ModelRetry:
                return _NO_SNAPSHOT
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
