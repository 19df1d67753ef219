"""Decode Mistral Conversations answers: output entries, usage, and the event stream.

Output entries (:func:`decode_outputs`, shared by the buffered decoder and stored sessions):

* ``message.output`` → one :class:`TextPart` joining its text (a plain string, or ``text``
  chunks), with the entry id; ``tool_reference`` chunks (web search sources) are kept as
  ``details["references"]`` of that text part; ``thinking`` chunks become
  :class:`ThinkingPart`; other chunk kinds (``tool_file``, ``image_url`` ...) are kept in
  ``ResponseMessage.provider_details["chunks"]``.
* ``function.call`` → :class:`ToolCallPart` (``tool_call_id``; arguments as JSON text).
* ``tool.execution`` (a Mistral-run tool) → :class:`NativeToolCallPart` +
  :class:`NativeToolReturnPart` named after the tool, with ``{"id", "name", "arguments",
  "info"}`` as provider details so the entry can be replayed.
* other entry types are kept verbatim in ``provider_details["outputs"]``.

The finish reason is ``tool_call`` when the answer calls a function and ``stop`` otherwise
(Conversations reports no other reason).  Usage: ``prompt_tokens`` / ``completion_tokens``;
``connector_tokens`` and per-connector counts stay in ``usage.details``.

:class:`StreamDecoder` reads ``conversation.response.started|done|error``,
``message.output.delta``, ``function.call.delta`` and ``tool.execution.started|delta|done``
and accumulates the same parts; a stream that ends before ``conversation.response.done``
raises :class:`MistralDecodeError`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from zigai import json as zjson
from zigai.messages import (
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
)
from zigai.model import ModelStreamEvent
from zigai.provider import ProviderServerError
from zigai.providers._native import NativeStreamDecoder
from zigai.providers._wire import JsonReader, details_or_none
from zigai.providers.mistral._encode import PROVIDER_NAME
from zigai.providers.mistral._errors import MistralDecodeError
from zigai.usage import InvalidUsage, RequestUsage, UsageDetails

__all__ = ["StreamDecoder", "decode_outputs", "decode_response", "decode_usage"]

_R = JsonReader(MistralDecodeError)


def _provider(entry_id: str | None, details: dict[str, Any] | None = None) -> ProviderPart:
    return ProviderPart(PROVIDER_NAME, id=entry_id, details=details_or_none(details or {}))


def _thinking_text(value: Any, path: str) -> str:
    if isinstance(value, str):
        return value
    texts = []
    for index, chunk in enumerate(_R.arr(value, path)):
        item = _R.obj(chunk, f"{path}[{index}]")
        if item.get("type", "text") == "text":
            texts.append(_R.str_(item, "text", f"{path}[{index}]"))
    return "".join(texts)


def _arguments(entry: dict[str, Any], path: str) -> str:
    value = entry.get("arguments")
    if value is None:
        return "{}"
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return zjson.dumps(value)
    raise _R.fail(f"{path}.arguments", "expected a string or an object")


def execution_details(entry_id: str, name: str, arguments: str, info: Any) -> dict[str, Any]:
    details: dict[str, Any] = {"id": entry_id, "name": name, "arguments": arguments}
    if info is not None:
        details["info"] = info
    return details


def _execution_parts(entry_id: str, name: str, arguments: str, info: Any
                     ) -> tuple[NativeToolCallPart, NativeToolReturnPart]:
    provider = _provider(entry_id, execution_details(entry_id, name, arguments, info))
    return (NativeToolCallPart(name, entry_id, provider, args=arguments),
            NativeToolReturnPart(name, entry_id, provider, content=info))


def _message_parts(entry: dict[str, Any], path: str, chunks_out: list[Any]) -> list[ResponsePart]:
    entry_id = _R.opt_str(entry, "id", path)
    content = entry.get("content")
    if isinstance(content, str):
        return [TextPart(content, id=entry_id, provider=_provider(entry_id))]
    parts: list[ResponsePart] = []
    texts: list[str] = []
    references: list[Any] = []
    text_at: int | None = None
    for index, chunk in enumerate(_R.arr(content, f"{path}.content")):
        where = f"{path}.content[{index}]"
        item = _R.obj(chunk, where)
        kind = _R.str_(item, "type", where)
        if kind == "text":
            texts.append(_R.str_(item, "text", where))
            if text_at is None:
                text_at = len(parts)
        elif kind == "thinking":
            parts.append(ThinkingPart(_thinking_text(item.get("thinking"), f"{where}.thinking"),
                                      id=entry_id, provider=_provider(entry_id)))
        elif kind == "tool_reference":
            references.append(item)
            if text_at is None:
                text_at = len(parts)
        else:
            chunks_out.append(item)
    if text_at is not None:
        details = {"references": references} if references else None
        parts.insert(text_at, TextPart("".join(texts), id=entry_id,
                                       provider=_provider(entry_id, details)))
    return parts


def decode_outputs(outputs: Any, path: str) -> tuple[list[ResponsePart], dict[str, Any]]:
    """The neutral parts of output entries and the response-level details they leave."""
    parts: list[ResponsePart] = []
    chunks: list[Any] = []
    unknown: list[Any] = []
    for index, value in enumerate(_R.arr(outputs, path)):
        where = f"{path}[{index}]"
        entry = _R.obj(value, where)
        kind = _R.str_(entry, "type", where)
        if kind == "message.output":
            parts.extend(_message_parts(entry, where, chunks))
        elif kind == "function.call":
            entry_id = _R.opt_str(entry, "id", where)
            call_id = _R.str_(entry, "tool_call_id", where)
            name = _R.str_(entry, "name", where)
            if not call_id or not name:
                raise _R.fail(where, "a function call needs a tool_call_id and a name")
            parts.append(ToolCallPart(name, _arguments(entry, where), call_id, id=entry_id,
                                      provider=_provider(entry_id)))
        elif kind == "tool.execution":
            entry_id = _R.str_(entry, "id", where)
            name = _R.str_(entry, "name", where)
            parts.extend(_execution_parts(entry_id, name, _arguments(entry, where),
                                          entry.get("info")))
        else:
            unknown.append(entry)
    details: dict[str, Any] = {}
    if chunks:
        details["chunks"] = chunks
    if unknown:
        details["outputs"] = unknown
    return parts, details


def decode_usage(value: Any, path: str = "$.usage") -> RequestUsage:
    usage = _R.obj(value, path)
    details: dict[str, int] = {}
    connector_tokens = _R.opt_int(usage, "connector_tokens", path)
    if connector_tokens is not None:
        details["connector_tokens"] = connector_tokens
    for name, count in (_R.opt_obj(usage, "connectors", path) or {}).items():
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            details[f"connectors.{name}"] = count
    try:
        return RequestUsage(
            input_tokens=_R.opt_int(usage, "prompt_tokens", path) or 0,
            output_tokens=_R.opt_int(usage, "completion_tokens", path) or 0,
            details=UsageDetails(details),
        )
    except InvalidUsage as exc:  # pragma: no cover - the counters above are checked
        raise _R.fail(path, f"inconsistent usage: {exc}") from None


def _finish(parts: list[ResponsePart]) -> FinishReason:
    return FinishReason.tool_call if any(isinstance(p, ToolCallPart) for p in parts) else FinishReason.stop


def decode_response(value: Any, *, model_name: str | None = None,
                    provider_name: str = PROVIDER_NAME) -> ResponseMessage:
    """A ``conversation.response`` object as one ResponseMessage."""
    root = _R.obj(value, "$")
    parts, details = decode_outputs(root.get("outputs"), "$.outputs")
    model = None
    for entry in root["outputs"]:
        if isinstance(entry, dict) and isinstance(entry.get("model"), str):
            model = entry["model"]
    usage = decode_usage(root["usage"]) if root.get("usage") is not None else RequestUsage()
    return ResponseMessage(
        parts=tuple(parts), usage=usage, model_name=model or model_name,
        provider_name=provider_name,
        provider_response_id=_R.opt_str(root, "conversation_id", "$"),
        finish_reason=_finish(parts), provider_details=details_or_none(details),
    )


# -- streaming ------------------------------------------------------------------------------


class StreamDecoder(NativeStreamDecoder):
    """Incremental decoder of one streamed Conversations answer (pure)."""

    reader = _R
    terminal = "conversation.response.done"

    def __init__(self, model_name: str | None = None, provider_name: str = PROVIDER_NAME) -> None:
        super().__init__(model_name, provider_name)
        self._references: dict[int, list[Any]] = {}  # text part index -> tool references
        self._executions: dict[str, dict[str, Any]] = {}
        self._chunks: list[Any] = []

    @property
    def provider_details(self) -> ProviderDetails | None:
        return details_or_none({"chunks": self._chunks} if self._chunks else {})

    def _final_part(self, index: int, part: ResponsePart) -> ResponsePart:
        part = super()._final_part(index, part)
        references = self._references.get(index)
        if references and isinstance(part, TextPart):
            return replace(part, provider=_provider(part.id, {"references": references}))
        return part

    def _finished(self) -> None:
        self.finish_reason = _finish(list(self._parts.values()))

    # -- handlers -------------------------------------------------------------------------

    def _started(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        self.response_id = _R.opt_str(payload, "conversation_id", path) or self.response_id

    def _text_index(self, output: int, entry_id: str | None, out: list[ModelStreamEvent]) -> int:
        found = self._keys.get(("text", output))
        if found is None:
            found = self._start(TextPart("", id=entry_id, provider=_provider(entry_id)), out,
                                ("text", output))
        return found

    def _message_delta(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        output = _R.opt_int(payload, "output_index", path) or 0
        entry_id = _R.opt_str(payload, "id", path)
        self.model_name = _R.opt_str(payload, "model", path) or self.model_name
        content = payload.get("content")
        if isinstance(content, str):
            chunk: dict[str, Any] = {"type": "text", "text": content}
        else:
            chunk = _R.obj(content, f"{path}.content")
        kind = chunk.get("type")
        if kind == "text":
            text = _R.str_(chunk, "text", f"{path}.content")
            self._grow(self._text_index(output, entry_id, out), text, out)
        elif kind == "thinking":
            text = _thinking_text(chunk.get("thinking"), f"{path}.content.thinking")
            key = ("thinking", output, _R.opt_int(payload, "content_index", path) or 0)
            found = self._keys.get(key)
            if found is None:
                found = self._start(ThinkingPart("", id=entry_id, provider=_provider(entry_id)),
                                    out, key)
            self._grow(found, text, out)
        elif kind == "tool_reference":
            index = self._text_index(output, entry_id, out)
            self._references.setdefault(index, []).append(chunk)
        else:
            self._chunks.append(chunk)

    def _call_delta(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        entry_id = _R.opt_str(payload, "id", path)
        call_id = _R.str_(payload, "tool_call_id", path)
        name = _R.str_(payload, "name", path)
        found = self._keys.get(("call", call_id))
        if found is None:
            if not call_id or not name:
                raise _R.fail(path, "a function call needs a tool_call_id and a name")
            found = self._start(ToolCallPart(name, "", call_id, id=entry_id,
                                             provider=_provider(entry_id)), out, ("call", call_id))
        self._grow(found, _R.opt_str(payload, "arguments", path) or "", out)

    def _execution(self, payload: dict[str, Any], path: str) -> dict[str, Any]:
        entry_id = _R.str_(payload, "id", path)
        state = self._executions.setdefault(entry_id, {"id": entry_id, "arguments": ""})
        name = _R.opt_str(payload, "name", path)
        if name:
            state["name"] = name
        if "name" not in state:
            raise _R.fail(f"{path}.name", "a tool execution needs a name")
        return state

    def _execution_started(self, payload: dict[str, Any], path: str,
                           out: list[ModelStreamEvent]) -> None:
        state = self._execution(payload, path)
        arguments = payload.get("arguments")
        if isinstance(arguments, str):
            state["arguments"] = arguments

    def _execution_delta(self, payload: dict[str, Any], path: str,
                         out: list[ModelStreamEvent]) -> None:
        state = self._execution(payload, path)
        state["arguments"] += _R.opt_str(payload, "arguments", path) or ""

    def _execution_done(self, payload: dict[str, Any], path: str,
                        out: list[ModelStreamEvent]) -> None:
        state = self._execution(payload, path)
        info = payload.get("info")
        call, result = _execution_parts(state["id"], state["name"], state["arguments"] or "{}",
                                        info)
        for part in (call, result):
            self._end(self._start(part, out), out)

    def _done(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        if payload.get("usage") is not None:
            self.usage = decode_usage(payload["usage"], f"{path}.usage")
        self._complete = True

    def _error(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        message = payload.get("message")
        code = payload.get("code")
        raise ProviderServerError(
            f"{self.provider_name} stream error: {message if isinstance(message, str) else ''}",
            code=str(code) if code is not None else None,
            provider_message=message if isinstance(message, str) else None,
            provider_name=self.provider_name,
        )


StreamDecoder.handlers = {
    "conversation.response.started": StreamDecoder._started,
    "message.output.delta": StreamDecoder._message_delta,
    "function.call.delta": StreamDecoder._call_delta,
    "tool.execution.started": StreamDecoder._execution_started,
    "tool.execution.delta": StreamDecoder._execution_delta,
    "tool.execution.done": StreamDecoder._execution_done,
    "conversation.response.done": StreamDecoder._done,
    "conversation.response.error": StreamDecoder._error,
}
