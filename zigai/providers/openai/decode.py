"""Decode Responses API JSON into provider-neutral response parts, usage and finish reasons.

Everything here is pure and shared by the buffered decoder (:func:`decode_response`) and
the stream state machine (``stream.py``), so a streamed response accumulates to exactly the
parts the buffered decoder builds from the same ``response`` object.

Output items:

* ``message`` → one :class:`TextPart` per ``output_text`` (and per ``refusal``, marked with
  ``{"refusal": true}`` in its provider details; a refusal makes the finish reason
  ``content_filter``).  Non-empty ``annotations``/``logprobs`` are kept in provider details.
* ``reasoning`` → :class:`ThinkingPart`: content is the summary texts joined by a blank line
  (falling back to ``reasoning_text`` content), ``signature`` is ``encrypted_content`` (an
  empty one, as servers without encrypted reasoning send, means none), and the individual
  texts are kept by field as ``details["summary"]`` / ``details["content"]`` so replay sends
  each back in the field it arrived in.
* ``function_call`` → :class:`ToolCallPart` (``call_id`` is the tool call id, the item id is
  kept as ``id``); an item with status ``incomplete`` is not a usable call and is dropped.
* any other ``*_call`` item (``web_search_call``, ``code_interpreter_call``,
  ``file_search_call``, ``mcp_call``, ``image_generation_call`` ...) → a
  :class:`NativeToolCallPart` plus a :class:`NativeToolReturnPart` whose provider details hold
  the complete item (arguments and result per :mod:`.hosted_tools`); an
  ``image_generation_call`` adds a :class:`FilePart` with the image (its item keeps
  ``"result": null``), a ``code_interpreter_call`` one URL file part per image output.
* unknown item types are kept verbatim in ``ResponseMessage.provider_details["output"]``.

Every part carries ``ProviderPart(provider_name, id=<item id>)``.  Contract violations raise
:class:`OpenAIDecodeError` with the JSON path; no KeyError/TypeError escapes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
    ToolOutcome,
)
from zigai.providers._wire import details_or_none
from zigai.providers.openai import hosted_tools
from zigai.providers.openai.errors import OpenAIDecodeError
from zigai.usage import InvalidUsage, RequestUsage

__all__ = [
    "decode_response",
    "decode_usage",
    "decode_output_item",
    "finish_reason",
    "text_part",
    "reasoning_part",
    "function_call_part",
]


# -- typed accessors ------------------------------------------------------------------------


def obj(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise OpenAIDecodeError(f"expected an object, got {zjson.type_name(value)}", path=path)
    return value


def string(container: Mapping[str, Any], key: str, path: str, *, optional: bool = False
           ) -> str | None:
    value = container.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise OpenAIDecodeError(f"expected a string, got {zjson.type_name(value)}",
                                path=f"{path}.{key}")
    return value


def array(container: Mapping[str, Any], key: str, path: str, *, optional: bool = False
          ) -> list[Any]:
    value = container.get(key)
    if value is None and optional:
        return []
    if not isinstance(value, list):
        raise OpenAIDecodeError(f"expected an array, got {zjson.type_name(value)}",
                                path=f"{path}.{key}")
    return value


def _count(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise OpenAIDecodeError("expected a non-negative integer", path=path)
    return value


# -- parts ----------------------------------------------------------------------------------


def text_part(content: Any, item_id: str | None, path: str, provider_name: str
              ) -> tuple[TextPart, bool]:
    """One message content entry as a TextPart; the flag says it was a refusal."""
    entry = obj(content, path)
    kind = string(entry, "type", path)
    extra: dict[str, Any] = {}
    if kind == "output_text":
        text = string(entry, "text", path)
        for key in ("annotations", "logprobs"):
            value = entry.get(key)
            if value:
                extra[key] = value
        refusal = False
    elif kind == "refusal":
        text = string(entry, "refusal", path)
        extra["refusal"] = True
        refusal = True
    else:
        raise OpenAIDecodeError(f"unknown message content type {kind!r}", path=f"{path}.type")
    assert text is not None
    provider = ProviderPart(provider_name, id=item_id, details=details_or_none(extra))
    return TextPart(text, id=item_id, provider=provider), refusal


def message_parts(item: Mapping[str, Any], path: str, provider_name: str
                  ) -> tuple[list[TextPart], bool]:
    item_id = string(item, "id", path, optional=True)
    parts: list[TextPart] = []
    refused = False
    for index, content in enumerate(array(item, "content", path)):
        part, refusal = text_part(content, item_id, f"{path}.content[{index}]", provider_name)
        parts.append(part)
        refused = refused or refusal
    return parts, refused


def reasoning_part(item: Mapping[str, Any], path: str, provider_name: str) -> ThinkingPart:
    item_id = string(item, "id", path, optional=True)
    summaries = _reasoning_texts(item, "summary", path)
    contents = _reasoning_texts(item, "content", path)
    signature = string(item, "encrypted_content", path, optional=True) or None
    provider = ProviderPart(provider_name, id=item_id,
                            details=reasoning_details(summaries, contents))
    return ThinkingPart("\n\n".join(summaries or contents), id=item_id, signature=signature,
                        provider=provider)


def reasoning_details(summaries: Sequence[str], contents: Sequence[str]
                      ) -> ProviderDetails | None:
    """What a reasoning item carried, by field, so replay sends each text back where it came."""
    details: dict[str, Any] = {}
    if summaries:
        details["summary"] = list(summaries)
    if contents:
        details["content"] = list(contents)
    return details_or_none(details)


def _reasoning_texts(item: Mapping[str, Any], field: str, path: str) -> list[str]:
    texts: list[str] = []
    for index, entry in enumerate(array(item, field, path, optional=True)):
        where = f"{path}.{field}[{index}]"
        text = string(obj(entry, where), "text", where)
        assert text is not None
        texts.append(text)
    return texts


def function_call_part(item: Mapping[str, Any], path: str, provider_name: str
                       ) -> ToolCallPart | None:
    """The call, or None when the item is ``incomplete`` (no usable arguments)."""
    if item.get("status") == "incomplete":
        return None
    item_id = string(item, "id", path, optional=True)
    call_id = string(item, "call_id", path)
    name = string(item, "name", path)
    arguments = string(item, "arguments", path)
    if not call_id or not name:
        raise OpenAIDecodeError("function_call needs a call_id and a name", path=path)
    assert arguments is not None
    return ToolCallPart(name, arguments, call_id, id=item_id,
                        provider=ProviderPart(provider_name, id=item_id))


def native_parts(item: Mapping[str, Any], path: str, provider_name: str
                 ) -> list[ResponsePart]:
    """A hosted tool's call and return parts (and, for image generation, the image)."""
    kind = string(item, "type", path)
    assert kind is not None
    item_id = string(item, "id", path)
    if not item_id:
        raise OpenAIDecodeError("provider tool call needs an id", path=f"{path}.id")
    tool = kind[: -len("_call")]
    image = None
    kept = dict(item)
    if kind == "image_generation_call":
        image = hosted_tools.image_part(item, path, provider_name, item_id)
        if "result" in kept:
            kept["result"] = None  # the bytes live in the file part only
    provider = ProviderPart(provider_name, id=item_id, details=details_or_none(kept))
    content, failed = hosted_tools.item_result(kind, item)
    outcome = ToolOutcome.error if failed else ToolOutcome.success
    parts: list[ResponsePart] = [
        NativeToolCallPart(tool, item_id, provider, args=hosted_tools.item_call_args(kind, item)),
        NativeToolReturnPart(tool, item_id, provider, content=content, outcome=outcome),
    ]
    if image is not None:
        parts.append(image)
    if kind == "code_interpreter_call":
        parts.extend(hosted_tools.output_images(item, provider_name, item_id))
    return parts


def decode_output_item(
    item: Any, path: str, provider_name: str
) -> tuple[list[ResponsePart], bool, bool, dict[str, Any] | None]:
    """Parts for one output item, plus (refused, incomplete_call, unknown_item)."""
    entry = obj(item, path)
    kind = string(entry, "type", path)
    assert kind is not None
    if kind == "message":
        parts, refused = message_parts(entry, path, provider_name)
        return list(parts), refused, False, None
    if kind == "reasoning":
        return [reasoning_part(entry, path, provider_name)], False, False, None
    if kind == "function_call":
        call = function_call_part(entry, path, provider_name)
        return ([call] if call else []), False, call is None, None
    if kind.endswith("_call") and kind != "_call":
        return native_parts(entry, path, provider_name), False, False, None
    return [], False, False, dict(entry)


# -- usage and finish -----------------------------------------------------------------------

_INPUT_FIELDS = {"cached_tokens": "cache_read_tokens", "cache_write_tokens": "cache_write_tokens",
                 "audio_tokens": "input_audio_tokens"}
_OUTPUT_FIELDS = {"reasoning_tokens": "reasoning_tokens", "audio_tokens": "output_audio_tokens"}


def decode_usage(value: Any, path: str = "$.usage") -> RequestUsage:
    """Normalize a Responses ``usage`` object (cached/audio ⊆ input, reasoning/audio ⊆ output)."""
    usage = obj(value, path)
    fields: dict[str, int] = {
        "input_tokens": _count(usage.get("input_tokens"), f"{path}.input_tokens"),
        "output_tokens": _count(usage.get("output_tokens"), f"{path}.output_tokens"),
    }
    details: dict[str, int] = {}
    for key, known in (("input_tokens_details", _INPUT_FIELDS),
                       ("output_tokens_details", _OUTPUT_FIELDS)):
        raw = usage.get(key)
        if raw is None:
            continue
        where = f"{path}.{key}"
        for name, count in obj(raw, where).items():
            if count is None:  # gateways (LiteLLM) send null for counters they do not know
                continue
            if name in known:
                fields[known[name]] = _count(count, f"{where}.{name}")
            elif isinstance(count, int) and not isinstance(count, bool) and count >= 0:
                details[f"{key}.{name}"] = count
    for name, count in usage.items():
        if name in ("input_tokens", "output_tokens", "total_tokens") or name.endswith("_details"):
            continue
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            details[name] = count
    try:
        return RequestUsage(**fields, details=details)  # type: ignore[arg-type]
    except InvalidUsage as exc:
        raise OpenAIDecodeError(f"inconsistent usage: {exc}", path=path) from None


def finish_reason(
    status: str | None,
    incomplete_details: Any,
    *,
    has_tool_calls: bool,
    refused: bool,
    incomplete_call: bool,
    path: str = "$",
) -> tuple[FinishReason | None, str | None]:
    """Map ``status`` / ``incomplete_details.reason`` to (FinishReason, raw reason)."""
    if refused:
        return FinishReason.content_filter, "refusal"
    if status is None:
        if incomplete_call:
            return FinishReason.length, None
        return (FinishReason.tool_call if has_tool_calls else FinishReason.stop), None
    if status == "completed":
        return (FinishReason.tool_call if has_tool_calls else FinishReason.stop), status
    if status == "incomplete":
        reason = None
        if incomplete_details is not None:
            reason = string(obj(incomplete_details, f"{path}.incomplete_details"), "reason",
                            f"{path}.incomplete_details", optional=True)
        if reason == "max_output_tokens":
            return FinishReason.length, reason
        if reason == "content_filter":
            return FinishReason.content_filter, reason
        if incomplete_call:
            return FinishReason.length, reason or status
        return FinishReason.other, reason or status
    if status == "failed":
        return FinishReason.error, status
    return FinishReason.other, status


# -- whole response -------------------------------------------------------------------------


def decode_response(
    value: Any,
    *,
    provider_name: str = "openai",
    model_name: str | None = None,
    path: str = "$",
) -> ResponseMessage:
    """A complete Responses API ``response`` object as one ResponseMessage."""
    root = obj(value, path)
    parts: list[ResponsePart] = []
    refused = incomplete_call = False
    unknown: list[dict[str, Any]] = []
    for index, item in enumerate(array(root, "output", path)):
        item_parts, item_refused, item_incomplete, other = decode_output_item(
            item, f"{path}.output[{index}]", provider_name
        )
        parts.extend(item_parts)
        refused = refused or item_refused
        incomplete_call = incomplete_call or item_incomplete
        if other is not None:
            unknown.append(other)
    status = string(root, "status", path, optional=True)
    reason, raw = finish_reason(
        status, root.get("incomplete_details"),
        has_tool_calls=any(isinstance(p, ToolCallPart) for p in parts),
        refused=refused, incomplete_call=incomplete_call, path=path,
    )
    usage = RequestUsage()
    if root.get("usage") is not None:
        usage = decode_usage(root["usage"], f"{path}.usage")
    details: dict[str, Any] = {}
    if unknown:
        details["output"] = unknown
    if root.get("error") is not None:
        details["error"] = root["error"]
    return ResponseMessage(
        parts=tuple(parts),
        usage=usage,
        model_name=string(root, "model", path, optional=True) or model_name,
        provider_name=provider_name,
        provider_response_id=string(root, "id", path, optional=True),
        finish_reason=reason,
        raw_finish_reason=raw,
        provider_details=details_or_none(details),
    )
