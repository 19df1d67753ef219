"""Encode a neutral :class:`~zigai.model.ModelRequest` as one Cohere v2 Chat body (``POST chat``).

:func:`encode_request` is pure.  Wire mapping:

* ``messages`` in chronological order.  Request instructions come first as one ``system``
  message (Cohere has no separate instructions field); system prompts become ``system``
  messages where they occur; user prompts become ``user`` messages (a plain string, or
  ``text`` / ``image_url`` / ``document`` content items); tool returns become ``tool``
  messages whose content is one ``document`` holding the result (JSON results as JSON text),
  so Cohere can cite them; a retry prompt tied to a call is that call's ``tool`` message
  (``text`` content), otherwise a user message.
* Each :class:`~zigai.messages.ResponseMessage` becomes one ``assistant`` message:
  ``content`` items for text and Cohere thinking, ``tool_plan`` for the plan Cohere wrote
  before calling tools (kept as a thinking part marked ``{"tool_plan": true}``) and
  ``tool_calls``.  Thinking from another provider and provider-executed tool traffic are
  dropped (they mean nothing to Cohere).
* ``tools`` are ``function`` tools; ``tool_choice`` is ``REQUIRED`` / ``NONE`` (``auto`` is
  Cohere's default and is not sent); sampling settings use Cohere's names (``p``, ``k``,
  ``seed``, ``stop_sequences``, penalties), ``logprobs`` is a boolean; ``thinking`` is
  ``{"type": "enabled"|"disabled", "token_budget"?}``; structured output is
  ``response_format: {"type": "json_object", "json_schema"?}``.
* The ``cohere`` extension body (:class:`~zigai.settings.ProviderExtraBody`) carries
  Cohere-only fields; the documented ones are checked here before I/O: ``strict_tools``
  (boolean), ``documents`` (strings or objects), ``citation_options`` (an object whose
  ``mode`` is FAST/ACCURATE/OFF/ENABLED/DISABLED), ``safety_mode`` (CONTEXTUAL/STRICT/OFF)
  and ``priority`` (integer 0-999).  Keys the encoder owns are refused.
"""

from __future__ import annotations

import base64
from typing import Any

from zigai import json as zjson
from zigai.messages import (
    BytesSource,
    CachePoint,
    CapabilityLoadCallPart,
    CapabilityLoadReturnPart,
    DocumentContent,
    ImageContent,
    InstructionPart,
    NativeToolCallPart,
    NativeToolReturnPart,
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    SpeechPart,
    SpeechPromptPart,
    SystemPromptPart,
    TaggedText,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolAvailabilityPart,
    ToolCallPart,
    ToolReturnPart,
    UrlSource,
    UserPromptPart,
)
from zigai.messages.json_value import thaw_json
from zigai.model import ModelRequest
from zigai.providers._native import availability_text, capability_result
from zigai.providers.cohere._errors import CohereEncodeError

__all__ = ["EXTENSION_TAG", "PROVIDER_NAME", "RESERVED_KEYS", "encode_messages", "encode_request"]

PROVIDER_NAME = "cohere"
EXTENSION_TAG = "cohere"
RESERVED_KEYS = frozenset({
    "model", "stream", "messages", "tools", "tool_choice", "max_tokens", "temperature", "p",
    "k", "seed", "stop_sequences", "presence_penalty", "frequency_penalty", "logprobs",
    "response_format", "thinking",
})
_CITATION_MODES = frozenset({"FAST", "ACCURATE", "OFF", "ENABLED", "DISABLED"})
_SAFETY_MODES = frozenset({"CONTEXTUAL", "STRICT", "OFF"})
MAX_PRIORITY = 999


def _result_text(content: Any) -> str:
    return content if isinstance(content, str) else zjson.dumps(thaw_json(content))


def _user_content(part: UserPromptPart) -> str | list[dict[str, Any]]:
    if isinstance(part.content, str):
        return part.content
    items: list[dict[str, Any]] = []
    for item in part.content:
        if isinstance(item, TextContent):
            items.append({"type": "text", "text": item.text})
        elif isinstance(item, TaggedText):
            items.append({"type": "text", "text": f"<{item.tag}>{item.text}</{item.tag}>"})
        elif isinstance(item, ImageContent):
            source = item.source
            if isinstance(source, BytesSource):
                data = base64.b64encode(source.data).decode("ascii")
                url = f"data:{source.media_type};base64,{data}"
            elif isinstance(source, UrlSource):
                url = source.url
            else:
                raise CohereEncodeError("Cohere v2 Chat takes images as data or URLs, not "
                                        "provider file ids")
            image: dict[str, Any] = {"url": url}
            if item.detail is not None:
                image["detail"] = item.detail
            items.append({"type": "image_url", "image_url": image})
        elif isinstance(item, DocumentContent):
            source = item.source
            if not (isinstance(source, BytesSource) and source.media_type.startswith("text/")):
                raise CohereEncodeError("Cohere v2 Chat documents must be inline text")
            document: dict[str, Any] = {"data": source.data.decode("utf-8", "replace")}
            if item.title is not None:
                document["id"] = item.title
            items.append({"type": "document", "document": document})
        elif isinstance(item, CachePoint):
            continue  # Cohere caches prompt prefixes itself
        else:
            raise CohereEncodeError(f"Cohere v2 Chat does not accept {item.kind} input")
    return items


def _tool_message(call_id: str, item: dict[str, Any]) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": [item]}


def _document(text: str) -> dict[str, Any]:
    return {"type": "document", "document": {"data": text}}


def _request_part(part: Any, out: list[dict[str, Any]]) -> None:
    if isinstance(part, SystemPromptPart):
        out.append({"role": "system", "content": part.content})
    elif isinstance(part, UserPromptPart):
        content = _user_content(part)
        if content != []:
            out.append({"role": "user", "content": content})
    elif isinstance(part, ToolReturnPart):
        out.append(_tool_message(part.tool_call_id, _document(_result_text(part.content))))
    elif isinstance(part, RetryPromptPart):
        if part.tool_call_id is None:
            out.append({"role": "user", "content": part.content})
        else:
            out.append(_tool_message(part.tool_call_id, {"type": "text", "text": part.content}))
    elif isinstance(part, CapabilityLoadReturnPart):
        content, _ = capability_result(part)
        out.append(_tool_message(part.tool_call_id, _document(_result_text(content))))
    elif isinstance(part, SpeechPromptPart):
        if part.transcript is None:
            raise CohereEncodeError("Cohere v2 Chat does not accept audio input")
        out.append({"role": "user", "content": part.transcript})
    elif isinstance(part, ToolAvailabilityPart):
        out.append({"role": "user", "content": availability_text(part)})
    elif isinstance(part, InstructionPart):
        return  # request instructions travel in ModelRequest.instructions
    else:  # pragma: no cover - the request part union is closed
        raise CohereEncodeError(f"a {type(part).__name__} cannot be sent to Cohere v2 Chat")


def is_tool_plan(part: ThinkingPart) -> bool:
    details = part.provider.details if part.provider is not None else None
    return details is not None and details.get("tool_plan") is True


def _assistant(message: ResponseMessage) -> dict[str, Any] | None:
    content: list[dict[str, Any]] = []
    plans: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.content:
                content.append({"type": "text", "text": part.content})
        elif isinstance(part, ThinkingPart):
            if part.provider is None or part.provider.provider_name != PROVIDER_NAME:
                continue  # another provider's reasoning state means nothing here
            if is_tool_plan(part):
                plans.append(part.content)
            elif part.content:
                content.append({"type": "thinking", "thinking": part.content})
        elif isinstance(part, ToolCallPart):
            calls.append({"id": part.tool_call_id, "type": "function",
                          "function": {"name": part.tool_name, "arguments": part.args}})
        elif isinstance(part, CapabilityLoadCallPart):
            arguments = zjson.dumps({"capability_id": part.capability_id})
            calls.append({"id": part.tool_call_id, "type": "function",
                          "function": {"name": part.tool_name, "arguments": arguments}})
        elif isinstance(part, (NativeToolCallPart, NativeToolReturnPart)):
            continue  # Cohere executes no provider-side tools
        elif isinstance(part, SpeechPart):
            if part.transcript is None:
                raise CohereEncodeError("assistant audio without a transcript cannot be replayed")
            content.append({"type": "text", "text": part.transcript})
        else:
            raise CohereEncodeError(f"a {part.part_kind} part cannot be replayed to Cohere")
    if not (content or plans or calls):
        return None
    out: dict[str, Any] = {"role": "assistant"}
    if content:
        out["content"] = content
    if plans:
        out["tool_plan"] = "".join(plans)
    if calls:
        out["tool_calls"] = calls
    return out


def encode_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The chronological ``messages`` list (instructions first, as one system message)."""
    out: list[dict[str, Any]] = []
    if request.instructions:
        out.append({"role": "system", "content": "\n\n".join(request.instructions)})
    for message in request.messages:
        if isinstance(message, RequestMessage):
            for part in message.parts:
                _request_part(part, out)
        elif isinstance(message, ResponseMessage):
            assistant = _assistant(message)
            if assistant is not None:
                out.append(assistant)
        else:
            raise CohereEncodeError(f"unknown message {type(message).__name__}")
    return out


def _check_extension(body: dict[str, Any]) -> None:
    if "strict_tools" in body and not isinstance(body["strict_tools"], bool):
        raise CohereEncodeError("cohere extension strict_tools must be a boolean",
                                path="extra_body.strict_tools")
    if "documents" in body:
        documents = body["documents"]
        if not isinstance(documents, list) or not all(
            isinstance(d, (str, dict)) for d in documents
        ):
            raise CohereEncodeError("cohere extension documents must be a list of strings or "
                                    "objects", path="extra_body.documents")
    if "citation_options" in body:
        options = body["citation_options"]
        if not isinstance(options, dict) or options.get("mode", "FAST") not in _CITATION_MODES:
            raise CohereEncodeError(
                "cohere extension citation_options must be an object whose mode is one of "
                + ", ".join(sorted(_CITATION_MODES)), path="extra_body.citation_options",
            )
    if "safety_mode" in body and body["safety_mode"] not in _SAFETY_MODES:
        raise CohereEncodeError("cohere extension safety_mode must be one of "
                                + ", ".join(sorted(_SAFETY_MODES)), path="extra_body.safety_mode")
    if "priority" in body:
        priority = body["priority"]
        if isinstance(priority, bool) or not isinstance(priority, int) or not (
            0 <= priority <= MAX_PRIORITY
        ):
            raise CohereEncodeError(f"cohere extension priority must be an integer in "
                                    f"[0, {MAX_PRIORITY}]", path="extra_body.priority")


def _apply_settings(body: dict[str, Any], request: ModelRequest) -> None:
    settings = request.settings
    pairs = (
        ("max_tokens", settings.max_tokens), ("temperature", settings.temperature),
        ("p", settings.top_p), ("k", settings.top_k), ("seed", settings.seed),
        ("presence_penalty", settings.presence_penalty),
        ("frequency_penalty", settings.frequency_penalty), ("logprobs", settings.logprobs),
    )
    for key, value in pairs:
        if value is not None:
            body[key] = value
    if settings.stop_sequences:
        body["stop_sequences"] = list(settings.stop_sequences)
    if settings.tool_choice in ("required", "none") and request.tools:
        body["tool_choice"] = settings.tool_choice.upper()
    if settings.thinking_budget_tokens is not None:
        if settings.thinking_budget_tokens == 0 or settings.thinking == "off":
            body["thinking"] = {"type": "disabled"}
        else:
            body["thinking"] = {"type": "enabled",
                                "token_budget": settings.thinking_budget_tokens}
    elif settings.thinking == "off":
        body["thinking"] = {"type": "disabled"}
    elif settings.thinking is not None:
        body["thinking"] = {"type": "enabled"}
    fmt = request.output_format
    if fmt.kind == "json_object":
        body["response_format"] = {"type": "json_object"}
    elif fmt.kind == "json_schema":
        body["response_format"] = {"type": "json_object", "json_schema": dict(fmt.schema or {})}


def encode_request(request: ModelRequest, *, model_name: str, stream: bool = False
                   ) -> dict[str, Any]:
    """The v2 Chat body for ``request`` (settings already merged and checked)."""
    if request.managed_tools:
        raise CohereEncodeError("Cohere v2 Chat has no provider-managed tools")
    body: dict[str, Any] = {"model": model_name, "stream": stream,
                            "messages": encode_messages(request)}
    if request.tools:
        tools = []
        for tool in request.tools:
            function: dict[str, Any] = {"name": tool.name}
            if tool.description:
                function["description"] = tool.description
            function["parameters"] = dict(tool.parameters_json_schema)
            tools.append({"type": "function", "function": function})
        body["tools"] = tools
    _apply_settings(body, request)
    extra = request.settings.extra_body
    if extra is not None:
        fields = extra.accept(EXTENSION_TAG, RESERVED_KEYS)
        _check_extension(fields)
        body.update(fields)
    return body
