"""Anthropic Messages API responses -> neutral values (pure functions and a stream state machine).

* :func:`decode_response` turns one buffered ``message`` object into a ``ResponseMessage``.
* :class:`StreamDecoder` consumes server-sent events (dispatching on the JSON ``type``; the
  ``event:`` name is optional) and returns model stream events with stable part indexes.
* :func:`decode_usage` normalizes usage: ``cache_creation_input_tokens`` and
  ``cache_read_input_tokens`` are added INTO ``input_tokens`` (Anthropic reports them apart);
  ``output_tokens_details.thinking_tokens`` becomes ``reasoning_tokens``; other integer counters
  are kept in ``details`` by provider name (nested ones as ``parent.child``).

Thinking keeps its signature on ``ThinkingPart.signature``; redacted thinking keeps its opaque
``data`` in ``ProviderPart.details["redacted_data"]``.  Server tool traffic (web search and
fetch, code execution, MCP connector calls) becomes native tool parts tagged ``anthropic``;
files a code execution created follow its result as :class:`FilePart` values naming the
stored file (``UploadedFile("anthropic", file_id)``), buffered and streamed alike.  A text block's ``citations`` (web search
and document sources) stay in its ``ProviderPart.details["citations"]``; streamed
``citations_delta`` events gather into the same list.  Blocks of unknown types have no
neutral part: they are kept verbatim in ``ResponseMessage.provider_details["content"]``
(streamed: the block as it started, since their deltas cannot be interpreted).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from zigai import json as zjson
from zigai.errors import ProviderRequestError
from zigai.messages import (
    FilePart,
    FinishReason,
    NativeToolCallPart,
    NativeToolReturnPart,
    ProviderDetails,
    ProviderPart,
    ResponseMessage,
    ResponsePart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolOutcome,
    UploadedFile,
)
from zigai.messages.json_value import thaw_json
from zigai.model import (
    ModelStreamEvent,
    PartAccumulator,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
)
from zigai.provider import error_class_for_status
from zigai.providers._wire import JsonReader, details_or_none
from zigai.providers.anthropic._errors import AnthropicDecodeError
from zigai.providers.sse import SseEvent
from zigai.usage import RequestUsage, UsageDetails

__all__ = ["FINISH_REASONS", "StreamDecoder", "decode_response", "decode_usage", "finish_reason"]

PROVIDER = "anthropic"
_read = JsonReader(AnthropicDecodeError)

FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": FinishReason.stop,
    "stop_sequence": FinishReason.stop,
    "pause_turn": FinishReason.stop,
    "max_tokens": FinishReason.length,
    "model_context_window_exceeded": FinishReason.length,
    "tool_use": FinishReason.tool_call,
    "refusal": FinishReason.content_filter,
}

# Anthropic error types (stream ``error`` events) -> the HTTP status they are documented with.
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}

_USAGE_KNOWN = frozenset(
    {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
)


def finish_reason(raw: str | None) -> FinishReason | None:
    if raw is None:
        return None
    return FINISH_REASONS.get(raw, FinishReason.other)


def decode_usage(usage: dict[str, Any] | None, path: str = "$.usage") -> RequestUsage:
    if usage is None:
        return RequestUsage()
    counts = {key: _read.opt_int(usage, key, path) or 0 for key in _USAGE_KNOWN}
    details: dict[str, int] = {}
    reasoning = 0
    for key, value in usage.items():
        if key in _USAGE_KNOWN:
            continue
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            details[key] = value
        elif isinstance(value, dict):
            for inner, count in value.items():
                if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
                    if key == "output_tokens_details" and inner == "thinking_tokens":
                        reasoning = count
                    else:
                        details[f"{key}.{inner}"] = count
    cache_write = counts["cache_creation_input_tokens"]
    cache_read = counts["cache_read_input_tokens"]
    output = counts["output_tokens"]
    return RequestUsage(
        input_tokens=counts["input_tokens"] + cache_write + cache_read,
        output_tokens=output,
        cache_write_tokens=cache_write,
        cache_read_tokens=cache_read,
        reasoning_tokens=min(reasoning, output),
        details=UsageDetails(details),
    )


def _args_text(value: Any, path: str) -> str:
    if value is None:
        return "{}"
    if not isinstance(value, dict):
        raise _read.fail(path, "tool input must be an object")
    return zjson.dumps(value)


def _provider(details: dict[str, Any] | None = None) -> ProviderPart:
    return ProviderPart(PROVIDER, details=None if details is None else ProviderDetails(details))


# code execution reports a failed run as a ``*_tool_result_error`` content object
_ERROR_REPORTING_TOOLS = frozenset({"code_execution", "bash_code_execution",
                                    "text_editor_code_execution"})


def _failed(tool_name: str, content: Any) -> bool:
    return (tool_name in _ERROR_REPORTING_TOOLS and isinstance(content, dict)
            and str(content.get("type", "")).endswith("_error"))


def decode_block(block: Any, path: str) -> ResponsePart | None:
    """One content block as a neutral part (None for block types with no neutral form)."""
    block = _read.obj(block, path)
    kind = _read.str_(block, "type", path)
    if kind == "text":
        citations = _read.opt_arr(block, "citations", path)
        return TextPart(_read.str_(block, "text", path),
                        provider=_provider({"citations": citations}) if citations else None)
    if kind == "thinking":
        signature = _read.opt_str(block, "signature", path)
        return ThinkingPart(_read.str_(block, "thinking", path), signature=signature or None,
                            provider=_provider())
    if kind == "redacted_thinking":
        return ThinkingPart("", provider=_provider({"redacted_data": _read.str_(block, "data", path)}))
    if kind == "tool_use":
        return ToolCallPart(
            tool_name=_read.str_(block, "name", path),
            args=_args_text(block.get("input"), f"{path}.input"),
            tool_call_id=_read.str_(block, "id", path),
        )
    if kind in ("server_tool_use", "mcp_tool_use"):
        mcp = kind == "mcp_tool_use"
        return NativeToolCallPart(
            tool_name=_read.str_(block, "name", path),
            tool_call_id=_read.str_(block, "id", path),
            args=_args_text(block.get("input"), f"{path}.input"),
            provider=_provider({"type": kind, "server_name": _read.str_(block, "server_name", path)}
                               if mcp else None),
        )
    if kind.endswith("_tool_result") and kind != "tool_result":
        tool_name = kind[: -len("_tool_result")]
        details: dict[str, Any] = {"type": kind}
        is_error = block.get("is_error")
        if isinstance(is_error, bool):
            details["is_error"] = is_error
        content = block.get("content")
        return NativeToolReturnPart(
            tool_name=tool_name,
            tool_call_id=_read.str_(block, "tool_use_id", path),
            content=content,
            provider=_provider(details),
            outcome=ToolOutcome.error if is_error or _failed(tool_name, content)
            else ToolOutcome.success,
        )
    return None


def output_files(part: ResponsePart) -> list[FilePart]:
    """The files a code execution result created (``content[].file_id``), as file parts of
    files stored with Anthropic."""
    if not isinstance(part, NativeToolReturnPart) or part.tool_name not in _ERROR_REPORTING_TOOLS:
        return []
    content = thaw_json(part.content)
    items = content.get("content") if isinstance(content, dict) else None
    files = []
    for item in items if isinstance(items, list) else ():
        file_id = item.get("file_id") if isinstance(item, dict) else None
        if isinstance(file_id, str) and file_id:
            files.append(FilePart(UploadedFile(PROVIDER, file_id), id=file_id,
                                  provider=_provider({"type": "code_execution_output"})))
    return files


def decode_response(value: Any, *, model_name: str | None = None) -> ResponseMessage:
    """A buffered Messages API response body (already JSON-decoded) as a ResponseMessage."""
    body = _read.obj(value, "$")
    blocks = _read.arr(body.get("content"), "$.content")
    parts = []
    unknown = []
    for index, block in enumerate(blocks):
        part = decode_block(block, f"$.content[{index}]")
        if part is not None:
            parts.append(part)
            parts.extend(output_files(part))
        else:
            unknown.append(block)
    raw = _read.opt_str(body, "stop_reason", "$")
    stop_sequence = _read.opt_str(body, "stop_sequence", "$")
    return ResponseMessage(
        parts=tuple(parts),
        usage=decode_usage(_read.opt_obj(body, "usage", "$")),
        model_name=_read.opt_str(body, "model", "$") or model_name,
        provider_name=PROVIDER,
        provider_response_id=_read.opt_str(body, "id", "$"),
        finish_reason=finish_reason(raw),
        raw_finish_reason=raw,
        provider_details=_response_details(stop_sequence, unknown),
    )


def _response_details(stop_sequence: str | None, unknown: list[Any]) -> ProviderDetails | None:
    details: dict[str, Any] = {}
    if stop_sequence:
        details["stop_sequence"] = stop_sequence
    if unknown:
        details["content"] = unknown
    return details_or_none(details)


def stream_error(event: dict[str, Any]) -> ProviderRequestError:
    """The normalized provider error for an in-stream ``error`` event."""
    raw_error = event.get("error")
    error: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {}
    code = error.get("type") if isinstance(error.get("type"), str) else None
    message = error.get("message") if isinstance(error.get("message"), str) else None
    status = _ERROR_STATUS.get(code or "", 500)
    cls: Any = error_class_for_status(status)
    text = f"anthropic stream error ({code or 'unknown'}): {message or 'no message'}"
    return cls(text[:2048], status=status, code=code, provider_message=message,
               provider_name=PROVIDER)


class StreamDecoder:
    """Messages API stream events -> model stream events (pure: no I/O).

    Anthropic block indexes are mapped to neutral part indexes starting at 0 in order of first
    appearance; blocks of unknown types are skipped entirely.  Usage from ``message_start`` is
    updated by every ``message_delta`` (whose counters are cumulative).
    """

    def __init__(self, model_name: str | None = None) -> None:
        self.model_name = model_name
        self.response_id: str | None = None
        self.usage = RequestUsage()
        self.finish_reason: FinishReason | None = None
        self.raw_finish_reason: str | None = None
        self._usage_fields: dict[str, Any] = {}
        self._indexes: dict[int, int] = {}
        self._open: set[int] = set()
        self._parts = PartAccumulator()
        self._stopped = False
        self._stop_sequence: str | None = None
        self._unknown_blocks: list[dict[str, Any]] = []
        self._citations: dict[int, list[Any]] = {}  # wire index -> citations gathered so far

    @property
    def provider_details(self) -> ProviderDetails | None:
        """The matched ``stop_sequence`` and unknown blocks, as the buffered decode keeps them."""
        return _response_details(self._stop_sequence, self._unknown_blocks)

    def _emit(self, event: ModelStreamEvent, out: list[ModelStreamEvent]) -> None:
        self._parts.apply(event)
        out.append(event)

    def _merge_usage(self, usage: Any, path: str) -> None:
        if usage is None:
            return
        usage = _read.obj(usage, path)
        for key, value in usage.items():
            if value is not None:
                self._usage_fields[key] = value
        self.usage = decode_usage(self._usage_fields, path)

    def feed(self, event: SseEvent) -> list[ModelStreamEvent]:
        data = _read.obj(_read.parse(event.data, "$event"), "$event")
        kind = _read.str_(data, "type", "$event")
        out: list[ModelStreamEvent] = []
        if kind == "message_start":
            message = _read.field_obj(data, "message", "$event")
            self.response_id = _read.opt_str(message, "id", "$event.message") or self.response_id
            self.model_name = _read.opt_str(message, "model", "$event.message") or self.model_name
            self._merge_usage(message.get("usage"), "$event.message.usage")
        elif kind == "content_block_start":
            self._start(data, out)
        elif kind == "content_block_delta":
            self._delta(data, out)
        elif kind == "content_block_stop":
            self._stop(data, out)
        elif kind == "message_delta":
            delta = _read.opt_obj(data, "delta", "$event") or {}
            raw = _read.opt_str(delta, "stop_reason", "$event.delta")
            if raw is not None:
                self.raw_finish_reason = raw
                self.finish_reason = finish_reason(raw)
            self._stop_sequence = (
                _read.opt_str(delta, "stop_sequence", "$event.delta") or self._stop_sequence
            )
            self._merge_usage(data.get("usage"), "$event.usage")
        elif kind == "message_stop":
            self._stopped = True
        elif kind == "error":
            raise stream_error(data)
        # "ping" and future event types carry nothing to decode
        return out

    def _index(self, data: dict[str, Any]) -> int:
        index = _read.opt_int(data, "index", "$event")
        if index is None:
            raise _read.fail("$event.index", "missing content block index")
        return index

    def _start(self, data: dict[str, Any], out: list[ModelStreamEvent]) -> None:
        wire_index = self._index(data)
        if wire_index in self._indexes:
            raise _read.fail("$event.index", f"content block {wire_index} started twice")
        block = _read.field_obj(data, "content_block", "$event")
        kind = _read.str_(block, "type", "$event.content_block")
        if kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
            # arguments arrive as input_json_delta; a non-empty start input is kept as the prefix
            initial = block.get("input")
            args = zjson.dumps(initial) if isinstance(initial, dict) and initial else ""
            block = dict(block, input=None)
            part = decode_block(block, "$event.content_block")
            assert part is not None
            part = _with_args(part, args)
        else:
            part = decode_block(block, "$event.content_block")
        if part is None:
            self._unknown_blocks.append(block)
            return
        neutral = len(self._indexes)
        self._indexes[wire_index] = neutral
        self._open.add(wire_index)
        self._emit(PartStartEvent(neutral, part), out)

    def _delta(self, data: dict[str, Any], out: list[ModelStreamEvent]) -> None:
        wire_index = self._index(data)
        if wire_index not in self._indexes:
            return  # a block of an unknown type we skipped
        if wire_index not in self._open:
            raise _read.fail("$event.index", f"delta for closed content block {wire_index}")
        neutral = self._indexes[wire_index]
        delta = _read.field_obj(data, "delta", "$event")
        kind = _read.str_(delta, "type", "$event.delta")
        if kind == "text_delta":
            change: Any = TextPartDelta(_read.str_(delta, "text", "$event.delta"))
        elif kind == "thinking_delta":
            change = ThinkingPartDelta(_read.str_(delta, "thinking", "$event.delta"))
        elif kind == "signature_delta":
            change = ThinkingPartDelta(signature_delta=_read.str_(delta, "signature", "$event.delta"))
        elif kind == "input_json_delta":
            change = ToolCallPartDelta(_read.str_(delta, "partial_json", "$event.delta"))
        elif kind == "citations_delta":
            citation = _read.field_obj(delta, "citation", "$event.delta")
            self._citations.setdefault(wire_index, []).append(citation)
            return  # attached to the text part when its block stops
        else:
            return  # future delta kinds have no neutral delta
        try:
            self._emit(PartDeltaEvent(neutral, change), out)
        except Exception as exc:  # a delta that does not fit its block's kind
            raise _read.fail("$event.delta", str(exc)) from None

    def _stop(self, data: dict[str, Any], out: list[ModelStreamEvent]) -> None:
        wire_index = self._index(data)
        if wire_index not in self._indexes:
            return
        if wire_index not in self._open:
            raise _read.fail("$event.index", f"content block {wire_index} stopped twice")
        self._open.discard(wire_index)
        neutral = self._indexes[wire_index]
        part = self._parts.part(neutral)
        if part is None:  # every mapped index was started when its block opened
            raise _read.fail("$event.index", f"content block {wire_index} was never started")
        if isinstance(part, (ToolCallPart, NativeToolCallPart)) and not part.args.strip():
            part = _with_args(part, "{}")
        citations = self._citations.pop(wire_index, None)
        if citations:
            if not isinstance(part, TextPart):
                raise _read.fail("$event.delta", "citations for a block that is not text")
            earlier = part.provider.details.get("citations", ()) if (
                part.provider is not None and part.provider.details is not None) else ()
            part = replace(part, provider=_provider({"citations": [*earlier, *citations]}))
        self._emit(PartEndEvent(neutral, part), out)
        for file in output_files(part):
            # files have no wire block of their own: key them below every wire index
            extra = len(self._indexes)
            self._indexes[-1 - extra] = extra
            self._emit(PartStartEvent(extra, file), out)
            self._emit(PartEndEvent(extra, file), out)

    def finish(self) -> list[ModelStreamEvent]:
        """End of stream: every block must have stopped."""
        if self._open:
            raise _read.fail("$stream", "stream ended inside a content block")
        if not self._stopped:
            raise _read.fail("$stream", "stream ended before message_stop")
        return []


def _with_args(part: Any, args: str) -> ResponsePart:
    result: ResponsePart = replace(part, args=args)
    return result
