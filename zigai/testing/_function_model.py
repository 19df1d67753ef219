"""FunctionModel: a model whose every response is decided by an application callable.

Buffered: ``function(messages, info) -> ResponseMessage``.  Fields the callable leaves
unset are filled in — ``model_name``/``provider_name`` from the model, ``finish_reason``
(``tool_call`` when a function tool is called, else ``stop``; raw reason the same string)
and, when the usage is empty, :func:`~zigai.testing.estimate_usage`.

Streamed: ``stream_function(messages, info)`` returns an iterable of *stream items*:

* ``str`` — text.  It extends the most recently started part when that is a text part,
  otherwise it starts a new text part (empty strings are skipped);
* :class:`DeltaToolCall` — a piece of a function tool call, identified by ``key``.  The
  first delta of a key starts a new tool-call part and must carry the tool ``name``; later
  deltas with the same key append ``json_args`` (and name text) or set ``tool_call_id``;
* :class:`DeltaThinking` — a piece of reasoning, keyed the same way.

Part indexes are assigned in order of first appearance, starting at 0 for every response,
and never change.  The start event carries the first piece, every later piece is one delta
event, and every part ends — in index order — when the iterable is exhausted, so any
number of keyed parts can stay open and interleave.  ``info`` (:class:`AgentInfo`) shows
the whole :class:`~zigai.model.ModelRequest`.  A model built with only one of the two
callables raises :class:`~zigai.testing.MissingModelFunction` for the other mode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from zigai.messages import (
    Message,
    ResponseMessage,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from zigai.model import (
    ModelProfile,
    ModelRequest,
    ModelStreamEvent,
    OutputFormat,
    PartAccumulator,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    StreamedResponse,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
    ToolDefinition,
    check_request_supported,
)
from zigai.settings import ModelSettings
from zigai.testing._common import (
    InvalidFunctionResponse,
    MissingModelFunction,
    ScriptedModelBase,
    ScriptedStream,
    check_time,
    finish_reason_for,
)
from zigai.tool.race import BoundedIterator, call_bounded

__all__ = [
    "FunctionModel",
    "AgentInfo",
    "DeltaToolCall",
    "DeltaThinking",
    "StreamItem",
    "ModelFunction",
    "StreamFunction",
]

StreamKey: TypeAlias = int | str


def _check_optional_str(owner: str, name: str, value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise InvalidFunctionResponse(f"{owner}.{name} must be a str or None")


def _check_key(owner: str, key: object) -> None:
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise InvalidFunctionResponse(f"{owner}.key must be an int or a str")


@dataclass(frozen=True, slots=True)
class DeltaToolCall:
    """One piece of a streamed function tool call; ``key`` says which call it continues."""

    name: str | None = None
    json_args: str | None = None
    tool_call_id: str | None = None
    key: StreamKey = 0

    def __post_init__(self) -> None:
        for field_name in ("name", "json_args", "tool_call_id"):
            _check_optional_str("DeltaToolCall", field_name, getattr(self, field_name))
        _check_key("DeltaToolCall", self.key)


@dataclass(frozen=True, slots=True)
class DeltaThinking:
    """One piece of streamed reasoning text and/or its signature, keyed like tool calls."""

    content: str = ""
    signature: str | None = None
    key: StreamKey = 0

    def __post_init__(self) -> None:
        if not isinstance(self.content, str):
            raise InvalidFunctionResponse("DeltaThinking.content must be a str")
        _check_optional_str("DeltaThinking", "signature", self.signature)
        _check_key("DeltaThinking", self.key)


StreamItem: TypeAlias = str | DeltaToolCall | DeltaThinking


@dataclass(frozen=True, slots=True)
class AgentInfo:
    """What the callable may inspect besides the messages: the whole model request."""

    request: ModelRequest
    model_name: str
    provider_name: str
    profile: ModelProfile

    @property
    def tools(self) -> tuple[ToolDefinition, ...]:
        return self.request.tools

    @property
    def function_tools(self) -> tuple[ToolDefinition, ...]:
        return tuple(t for t in self.request.tools if t.kind == "function")

    @property
    def output_tools(self) -> tuple[ToolDefinition, ...]:
        return tuple(t for t in self.request.tools if t.kind == "output")

    @property
    def output_format(self) -> OutputFormat:
        return self.request.output_format

    @property
    def settings(self) -> ModelSettings:
        return self.request.settings

    @property
    def instructions(self) -> tuple[str, ...]:
        return self.request.instructions

    def tool(self, name: str) -> ToolDefinition | None:
        """The offered tool called ``name``, or None."""
        return next((t for t in self.request.tools if t.name == name), None)


ModelFunction: TypeAlias = Callable[[tuple[Message, ...], AgentInfo], ResponseMessage]
StreamFunction: TypeAlias = Callable[[tuple[Message, ...], AgentInfo], Iterable[StreamItem]]


class FunctionModel(ScriptedModelBase):
    """A :class:`~zigai.model.Model` driven by application callables (see module docs)."""

    def __init__(
        self,
        function: ModelFunction | None = None,
        *,
        stream_function: StreamFunction | None = None,
        profile: ModelProfile | None = None,
        model_name: str = "function",
        provider_name: str = "function",
    ) -> None:
        if function is None and stream_function is None:
            raise MissingModelFunction("FunctionModel needs function=, stream_function=, or both")
        for label, given in (("function", function), ("stream_function", stream_function)):
            if given is not None and not callable(given):
                raise MissingModelFunction(f"{label} must be callable")
        self._init_identity(profile, model_name, provider_name, InvalidFunctionResponse)
        self._function = function
        self._stream_function = stream_function

    def __repr__(self) -> str:
        return f"FunctionModel(model_name={self._model_name!r})"

    def _begin(self, request: ModelRequest) -> AgentInfo:
        check_time(request)
        check_request_supported(request, self._profile)
        self._observe(request)
        return AgentInfo(request, self._model_name, self._provider_name, self._profile)

    def request(self, request: ModelRequest) -> ResponseMessage:
        if self._function is None:
            raise MissingModelFunction(
                "this FunctionModel has only a stream_function; pass function= for "
                "buffered requests"
            )
        info = self._begin(request)
        response = call_bounded(
            self._function, request.messages, info, control=request.control,
            deadline=request.deadline, what="the FunctionModel function",
        )
        if not isinstance(response, ResponseMessage):
            raise InvalidFunctionResponse(
                f"function must return a ResponseMessage, got {type(response).__name__}"
            )
        changes: dict[str, Any] = {}
        if response.model_name is None:
            changes["model_name"] = self._model_name
        if response.provider_name is None:
            changes["provider_name"] = self._provider_name
        if response.finish_reason is None:
            finish = finish_reason_for(response.parts)
            changes["finish_reason"] = finish
            if response.raw_finish_reason is None:
                changes["raw_finish_reason"] = finish.value
        if response.usage.is_empty():
            changes["usage"] = self._estimate_usage(request, response.parts)
        return replace(response, **changes) if changes else response

    def stream(self, request: ModelRequest) -> StreamedResponse:
        if self._stream_function is None:
            raise MissingModelFunction(
                "this FunctionModel has only a buffered function; pass stream_function= "
                "for streamed requests"
            )
        info = self._begin(request)
        items = call_bounded(
            self._stream_function, request.messages, info, control=request.control,
            deadline=request.deadline, what="the FunctionModel stream function",
        )
        if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
            raise InvalidFunctionResponse(
                "stream_function must return an iterable of stream items (str, DeltaToolCall, "
                f"DeltaThinking), got {type(items).__name__}"
            )
        first_id = sum(
            1 for message in request.messages if isinstance(message, ResponseMessage)
            for part in message.parts if isinstance(part, ToolCallPart)
        )

        def source(stream: ScriptedStream) -> Iterator[ModelStreamEvent]:
            builder = _PartBuilder(first_id)
            bounded = BoundedIterator(
                items, control=request.control, deadline=request.deadline,
                what="the FunctionModel stream function's iterator",
            )
            try:
                for item in bounded:
                    yield from builder.feed(item)
            finally:
                bounded.close()
            yield from builder.finish()
            parts = builder.parts()
            finish = finish_reason_for(parts)
            stream.usage = self._estimate_usage(request, parts)
            stream.finish_reason = finish
            stream.raw_finish_reason = finish.value

        return ScriptedStream(request, source, model_name=self._model_name,
                              provider_name=self._provider_name)


class _PartBuilder:
    """Turns stream items into start/delta events with stable indexes, then ends them."""

    __slots__ = ("_acc", "_keys", "_next", "_latest", "_first_id", "_calls")

    def __init__(self, first_id: int) -> None:
        self._acc = PartAccumulator()
        self._keys: dict[tuple[str, StreamKey], int] = {}
        self._next = 0
        self._latest: int | None = None  # index of the most recently started part
        self._first_id = first_id
        self._calls = 0

    def _emit(self, event: ModelStreamEvent) -> ModelStreamEvent:
        self._acc.apply(event)
        if isinstance(event, PartStartEvent):
            self._latest = event.index
        return event

    def _start(self, part: Any, key: tuple[str, StreamKey] | None) -> ModelStreamEvent:
        index = self._next
        self._next += 1
        if key is not None:
            self._keys[key] = index
        return self._emit(PartStartEvent(index, part))

    def feed(self, item: object) -> Iterator[ModelStreamEvent]:
        if isinstance(item, str):
            if not item:
                return
            latest = self._latest
            if latest is not None and self._acc.kind(latest) is TextPart:
                yield self._emit(PartDeltaEvent(latest, TextPartDelta(item)))
            else:
                yield self._start(TextPart(item), None)
        elif isinstance(item, DeltaToolCall):
            key = ("tool-call", item.key)
            index = self._keys.get(key)
            if index is None:
                if not item.name:
                    raise InvalidFunctionResponse(
                        f"the first DeltaToolCall with key {item.key!r} must name the tool"
                    )
                call_id = item.tool_call_id or f"function-call-{self._first_id + self._calls}"
                self._calls += 1
                yield self._start(ToolCallPart(item.name, item.json_args or "", call_id), key)
            else:
                yield self._emit(PartDeltaEvent(index, ToolCallPartDelta(
                    args_delta=item.json_args or "",
                    tool_name_delta=item.name,
                    tool_call_id=item.tool_call_id,
                )))
        elif isinstance(item, DeltaThinking):
            key = ("thinking", item.key)
            index = self._keys.get(key)
            if index is None:
                yield self._start(ThinkingPart(item.content, signature=item.signature), key)
            else:
                yield self._emit(PartDeltaEvent(index, ThinkingPartDelta(
                    item.content, signature_delta=item.signature,
                )))
        else:
            raise InvalidFunctionResponse(
                "stream items must be str, DeltaToolCall or DeltaThinking, "
                f"got {type(item).__name__}"
            )

    def finish(self) -> Iterator[ModelStreamEvent]:
        for index, part in enumerate(self._acc.parts()):
            yield PartEndEvent(index, part)

    def parts(self) -> tuple[Any, ...]:
        return self._acc.parts()
