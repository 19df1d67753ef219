"""Streamed Chat Completions: a state machine from SSE events to model stream events.

Job
    :class:`StreamDecoder` consumes ``data:`` events of a ``stream: true`` response
    (``chat.completion.chunk`` objects, then ``[DONE]``) and produces
    :data:`~zigai.model.ModelStreamEvent` values.  It does no I/O, so tests can feed it SSE
    events decoded from bytes split at any boundary.  :class:`ChatStreamedResponse` wires it
    to an open :class:`~zigai.provider.ProviderLineStream`.

Invariants
    * Part indexes are assigned in order of first appearance and never reused: a thinking
      part (``delta.reasoning_content`` / ``delta.reasoning``), one text part
      (``delta.content``) and one function-call part per wire ``tool_calls[].index``.
    * Every started part gets exactly one ``part_end`` carrying its final value, emitted in
      index order when the stream finishes (``[DONE]`` or end of input).  A stream that
      finishes before any chunk, or whose input ends with neither ``[DONE]`` nor a
      ``finish_reason``, raises :class:`OpenAICompatibleDecodeError`.
    * Growing parts keep their deltas in :class:`~zigai.model.stream.GrowingParts`, so
      accumulation is linear in the streamed length.
    * A tool call's first delta must carry its ``id`` and ``function.name``; later deltas for
      that index append argument text.
    * Usage (the ``include_usage`` chunk with empty ``choices``) is reported separately, never
      as a part.  An ``error`` object inside the stream raises ``ProviderServerError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

from zigai.messages import (
    FinishReason,
    ProviderDetails,
    ResponsePart,
    TextPart,
    ToolCallPart,
)
from zigai.model import (
    ModelStreamEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
)
from zigai.model.stream import GrowingParts
from zigai.pricing.cost import REPORTED_COST_KEY
from zigai.provider import ProviderLineStream, ProviderServerError, parse_provider_json
from zigai.providers._wire import DecodedLineStream, details_or_none
from zigai.providers.openai_compatible.decode import (
    DETAIL_KEYS,
    REASONING_FIELDS,
    OpenAICompatibleDecodeError,
    decode_error,
    decode_usage,
    finish_reason,
    reported_cost_usd,
    thinking_part,
)
from zigai.providers.sse import SseEvent
from zigai.usage import RequestUsage

__all__ = ["StreamDecoder", "ChatStreamedResponse"]


class StreamDecoder:
    """Feed SSE events in order; collect model stream events; read the summary at the end."""

    def __init__(self, provider_name: str = "openai_compatible") -> None:
        self.provider_name = provider_name
        self.usage = RequestUsage()
        self.finish_reason: FinishReason | None = None
        self.raw_finish_reason: str | None = None
        self.response_id: str | None = None
        self.model_name: str | None = None
        self.details: dict[str, Any] = {}
        self.done = False
        self._parts = GrowingParts()
        self._thinking: int | None = None
        self._text: int | None = None
        self._tools: dict[int, int] = {}
        self._chunks = 0
        self._done_marker = False

    @property
    def provider_details(self) -> ProviderDetails | None:
        return details_or_none(self.details)

    def _start(self, part: ResponsePart) -> tuple[int, PartStartEvent]:
        index = self._parts.append(part)
        return index, PartStartEvent(index, part)

    def feed(self, event: SseEvent) -> list[ModelStreamEvent]:
        """Events produced by one SSE event (``[DONE]`` closes every open part)."""
        if self.done:
            return []
        data = event.data.strip()
        if not data:
            return []
        if data == "[DONE]":
            self._done_marker = True
            return self.finish()
        path = f"$[chunk {self._chunks}]"
        self._chunks += 1
        chunk = parse_provider_json(data)
        if not isinstance(chunk, Mapping):
            raise decode_error("stream chunk must be an object", path=path,
                                              provider_name=self.provider_name)
        try:
            return self._chunk(chunk, path)
        except OpenAICompatibleDecodeError as exc:
            exc.provider_name = self.provider_name
            raise

    def _chunk(self, chunk: Mapping[str, Any], path: str) -> list[ModelStreamEvent]:
        error = chunk.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, Mapping) else error
            raise ProviderServerError(
                f"{self.provider_name} reported a stream error: {str(message)[:1024]}",
                provider_name=self.provider_name,
            )
        if isinstance(chunk.get("id"), str) and chunk["id"] and self.response_id is None:
            self.response_id = chunk["id"]
        if isinstance(chunk.get("model"), str) and chunk["model"] and self.model_name is None:
            self.model_name = chunk["model"]
        for key in DETAIL_KEYS:
            if chunk.get(key) is not None:
                self.details[key] = chunk[key]
        if chunk.get("usage") is not None:
            self.usage = decode_usage(chunk["usage"], f"{path}.usage")
            cost = reported_cost_usd(chunk["usage"], f"{path}.usage")
            if cost is not None:
                self.details[REPORTED_COST_KEY] = cost
        choices = chunk.get("choices", [])
        if choices is None:
            choices = []
        if not isinstance(choices, list):
            raise decode_error("choices must be an array", path=f"{path}.choices")
        events: list[ModelStreamEvent] = []
        for position, choice in enumerate(choices):
            where = f"{path}.choices[{position}]"
            if not isinstance(choice, Mapping):
                raise decode_error("choice must be an object", path=where)
            if choice.get("index", 0) != 0:
                continue  # only the first choice is decoded (n > 1 is not requested)
            events.extend(self._delta(choice.get("delta"), f"{where}.delta"))
            raw = choice.get("finish_reason")
            if raw is not None:
                self.finish_reason = finish_reason(raw, f"{where}.finish_reason")
                self.raw_finish_reason = raw
            if choice.get("logprobs") is not None:
                logprobs = self.details.setdefault("logprobs", {"content": []})
                content = choice["logprobs"].get("content") if isinstance(choice["logprobs"], Mapping) else None
                if isinstance(content, list) and isinstance(logprobs.get("content"), list):
                    logprobs["content"].extend(content)
        return events

    def _delta(self, delta: Any, path: str) -> list[ModelStreamEvent]:
        if delta is None:
            return []
        if not isinstance(delta, Mapping):
            raise decode_error("delta must be an object", path=path)
        events: list[ModelStreamEvent] = []
        for field in REASONING_FIELDS:
            value = delta.get(field)
            if value is None:
                continue
            if not isinstance(value, str):
                raise decode_error(f"{field} must be a string", path=f"{path}.{field}")
            if value:
                events.append(self._thinking_delta(field, value))
            break
        content = delta.get("content")
        if content is not None:
            if not isinstance(content, str):
                raise decode_error("content must be a string", path=f"{path}.content")
            if content:
                events.append(self._text_delta(content))
        refusal = delta.get("refusal")
        if refusal:  # kept like the buffered message's refusal
            if not isinstance(refusal, str):
                raise decode_error("refusal must be a string", path=f"{path}.refusal")
            self.details["refusal"] = self.details.get("refusal", "") + refusal
        annotations = delta.get("annotations")
        if annotations:
            if not isinstance(annotations, list):
                raise decode_error("annotations must be an array", path=f"{path}.annotations")
            self.details.setdefault("annotations", []).extend(annotations)
        calls = delta.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                raise decode_error("tool_calls must be an array", path=f"{path}.tool_calls")
            for position, call in enumerate(calls):
                events.extend(self._tool_delta(call, f"{path}.tool_calls[{position}]", position))
        return events

    def _thinking_delta(self, field: str, value: str) -> ModelStreamEvent:
        if self._thinking is None:
            self._thinking, event = self._start(thinking_part(self.provider_name, field, value))
            return event
        self._parts.grow(self._thinking, value)
        return PartDeltaEvent(self._thinking, ThinkingPartDelta(value))

    def _text_delta(self, value: str) -> ModelStreamEvent:
        if self._text is None:
            self._text, event = self._start(TextPart(value))
            return event
        self._parts.grow(self._text, value)
        return PartDeltaEvent(self._text, TextPartDelta(value))

    def _tool_delta(self, call: Any, path: str, position: int) -> list[ModelStreamEvent]:
        if not isinstance(call, Mapping):
            raise decode_error("tool call delta must be an object", path=path)
        wire_index = call.get("index", position)
        if isinstance(wire_index, bool) or not isinstance(wire_index, int):
            raise decode_error("tool call index must be an integer", path=f"{path}.index")
        function = call.get("function") or {}
        if not isinstance(function, Mapping):
            raise decode_error("function must be an object", path=f"{path}.function")
        arguments = function.get("arguments") or ""
        if not isinstance(arguments, str):
            raise decode_error("arguments must be a string",
                                              path=f"{path}.function.arguments")
        index = self._tools.get(wire_index)
        if index is None:
            call_id, name = call.get("id"), function.get("name")
            if not isinstance(call_id, str) or not call_id:
                raise decode_error("first tool call delta needs an id", path=f"{path}.id")
            if not isinstance(name, str) or not name:
                raise decode_error("first tool call delta needs a function name",
                                                  path=f"{path}.function.name")
            index, event = self._start(ToolCallPart(name, arguments, call_id))
            self._tools[wire_index] = index
            return [event]
        if not arguments:
            return []
        self._parts.grow(index, arguments)
        return [PartDeltaEvent(index, ToolCallPartDelta(args_delta=arguments))]

    def finish(self) -> list[ModelStreamEvent]:
        """End of stream: one ``part_end`` per started part, in index order.

        A stream that ends before its first chunk carries no response at all (for example a
        server that answered ``stream: true`` with a buffered JSON body, whose lines are not
        SSE ``data:`` fields): that is a decode error, never an empty response.  So is a
        stream whose input ends with neither ``[DONE]`` nor any ``finish_reason``: it was
        cut off, and its parts are not the whole answer.
        """
        if self.done:
            return []
        if self._chunks == 0:
            raise decode_error("stream ended without any chunk", path="$stream",
                               provider_name=self.provider_name)
        if not self._done_marker and self.raw_finish_reason is None:
            raise decode_error(
                "stream ended without a finish_reason or [DONE]: the response was cut off",
                path="$stream", provider_name=self.provider_name,
            )
        self.done = True
        return [PartEndEvent(i, self._parts[i]) for i in sorted(self._parts)]


class ChatStreamedResponse(DecodedLineStream):
    """A streamed Chat Completions response over an open provider line stream."""

    def __init__(
        self,
        opened: AbstractContextManager[ProviderLineStream],
        stream: ProviderLineStream,
        *,
        model_name: str,
        provider_name: str,
    ) -> None:
        super().__init__(opened, stream, StreamDecoder(provider_name), model_name=model_name,
                         provider_name=provider_name)
