"""Decode buffered Chat Completions responses: choices, tool calls, finish reasons and usage.

Job
    :func:`decode_response` turns one parsed ``chat.completion`` JSON value into a neutral
    :class:`~zigai.messages.ResponseMessage`.  It is pure and shared with the stream decoder
    (:func:`decode_usage`, :func:`finish_reason`).

Invariants
    * Malformed shapes raise :class:`OpenAICompatibleDecodeError` carrying the JSON path
      (``$.choices[0].message.tool_calls[1].function.name``); nothing deeper leaks a
      ``KeyError``/``TypeError``.  The error is a ``ProviderResponseDecodeError`` (retry
      category ``decode``) and a ``ProviderError``.
    * The first choice is decoded; parts come out in the order thinking, text, tool calls.
      ``reasoning_content`` and ``reasoning`` (gateway dialects) both become one
      :class:`ThinkingPart` owned by the provider (``ProviderPart.details.field`` names the
      wire field so a provider that wants it back can replay it).
    * Usage is normalized: ``prompt_tokens`` → input, ``completion_tokens`` → output,
      ``prompt_tokens_details.cached_tokens``/``cache_write_tokens``/``audio_tokens`` and
      ``completion_tokens_details.reasoning_tokens``/``audio_tokens`` are subsets; every
      other non-negative integer counter (top level or inside a details object) is kept in
      ``details`` under its provider name.  Floats (costs, timings) are not counters.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from zigai.errors import ProviderError
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
from zigai.pricing.cost import REPORTED_COST_KEY
from zigai.provider import ProviderResponseDecodeError
from zigai.providers._wire import details_or_none
from zigai.usage import InvalidUsage, RequestUsage

__all__ = [
    "OpenAICompatibleDecodeError",
    "decode_error",
    "decode_response",
    "decode_usage",
    "reported_cost_usd",
    "finish_reason",
    "REASONING_FIELDS",
    "DETAIL_KEYS",
]

#: Assistant fields that carry reasoning text, in order of preference.
REASONING_FIELDS = ("reasoning_content", "reasoning")
#: Response (or chunk) keys kept verbatim in ``ResponseMessage.provider_details``.
DETAIL_KEYS = ("system_fingerprint", "service_tier", "provider", "openrouter_metadata")

_FINISH = {
    "stop": FinishReason.stop,
    "end_turn": FinishReason.stop,
    "stop_sequence": FinishReason.stop,
    "length": FinishReason.length,
    "max_tokens": FinishReason.length,
    "model_length": FinishReason.length,
    "tool_calls": FinishReason.tool_call,
    "function_call": FinishReason.tool_call,
    "tool_use": FinishReason.tool_call,
    "content_filter": FinishReason.content_filter,
    "error": FinishReason.error,
}


class OpenAICompatibleDecodeError(ProviderResponseDecodeError, ProviderError):
    """A Chat Completions response did not have the documented shape; ``path`` locates it."""

    def __init__(self, message: str, *, path: str = "$", provider_name: str = "",
                 status: int | None = None) -> None:
        super().__init__(message, status=status, provider_name=provider_name)
        self.path = path


def decode_error(message: str, *, path: str = "$", provider_name: str = "") -> OpenAICompatibleDecodeError:
    """The named decode error with its JSON path appended to the message."""
    return OpenAICompatibleDecodeError(f"{message} at {path}", path=path, provider_name=provider_name)


def finish_reason(raw: Any, path: str = "$.choices[0].finish_reason") -> FinishReason | None:
    """Normalize a wire finish reason; None when the provider sent none."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise decode_error("finish_reason must be a string", path=path)
    return _FINISH.get(raw, FinishReason.other)


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def decode_usage(raw: Any, path: str = "$.usage") -> RequestUsage:
    """Normalized usage; unknown integer counters go to ``details`` by provider name."""
    if raw is None:
        return RequestUsage()
    if not isinstance(raw, Mapping):
        raise decode_error("usage must be an object", path=path)
    input_tokens = _int(raw.get("prompt_tokens")) or 0
    output_tokens = _int(raw.get("completion_tokens")) or 0
    details: dict[str, int] = {}
    known = {"prompt_tokens", "completion_tokens", "total_tokens", "cost"}  # cost is USD, not tokens
    for key, value in raw.items():
        if key in known:
            continue
        count = _int(value)
        if count is not None:
            details[key] = count
    prompt = raw.get("prompt_tokens_details")
    completion = raw.get("completion_tokens_details")
    prompt = prompt if isinstance(prompt, Mapping) else {}
    completion = completion if isinstance(completion, Mapping) else {}
    cache_read = _int(prompt.get("cached_tokens")) or 0
    cache_write = _int(prompt.get("cache_write_tokens")) or 0
    input_audio = _int(prompt.get("audio_tokens")) or 0
    reasoning = _int(completion.get("reasoning_tokens")) or 0
    output_audio = _int(completion.get("audio_tokens")) or 0
    mapped_prompt = {"cached_tokens", "cache_write_tokens", "audio_tokens"}
    mapped_completion = {"reasoning_tokens", "audio_tokens"}
    for container, mapped in ((prompt, mapped_prompt), (completion, mapped_completion)):
        for key, value in container.items():
            count = _int(value)
            if key not in mapped and count is not None and key not in details:
                details[key] = count
    try:
        return RequestUsage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
            input_audio_tokens=input_audio,
            output_audio_tokens=output_audio,
            reasoning_tokens=reasoning,
            details=details,  # type: ignore[arg-type]
        )
    except InvalidUsage as exc:
        raise decode_error(f"inconsistent usage counters ({exc})", path=path) from None


def reported_cost_usd(raw: Any, path: str = "$.usage") -> str | None:
    """The provider-reported request cost (``usage.cost``, in USD, as OpenRouter reports it)
    as an exact decimal string, or None when the usage has no cost."""
    if not isinstance(raw, Mapping) or raw.get("cost") is None:
        return None
    cost = raw["cost"]
    if isinstance(cost, bool) or not isinstance(cost, int | float) or not math.isfinite(cost) or cost < 0:
        raise decode_error("usage.cost must be a finite non-negative number of USD", path=f"{path}.cost")
    return repr(cost) if isinstance(cost, float) else str(cost)


def _text(value: Any, path: str) -> str:
    """Message content: a string, null, or a list of ``{"type": "text", "text"}`` parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        pieces = []
        for index, item in enumerate(value):
            if not isinstance(item, Mapping) or not isinstance(item.get("text", ""), str):
                raise decode_error("content part must be a text object",
                                                  path=f"{path}[{index}]")
            pieces.append(item.get("text", ""))
        return "".join(pieces)
    raise decode_error("content must be a string, list or null", path=path)


def thinking_part(provider_name: str, field: str, content: str) -> ThinkingPart:
    return ThinkingPart(
        content,
        provider=ProviderPart(provider_name, details=ProviderDetails({"field": field})),
    )


def _tool_call(raw: Any, path: str) -> ToolCallPart:
    if not isinstance(raw, Mapping):
        raise decode_error("tool call must be an object", path=path)
    call_id = raw.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise decode_error("tool call id must be a non-empty string", path=f"{path}.id")
    function = raw.get("function")
    if not isinstance(function, Mapping):
        raise decode_error("tool call function must be an object",
                                          path=f"{path}.function")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise decode_error("function name must be a non-empty string",
                                          path=f"{path}.function.name")
    arguments = function.get("arguments", "")
    if arguments is None:
        arguments = ""
    if isinstance(arguments, Mapping):  # a few servers send an object instead of JSON text
        from zigai import json as zjson

        arguments = zjson.dumps(dict(arguments))
    if not isinstance(arguments, str):
        raise decode_error("function arguments must be a string",
                                          path=f"{path}.function.arguments")
    return ToolCallPart(name, arguments, call_id)


def response_details(document: Mapping[str, Any], choice: Mapping[str, Any] | None) -> dict[str, Any]:
    details = {k: document[k] for k in DETAIL_KEYS if document.get(k) is not None}
    if choice is not None and choice.get("logprobs") is not None:
        details["logprobs"] = choice["logprobs"]
    return details


def decode_response(
    value: Any, *, provider_name: str = "openai_compatible", model_name: str | None = None
) -> ResponseMessage:
    """One buffered ``chat.completion`` body as a ResponseMessage."""
    if not isinstance(value, Mapping):
        raise decode_error("response must be a JSON object", path="$",
                                          provider_name=provider_name)
    try:
        return _decode(value, provider_name, model_name)
    except OpenAICompatibleDecodeError as exc:
        exc.provider_name = provider_name
        raise


def _decode(value: Mapping[str, Any], provider_name: str, model_name: str | None) -> ResponseMessage:
    choices = value.get("choices")
    if not isinstance(choices, list) or not choices:
        raise decode_error("choices must be a non-empty array", path="$.choices")
    choice = choices[0]
    if not isinstance(choice, Mapping):
        raise decode_error("choice must be an object", path="$.choices[0]")
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise decode_error("message must be an object", path="$.choices[0].message")
    parts: list[ResponsePart] = []
    for field in REASONING_FIELDS:
        reasoning = message.get(field)
        if reasoning is None:
            continue
        if not isinstance(reasoning, str):
            raise decode_error(f"{field} must be a string",
                                              path=f"$.choices[0].message.{field}")
        if reasoning:
            parts.append(thinking_part(provider_name, field, reasoning))
            break
    text = _text(message.get("content"), "$.choices[0].message.content")
    if text:
        parts.append(TextPart(text))
    calls = message.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise decode_error("tool_calls must be an array",
                                              path="$.choices[0].message.tool_calls")
        for index, raw in enumerate(calls):
            parts.append(_tool_call(raw, f"$.choices[0].message.tool_calls[{index}]"))
    details = response_details(value, choice)
    cost = reported_cost_usd(value.get("usage"))
    if cost is not None:
        details[REPORTED_COST_KEY] = cost
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        details["refusal"] = refusal
    annotations = message.get("annotations")
    if annotations:  # e.g. url_citation entries from search-enabled models
        if not isinstance(annotations, list):
            raise decode_error("annotations must be an array",
                               path="$.choices[0].message.annotations")
        details["annotations"] = annotations
    raw_reason = choice.get("finish_reason")
    response_id = value.get("id")
    model = value.get("model")
    return ResponseMessage(
        parts=tuple(parts),
        usage=decode_usage(value.get("usage")),
        model_name=model if isinstance(model, str) and model else model_name,
        provider_name=provider_name,
        provider_response_id=response_id if isinstance(response_id, str) and response_id else None,
        finish_reason=finish_reason(raw_reason),
        raw_finish_reason=raw_reason if isinstance(raw_reason, str) else None,
        provider_details=details_or_none(details),
    )
