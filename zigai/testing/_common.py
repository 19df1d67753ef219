"""What both test models share: their errors, the permissive profile, usage estimates, streams.

Invariants:

* :func:`estimate_usage` is a pure function of the request and the produced parts, so
  a buffered and a streamed call of the same test model report the same usage;
* :func:`response_events` splits a finished response into start/delta/end events that a
  :class:`~zigai.model.PartAccumulator` folds back into exactly the same parts;
* both models check the run control (cancellation first, then the attempt's deadline and
  the run's) before they answer and between stream events.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields, replace
from typing import Any

from zigai.control import RunTimedOut
from zigai.errors import ModelError
from zigai.json import encoded_size, utf8_size
from zigai.messages import (
    CachePoint,
    FinishReason,
    Message,
    RequestMessage,
    ResponseMessage,
    ResponsePart,
    TaggedText,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from zigai.model import (
    ALL_CONTENT_KINDS,
    MANAGED_TOOL_KINDS,
    ModelProfile,
    ModelRequest,
    ModelStreamEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    StreamedResponse,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
)
from zigai.settings import THINKING_LEVELS, ModelSettings
from zigai.usage import RequestUsage

__all__ = [
    "ScriptedModelBase",
    "MissingModelFunction",
    "InvalidFunctionResponse",
    "InvalidTestModelConfig",
    "PERMISSIVE_PROFILE",
    "MEDIA_ITEM_TOKENS",
    "ARGS_CHUNK_CHARS",
    "estimate_tokens",
    "estimate_usage",
    "finish_reason_for",
    "response_events",
]


class MissingModelFunction(ModelError):
    """A FunctionModel was asked for a mode (buffered or streamed) it has no function for."""


class InvalidFunctionResponse(ModelError):
    """A FunctionModel callable returned or yielded something that is not a model response."""


class InvalidTestModelConfig(ModelError):
    """TestModel options contradict each other or are not JSON."""


PERMISSIVE_PROFILE = ModelProfile(
    supports_tools=True,
    supports_parallel_tool_calls=True,
    supports_system_messages=True,
    json_object_output=True,
    json_schema_output=True,
    supports_thinking=True,
    provider_managed_tools=MANAGED_TOOL_KINDS,
    content_kinds=ALL_CONTENT_KINDS,
    reasoning_efforts=frozenset(THINKING_LEVELS),
    service_tiers=frozenset({"auto", "default", "flex", "priority", "scale", "standard"}),
    settings=frozenset(f.name for f in fields(ModelSettings)),
)
"""The default profile of both test models: every capability and every portable setting."""

MEDIA_ITEM_TOKENS = 64
"""Estimated input tokens of one non-text user content item (image, audio, document ...)."""

ARGS_CHUNK_CHARS = 16
"""Streamed tool-call argument text arrives in chunks of at most this many characters."""


class ScriptedModelBase:
    """Identity, profile and request observation shared by the test doubles.

    Thread-safe: concurrent runs may share one double; ``last_request`` and
    ``request_count`` are updated under a lock by :meth:`_observe`.
    """

    def _init_identity(
        self,
        profile: ModelProfile | None,
        model_name: str,
        provider_name: str,
        error: type[ModelError],
    ) -> None:
        for label, name in (("model_name", model_name), ("provider_name", provider_name)):
            if not isinstance(name, str) or not name:
                raise error(f"{label} must be a non-empty str")
        if profile is not None and not isinstance(profile, ModelProfile):
            raise error("profile must be a ModelProfile")
        self._profile = profile if profile is not None else PERMISSIVE_PROFILE
        self._model_name = model_name
        self._provider_name = provider_name
        self._lock = threading.Lock()
        self._last_request: ModelRequest | None = None
        self._request_count = 0
        self._input_tokens = _InputTokenMemo()

    def _estimate_usage(self, request: ModelRequest, parts: Sequence[ResponsePart]) -> RequestUsage:
        """:func:`estimate_usage`, counting only the messages new since the last request."""
        return RequestUsage(input_tokens=self._input_tokens.count(request),
                            output_tokens=sum(_part_tokens(part) for part in parts))

    def __getstate__(self) -> dict[str, Any]:
        # A pickled copy (a Dask worker's) gets its own lock and token memo and observes only its own requests.
        state = dict(self.__dict__)
        for name in ("_lock", "_last_request", "_request_count", "_input_tokens"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._last_request = None
        self._request_count = 0
        self._input_tokens = _InputTokenMemo()

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def provider_name(self) -> str:
        return self._provider_name

    @property
    def profile(self) -> ModelProfile:
        return self._profile

    @property
    def last_request(self) -> ModelRequest | None:
        """The most recent request given to ``request()`` or ``stream()``."""
        return self._last_request

    @property
    def request_count(self) -> int:
        """How many requests (buffered or streamed) this model has answered."""
        return self._request_count

    def _observe(self, request: ModelRequest) -> None:
        with self._lock:
            self._last_request = request
            self._request_count += 1


def estimate_tokens(text: str) -> int:
    """``ceil(utf8_bytes / 4)``: the usual four-bytes-per-token rule of thumb."""
    return (utf8_size(text) + 3) // 4


def _content_tokens(content: Any) -> int:
    if content is None:
        return 0
    if isinstance(content, str):
        return estimate_tokens(content)
    if isinstance(content, tuple) and content and all(hasattr(i, "kind") for i in content):
        total = 0
        for item in content:
            if isinstance(item, (TextContent, TaggedText)):
                total += estimate_tokens(item.text)
            elif not isinstance(item, CachePoint):
                total += MEDIA_ITEM_TOKENS
        return total
    return (encoded_size(content) + 3) // 4  # the canonical JSON's bytes, counted without building it


def _part_tokens(part: Any) -> int:
    total = 0
    for name in ("content", "transcript", "args"):
        total += _content_tokens(getattr(part, name, None))
    if isinstance(part, ToolCallPart):
        total += estimate_tokens(part.tool_name)
    if getattr(part, "audio", None) is not None:
        total += MEDIA_ITEM_TOKENS
    return total


def estimate_usage(request: ModelRequest, parts: Sequence[ResponsePart]) -> RequestUsage:
    """Deterministic usage of one test-model call.

    ``input_tokens`` sums :func:`estimate_tokens` over the request's instructions, each
    message's ``instructions`` and every part's text fields (``content``, ``transcript``,
    ``args``, a tool call's name; non-text JSON content as canonical JSON) in every
    message, plus :data:`MEDIA_ITEM_TOKENS` per non-text user content item or audio.
    ``output_tokens`` sums the same part measure over the produced ``parts``.
    """
    inputs = sum(estimate_tokens(text) for text in request.instructions)
    inputs += sum(_message_tokens(message) for message in request.messages)
    outputs = sum(_part_tokens(part) for part in parts)
    return RequestUsage(input_tokens=inputs, output_tokens=outputs)


def _message_tokens(message: Message) -> int:
    total = sum(_part_tokens(part) for part in message.parts)
    if isinstance(message, RequestMessage) and message.instructions:
        total += estimate_tokens(message.instructions)
    return total


class _InputTokenMemo:
    """The input half of :func:`estimate_usage`, remembering the last request's per-message counts.

    Messages are immutable, and an agent's next request repeats the previous history and
    adds to it, so only the messages after the longest common prefix (compared by
    identity) are measured.  It keeps just the previous request's message tuple, which the
    model already holds as ``last_request``; concurrent runs only lose the reuse (the pair
    is replaced in one assignment).
    """

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: tuple[tuple[Message, ...], tuple[int, ...]] = ((), ())

    def count(self, request: ModelRequest) -> int:
        messages = tuple(request.messages)
        previous, counts = self._last
        same, limit = 0, min(len(previous), len(messages))
        while same < limit and previous[same] is messages[same]:
            same += 1
        counts = counts[:same] + tuple(_message_tokens(m) for m in messages[same:])
        self._last = (messages, counts)
        return sum(estimate_tokens(text) for text in request.instructions) + sum(counts)


def finish_reason_for(parts: Sequence[ResponsePart]) -> FinishReason:
    """``tool_call`` when the response calls a function tool, otherwise ``stop``."""
    if any(isinstance(part, ToolCallPart) for part in parts):
        return FinishReason.tool_call
    return FinishReason.stop


def check_time(request: ModelRequest) -> None:
    """Raise Cancelled / RunTimedOut when the call must not go on."""
    request.control.check()
    if request.deadline is not None and time.monotonic() >= request.deadline:
        raise RunTimedOut("model request deadline exceeded")


_WORD = re.compile(r"\s*\S+\s*|\s+")


def split_words(text: str) -> list[str]:
    """Word-sized chunks (surrounding whitespace kept) whose concatenation is ``text``."""
    return _WORD.findall(text)


def split_args(args: str) -> list[str]:
    return [args[i:i + ARGS_CHUNK_CHARS] for i in range(0, len(args), ARGS_CHUNK_CHARS)]


def response_events(response: ResponseMessage) -> Iterator[ModelStreamEvent]:
    """Replay a finished response as part events: text in words, tool args in chunks."""
    for index, part in enumerate(response.parts):
        if isinstance(part, TextPart):
            yield PartStartEvent(index, replace(part, content=""))
            for word in split_words(part.content):
                yield PartDeltaEvent(index, TextPartDelta(word))
        elif isinstance(part, ThinkingPart):
            yield PartStartEvent(index, replace(part, content="", signature=None))
            for word in split_words(part.content):
                yield PartDeltaEvent(index, ThinkingPartDelta(word))
            if part.signature:
                yield PartDeltaEvent(index, ThinkingPartDelta("", signature_delta=part.signature))
        elif isinstance(part, ToolCallPart):
            yield PartStartEvent(index, replace(part, args=""))
            for chunk in split_args(part.args):
                yield PartDeltaEvent(index, ToolCallPartDelta(args_delta=chunk))
        else:
            yield PartStartEvent(index, part)
        yield PartEndEvent(index, part)


class ScriptedStream(StreamedResponse):
    """A StreamedResponse fed by a generator; checks the run control before every event.

    ``source(stream)`` yields the events and sets ``usage``/``finish_reason`` on the
    stream once it knows them (at the latest after its last event).
    """

    def __init__(self, request: ModelRequest,
                 source: Callable[[ScriptedStream], Iterator[ModelStreamEvent]], *,
                 model_name: str, provider_name: str) -> None:
        super().__init__(model_name=model_name, provider_name=provider_name)
        self._request = request
        self._source = source

    def _events(self) -> Iterator[ModelStreamEvent]:
        for event in self._source(self):
            check_time(self._request)
            yield event
