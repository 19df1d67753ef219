"""Decode Cohere v2 Chat answers: the buffered response and the server-sent event stream.

Buffered (:func:`decode_response`):

* ``message.content`` items: ``text`` → :class:`TextPart`, ``thinking`` →
  :class:`ThinkingPart`; unknown item types are kept verbatim in
  ``provider_details["content"]``.
* ``message.tool_plan`` → a :class:`ThinkingPart` whose provider details are
  ``{"tool_plan": true}`` (so it is replayed as ``tool_plan``), placed before the calls;
  ``message.tool_calls`` → :class:`ToolCallPart` (Cohere's call id).
* ``message.citations`` and ``logprobs`` stay structured in ``provider_details``.
* ``finish_reason``: COMPLETE / STOP_SEQUENCE → stop, MAX_TOKENS → length, TOOL_CALL →
  tool_call, ERROR / TIMEOUT → error, anything else → other.
* ``usage``: ``tokens`` counts (falling back to ``billed_units``) with ``cached_tokens`` as
  cache reads inside input; billed units stay in ``usage.details`` as ``billed_units.*``.

Streamed (:class:`StreamDecoder`): ``message-start``, ``content-start|delta|end``,
``tool-plan-delta``, ``tool-call-start|delta|end``, ``citation-start|end``, ``message-end``;
``debug`` and unknown events are ignored.  The accumulated parts equal the buffered decode of
the same answer; a stream that ends before ``message-end`` raises :class:`CohereDecodeError`.
"""

from __future__ import annotations

from typing import Any

from zigai.messages import (
    FinishReason,
    ProviderDetails,
    ProviderPart,
    ResponseMessage,
    ResponsePart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from zigai.model import ModelStreamEvent
from zigai.providers._native import NativeStreamDecoder
from zigai.providers._wire import JsonReader, details_or_none
from zigai.providers.cohere._encode import PROVIDER_NAME
from zigai.providers.cohere._errors import CohereDecodeError
from zigai.usage import InvalidUsage, RequestUsage, UsageDetails

__all__ = ["FINISH_REASONS", "StreamDecoder", "decode_response", "decode_usage", "finish_reason"]

_R = JsonReader(CohereDecodeError)

FINISH_REASONS: dict[str, FinishReason] = {
    "COMPLETE": FinishReason.stop,
    "STOP_SEQUENCE": FinishReason.stop,
    "MAX_TOKENS": FinishReason.length,
    "TOOL_CALL": FinishReason.tool_call,
    "ERROR": FinishReason.error,
    "TIMEOUT": FinishReason.error,
}
_TOOL_PLAN = ProviderDetails({"tool_plan": True})


def finish_reason(raw: str | None) -> FinishReason | None:
    if raw is None:
        return None
    return FINISH_REASONS.get(raw, FinishReason.other)


def _provider(item_id: str | None = None, details: ProviderDetails | None = None) -> ProviderPart:
    return ProviderPart(PROVIDER_NAME, id=item_id, details=details)


def tool_plan_part(text: str) -> ThinkingPart:
    return ThinkingPart(text, provider=_provider(details=_TOOL_PLAN))


def decode_usage(value: Any, path: str = "$.usage") -> RequestUsage:
    """Normalize ``usage``: token counts, cached input inside input, billed units as details."""
    usage = _R.obj(value, path)
    details: dict[str, int] = {}
    billed = _R.opt_obj(usage, "billed_units", path) or {}
    for name, count in billed.items():
        if isinstance(count, (int, float)) and not isinstance(count, bool) and count >= 0:
            details[f"billed_units.{name}"] = int(count)
    tokens = _R.opt_obj(usage, "tokens", path)
    source, where = (tokens, f"{path}.tokens") if tokens is not None else (billed, f"{path}.billed_units")
    input_tokens = _count(source.get("input_tokens"), f"{where}.input_tokens")
    output_tokens = _count(source.get("output_tokens"), f"{where}.output_tokens")
    cached = _count(usage.get("cached_tokens"), f"{path}.cached_tokens")
    try:
        return RequestUsage(input_tokens=input_tokens, output_tokens=output_tokens,
                            cache_read_tokens=cached, details=UsageDetails(details))
    except InvalidUsage as exc:
        raise _R.fail(path, f"inconsistent usage: {exc}") from None


def _count(value: Any, path: str) -> int:
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)  # billed units are documented as numbers
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _R.fail(path, "expected a non-negative integer")
    return value


def _tool_call(value: Any, path: str) -> ToolCallPart:
    call = _R.obj(value, path)
    call_id = _R.str_(call, "id", path)
    function = _R.field_obj(call, "function", path)
    name = _R.str_(function, "name", f"{path}.function")
    arguments = _R.opt_str(function, "arguments", f"{path}.function") or "{}"
    if not call_id or not name:
        raise _R.fail(path, "a tool call needs an id and a function name")
    return ToolCallPart(name, arguments, call_id, provider=_provider(call_id))


def decode_response(value: Any, *, model_name: str | None = None,
                    provider_name: str = PROVIDER_NAME) -> ResponseMessage:
    """A complete v2 Chat response object as one ResponseMessage."""
    root = _R.obj(value, "$")
    message = _R.field_obj(root, "message", "$")
    raw_reason = _R.opt_str(root, "finish_reason", "$")
    parts: list[ResponsePart] = []
    unknown: list[Any] = []
    content = message.get("content")
    if isinstance(content, str):
        parts.append(TextPart(content, provider=_provider()))
    elif content is not None:
        for index, item in enumerate(_R.arr(content, "$.message.content")):
            where = f"$.message.content[{index}]"
            entry = _R.obj(item, where)
            kind = _R.str_(entry, "type", where)
            if kind == "text":
                parts.append(TextPart(_R.str_(entry, "text", where), provider=_provider()))
            elif kind == "thinking":
                parts.append(ThinkingPart(_R.str_(entry, "thinking", where), provider=_provider()))
            else:
                unknown.append(entry)
    plan = _R.opt_str(message, "tool_plan", "$.message")
    if plan:
        parts.append(tool_plan_part(plan))
    for index, call in enumerate(_R.opt_arr(message, "tool_calls", "$.message") or ()):
        parts.append(_tool_call(call, f"$.message.tool_calls[{index}]"))
    details: dict[str, Any] = {}
    if unknown:
        details["content"] = unknown
    if message.get("citations"):
        details["citations"] = _R.arr(message["citations"], "$.message.citations")
    if root.get("logprobs"):
        details["logprobs"] = _R.arr(root["logprobs"], "$.logprobs")
    usage = RequestUsage()
    if root.get("usage") is not None:
        usage = decode_usage(root["usage"])
    return ResponseMessage(
        parts=tuple(parts), usage=usage, model_name=model_name, provider_name=provider_name,
        provider_response_id=_R.opt_str(root, "id", "$"),
        finish_reason=finish_reason(raw_reason), raw_finish_reason=raw_reason,
        provider_details=details_or_none(details),
    )


# -- streaming ------------------------------------------------------------------------------


class StreamDecoder(NativeStreamDecoder):
    """Incremental decoder of one streamed v2 Chat answer (pure: events in, events out)."""

    reader = _R
    terminal = "message-end"

    def __init__(self, model_name: str | None = None, provider_name: str = PROVIDER_NAME) -> None:
        super().__init__(model_name, provider_name)
        self._plan: int | None = None
        self._citations: list[Any] = []
        self._logprobs: list[Any] = []

    @property
    def provider_details(self) -> ProviderDetails | None:
        details: dict[str, Any] = {}
        if self._citations:
            details["citations"] = self._citations
        if self._logprobs:
            details["logprobs"] = self._logprobs
        return details_or_none(details)

    # -- handlers -------------------------------------------------------------------------

    def _message_start(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        self.response_id = _R.opt_str(payload, "id", path) or self.response_id

    def _index(self, payload: dict[str, Any], path: str) -> int:
        index = _R.opt_int(payload, "index", path)
        return 0 if index is None else index

    def _delta_message(self, payload: dict[str, Any], path: str) -> dict[str, Any]:
        delta = _R.opt_obj(payload, "delta", path) or {}
        return _R.opt_obj(delta, "message", f"{path}.delta") or {}

    def _content_start(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        index = self._index(payload, path)
        message = self._delta_message(payload, path)
        content = _R.opt_obj(message, "content", f"{path}.delta.message") or {}
        kind = content.get("type", "text")
        initial = content.get("thinking" if kind == "thinking" else "text") or ""
        if not isinstance(initial, str):
            raise _R.fail(f"{path}.delta.message.content", "expected string content")
        part: ResponsePart
        if kind == "thinking":
            part = ThinkingPart("", provider=_provider())
        else:
            part = TextPart("", provider=_provider())
        self._grow(self._start(part, out, ("content", index)), initial, out)

    def _content_delta(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        index = self._index(payload, path)
        message = self._delta_message(payload, path)
        content = _R.opt_obj(message, "content", f"{path}.delta.message") or {}
        text = content.get("thinking") if "thinking" in content else content.get("text", "")
        if not isinstance(text, str):
            raise _R.fail(f"{path}.delta.message.content", "expected string content")
        found = self._keys.get(("content", index))
        if found is None:
            kind = ThinkingPart if "thinking" in content else TextPart
            found = self._start(kind("", provider=_provider()), out, ("content", index))
        self._grow(found, text, out)
        if payload.get("logprobs") is not None:
            self._logprobs.append(payload["logprobs"])

    def _content_end(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        found = self._keys.get(("content", self._index(payload, path)))
        if found is not None:
            self._end(found, out)

    def _plan_delta(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        text = _R.opt_str(self._delta_message(payload, path), "tool_plan", f"{path}.delta.message")
        if self._plan is None:
            self._plan = self._start(tool_plan_part(""), out)
        self._grow(self._plan, text or "", out)

    def _call_start(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        if self._plan is not None:
            self._end(self._plan, out)
        index = self._index(payload, path)
        where = f"{path}.delta.message.tool_calls"
        call = _R.field_obj(self._delta_message(payload, path), "tool_calls",
                            f"{path}.delta.message")
        call_id = _R.str_(call, "id", where)
        function = _R.field_obj(call, "function", where)
        name = _R.str_(function, "name", f"{where}.function")
        arguments = _R.opt_str(function, "arguments", f"{where}.function") or ""
        if not call_id or not name:
            raise _R.fail(where, "a tool call needs an id and a function name")
        started = self._start(ToolCallPart(name, "", call_id, provider=_provider(call_id)), out,
                              ("call", index))
        self._grow(started, arguments, out)

    def _call_delta(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        index = self._index(payload, path)
        found = self._keys.get(("call", index))
        if found is None:
            raise _R.fail(f"{path}.index", f"tool-call-delta for unknown call {index}")
        where = f"{path}.delta.message.tool_calls"
        call = _R.opt_obj(self._delta_message(payload, path), "tool_calls",
                          f"{path}.delta.message") or {}
        function = _R.opt_obj(call, "function", where) or {}
        self._grow(found, _R.opt_str(function, "arguments", f"{where}.function") or "", out)

    def _call_end(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        found = self._keys.get(("call", self._index(payload, path)))
        if found is not None:
            self._end(found, out)

    def _citation(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        citation = self._delta_message(payload, path).get("citations")
        if citation is not None:
            self._citations.append(_R.obj(citation, f"{path}.delta.message.citations"))

    def _message_end(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        delta = _R.opt_obj(payload, "delta", path) or {}
        raw = _R.opt_str(delta, "finish_reason", f"{path}.delta")
        self.raw_finish_reason = raw
        self.finish_reason = finish_reason(raw)
        if delta.get("usage") is not None:
            self.usage = decode_usage(delta["usage"], f"{path}.delta.usage")
        self._complete = True


StreamDecoder.handlers = {
    "message-start": StreamDecoder._message_start,
    "content-start": StreamDecoder._content_start,
    "content-delta": StreamDecoder._content_delta,
    "content-end": StreamDecoder._content_end,
    "tool-plan-delta": StreamDecoder._plan_delta,
    "tool-call-start": StreamDecoder._call_start,
    "tool-call-delta": StreamDecoder._call_delta,
    "tool-call-end": StreamDecoder._call_end,
    "citation-start": StreamDecoder._citation,
    "message-end": StreamDecoder._message_end,
}
