"""Decode Converse answers: the buffered response and the ConverseStream events.

Buffered (:func:`decode_response`): ``output.message.content`` blocks — ``text`` →
:class:`TextPart` (``citationsContent`` text too, its citations in the part's details),
``toolUse`` → :class:`ToolCallPart` (``toolUseId``; input as JSON text),
``reasoningContent`` → :class:`ThinkingPart` (``reasoningText`` with its signature, or
``redactedContent`` kept as ``details["redacted_content"]``); other blocks are kept verbatim
in ``provider_details["content"]``.  ``metrics``, ``trace``, ``serviceTier``,
``performanceConfig`` and ``additionalModelResponseFields`` stay in ``provider_details``.

Finish reasons: ``end_turn`` / ``stop_sequence`` → stop, ``tool_use`` → tool_call,
``max_tokens`` / ``model_context_window_exceeded`` → length, ``guardrail_intervened`` /
``content_filtered`` → content_filter, ``malformed_model_output`` / ``malformed_tool_use`` →
error, anything else → other.  Usage is cache-aware: Converse reports cache reads and writes
beside ``inputTokens``, so they are added into the normalized input total.

Streamed (:class:`StreamDecoder`): one event per EventStream message — ``messageStart``,
``contentBlockStart``, ``contentBlockDelta`` (text, tool input, reasoning text / signature /
redacted content, citations), ``contentBlockStop``, ``messageStop`` and ``metadata``.  The
accumulated parts equal the buffered decode; a stream without ``messageStop`` raises
:class:`BedrockDecodeError`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from zigai import json as zjson
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
from zigai.model import ModelStreamEvent, PartDeltaEvent, ThinkingPartDelta
from zigai.providers._native import NativeStreamDecoder
from zigai.providers._wire import JsonReader, details_or_none
from zigai.providers.bedrock._encode import PROVIDER_NAME
from zigai.providers.bedrock._errors import BedrockDecodeError
from zigai.providers.sse import SseEvent
from zigai.usage import InvalidUsage, RequestUsage, UsageDetails

__all__ = ["FINISH_REASONS", "StreamDecoder", "decode_response", "decode_usage", "finish_reason"]

_R = JsonReader(BedrockDecodeError)

FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": FinishReason.stop,
    "stop_sequence": FinishReason.stop,
    "tool_use": FinishReason.tool_call,
    "max_tokens": FinishReason.length,
    "model_context_window_exceeded": FinishReason.length,
    "guardrail_intervened": FinishReason.content_filter,
    "content_filtered": FinishReason.content_filter,
    "malformed_model_output": FinishReason.error,
    "malformed_tool_use": FinishReason.error,
}
_RESPONSE_DETAILS = ("metrics", "trace", "serviceTier", "performanceConfig",
                     "additionalModelResponseFields")


def finish_reason(raw: str | None) -> FinishReason | None:
    return None if raw is None else FINISH_REASONS.get(raw, FinishReason.other)


def _provider(details: dict[str, Any] | None = None, item_id: str | None = None) -> ProviderPart:
    return ProviderPart(PROVIDER_NAME, id=item_id, details=details_or_none(details or {}))


def decode_usage(value: Any, path: str = "$.usage") -> RequestUsage:
    """Converse usage with cache reads and writes added into the input total."""
    usage = _R.obj(value, path)
    read = _R.opt_int(usage, "cacheReadInputTokens", path) or 0
    write = _R.opt_int(usage, "cacheWriteInputTokens", path) or 0
    details: dict[str, int] = {}
    server_tools = _R.opt_obj(usage, "serverToolUsage", path) or {}
    for name, count in server_tools.items():
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            details[f"serverToolUsage.{name}"] = count
    try:
        return RequestUsage(
            input_tokens=(_R.opt_int(usage, "inputTokens", path) or 0) + read + write,
            output_tokens=_R.opt_int(usage, "outputTokens", path) or 0,
            cache_read_tokens=read, cache_write_tokens=write, details=UsageDetails(details),
        )
    except InvalidUsage as exc:  # pragma: no cover - the counters above are checked
        raise _R.fail(path, f"inconsistent usage: {exc}") from None


def _reasoning(block: dict[str, Any], path: str) -> ThinkingPart:
    text = _R.opt_obj(block, "reasoningText", path)
    if text is not None:
        where = f"{path}.reasoningText"
        return ThinkingPart(_R.opt_str(text, "text", where) or "",
                            signature=_R.opt_str(text, "signature", where), provider=_provider())
    redacted = _R.opt_str(block, "redactedContent", path)
    if redacted is None:
        raise _R.fail(path, "reasoningContent needs reasoningText or redactedContent")
    return ThinkingPart("", provider=_provider({"redacted_content": redacted}))


def _tool_use(block: dict[str, Any], path: str) -> ToolCallPart:
    call_id = _R.str_(block, "toolUseId", path)
    name = _R.str_(block, "name", path)
    if not call_id or not name:
        raise _R.fail(path, "toolUse needs a toolUseId and a name")
    value = block.get("input", {})
    arguments = value if isinstance(value, str) else zjson.dumps(value)
    return ToolCallPart(name, arguments or "{}", call_id, provider=_provider(item_id=call_id))


def _citations_text(block: dict[str, Any], path: str) -> TextPart:
    texts = []
    for index, item in enumerate(_R.opt_arr(block, "content", path) or ()):
        texts.append(_R.opt_str(_R.obj(item, f"{path}.content[{index}]"), "text",
                                f"{path}.content[{index}]") or "")
    citations = _R.opt_arr(block, "citations", path) or []
    return TextPart("".join(texts), provider=_provider({"citations": citations}
                                                       if citations else None))


def decode_response(value: Any, *, model_name: str | None = None,
                    provider_name: str = PROVIDER_NAME) -> ResponseMessage:
    """A complete Converse response as one ResponseMessage."""
    root = _R.obj(value, "$")
    output = _R.field_obj(root, "output", "$")
    message = _R.field_obj(output, "message", "$.output")
    parts: list[ResponsePart] = []
    unknown: list[Any] = []
    for index, item in enumerate(_R.arr(message.get("content"), "$.output.message.content")):
        where = f"$.output.message.content[{index}]"
        block = _R.obj(item, where)
        if "text" in block:
            parts.append(TextPart(_R.str_(block, "text", where), provider=_provider()))
        elif "toolUse" in block:
            parts.append(_tool_use(_R.field_obj(block, "toolUse", where), f"{where}.toolUse"))
        elif "reasoningContent" in block:
            parts.append(_reasoning(_R.field_obj(block, "reasoningContent", where),
                                    f"{where}.reasoningContent"))
        elif "citationsContent" in block:
            parts.append(_citations_text(_R.field_obj(block, "citationsContent", where),
                                         f"{where}.citationsContent"))
        else:
            unknown.append(block)
    raw = _R.opt_str(root, "stopReason", "$")
    details: dict[str, Any] = {key: root[key] for key in _RESPONSE_DETAILS
                               if root.get(key) is not None}
    if unknown:
        details["content"] = unknown
    usage = decode_usage(root["usage"]) if root.get("usage") is not None else RequestUsage()
    return ResponseMessage(
        parts=tuple(parts), usage=usage, model_name=model_name, provider_name=provider_name,
        finish_reason=finish_reason(raw), raw_finish_reason=raw,
        provider_details=details_or_none(details),
    )


# -- streaming ------------------------------------------------------------------------------


class StreamDecoder(NativeStreamDecoder):
    """Incremental decoder of ConverseStream events (``SseEvent(event_type, json_payload)``)."""

    reader = _R
    terminal = "messageStop"
    skip_empty = False

    def __init__(self, model_name: str | None = None, provider_name: str = PROVIDER_NAME) -> None:
        super().__init__(model_name, provider_name)
        self._citations: dict[int, list[Any]] = {}
        self._details: dict[str, Any] = {}

    @property
    def provider_details(self) -> ProviderDetails | None:
        return details_or_none(self._details)

    def _kind(self, event: SseEvent, payload: dict[str, Any]) -> Any:
        return event.event  # the EventStream ``:event-type`` header names the event

    def _final_part(self, index: int, part: ResponsePart) -> ResponsePart:
        part = super()._final_part(index, part)
        citations = self._citations.get(index)
        if citations and isinstance(part, TextPart):
            part = replace(part, provider=_provider({"citations": citations}))
        return part

    def _block(self, payload: dict[str, Any], path: str) -> int:
        index = _R.opt_int(payload, "contentBlockIndex", path)
        if index is None:
            raise _R.fail(f"{path}.contentBlockIndex", "expected a non-negative integer")
        return index

    def _block_start(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        block = self._block(payload, path)
        start = _R.opt_obj(payload, "start", path) or {}
        tool = _R.opt_obj(start, "toolUse", f"{path}.start")
        if tool is not None:
            call = _tool_use({**tool, "input": ""}, f"{path}.start.toolUse")
            self._start(replace(call, args=""), out, block)

    def _block_delta(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        block = self._block(payload, path)
        delta = _R.field_obj(payload, "delta", path)
        where = f"{path}.delta"
        index = self._keys.get(block)
        if "text" in delta:
            text = _R.str_(delta, "text", where)
            if index is None:
                index = self._start(TextPart("", provider=_provider()), out, block)
            self._grow(index, text, out)
        elif "toolUse" in delta:
            if index is None or not isinstance(self._parts.base(index), ToolCallPart):
                raise _R.fail(where, f"tool input for block {block} before its toolUse start")
            args = _R.opt_str(_R.field_obj(delta, "toolUse", where), "input", f"{where}.toolUse")
            self._grow(index, args or "", out)
        elif "reasoningContent" in delta:
            reasoning = _R.field_obj(delta, "reasoningContent", where)
            if index is None:
                index = self._start(ThinkingPart("", provider=_provider()), out, block)
            if not isinstance(self._parts.base(index), ThinkingPart):
                raise _R.fail(where, f"reasoning delta for a non-reasoning block {block}")
            if "text" in reasoning:
                self._grow(index, _R.str_(reasoning, "text", f"{where}.reasoningContent"), out)
            elif "signature" in reasoning:
                signature = _R.str_(reasoning, "signature", f"{where}.reasoningContent")
                part = self._parts[index]
                assert isinstance(part, ThinkingPart)
                self._parts[index] = replace(part, signature=(part.signature or "") + signature)
                out.append(PartDeltaEvent(index, ThinkingPartDelta("", signature_delta=signature)))
            elif "redactedContent" in reasoning:
                redacted = _R.str_(reasoning, "redactedContent", f"{where}.reasoningContent")
                self._parts[index] = replace(self._parts[index], provider=_provider(
                    {"redacted_content": redacted}))
        elif "citation" in delta:
            if index is None:
                index = self._start(TextPart("", provider=_provider()), out, block)
            self._citations.setdefault(index, []).append(delta["citation"])

    def _block_stop(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        index = self._keys.get(self._block(payload, path))
        if index is not None:
            self._end(index, out)

    def _message_stop(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        raw = _R.opt_str(payload, "stopReason", path)
        self.raw_finish_reason = raw
        self.finish_reason = finish_reason(raw)
        if payload.get("additionalModelResponseFields") is not None:
            self._details["additionalModelResponseFields"] = payload["additionalModelResponseFields"]
        self._complete = True

    def _metadata(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        if payload.get("usage") is not None:
            self.usage = decode_usage(payload["usage"], f"{path}.usage")
        for key in ("metrics", "trace", "serviceTier", "performanceConfig"):
            if payload.get(key) is not None:
                self._details[key] = payload[key]


StreamDecoder.handlers = {
    "contentBlockStart": StreamDecoder._block_start,
    "contentBlockDelta": StreamDecoder._block_delta,
    "contentBlockStop": StreamDecoder._block_stop,
    "messageStop": StreamDecoder._message_stop,
    "metadata": StreamDecoder._metadata,
}
