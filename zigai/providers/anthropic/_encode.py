"""Neutral ModelRequest -> Anthropic Messages API request body (a pure function).

Rules (each is the documented Messages API contract):

* ``system`` is a list of text blocks: every ``SystemPromptPart`` in history order, then the
  request's resolved ``instructions``.  ``InstructionPart`` values inside history are already
  folded into ``request.instructions`` by the agent and are not sent twice.
* Request parts become ``user`` turns and response parts ``assistant`` turns; adjacent turns of
  one role are merged (the API requires alternation, and tool results must sit in the user turn
  right after the assistant's ``tool_use``).
* Tool returns become ``tool_result`` blocks whose content is the JSON text of the value (a
  string value is sent as-is); failures set ``is_error``.  A retry prompt tied to a tool call is
  an erroring ``tool_result``; a free-standing one is user text.
* Thinking is replayed only when it came from Anthropic: ``thinking`` with its signature, or
  ``redacted_thinking`` with its opaque ``data``.  Thinking from any other provider, or Anthropic
  thinking without a signature, is dropped (the API rejects unsigned thinking).  Native tool
  traffic is replayed only when Anthropic produced it; otherwise it is dropped.
* Empty text is never sent (the API rejects empty text blocks); an assistant turn left empty is
  omitted.
* Settings are translated once here; controls the Messages API has no field for raise
  :class:`~zigai.model.UnsupportedModelFeature` before any I/O.
"""

from __future__ import annotations

import base64
from typing import Any

from zigai import json as zjson
from zigai.messages import (
    Message,
    NativeToolCallPart,
    RequestMessage,
    ToolCallPart,
    ToolOutcome,
    UserPromptPart,
)
from zigai.messages.json_value import thaw_json
from zigai.model import ModelRequest, UnsupportedModelFeature
from zigai.providers._encode_core import availability_sentences, turns
from zigai.providers.anthropic import _server_tools
from zigai.providers.anthropic._errors import AnthropicEncodeError

__all__ = ["PROVIDER_NAME", "RESERVED_KEYS", "encode_request", "encode_messages", "beta_features"]

PROVIDER_NAME = "anthropic"
FILES_BETA = "files-api-2025-04-14"

#: Body keys the portable encoder owns; a ProviderExtraBody may not set them.
RESERVED_KEYS = frozenset(
    {
        "model", "messages", "system", "max_tokens", "tools", "tool_choice", "temperature",
        "top_p", "top_k", "stop_sequences", "stream", "thinking", "output_config",
        "service_tier",
    }
)

_UNSUPPORTED_SETTINGS = (
    "seed", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs", "truncation",
)


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return zjson.dumps(thaw_json(value))


def _args_object(part: ToolCallPart | NativeToolCallPart, path: str) -> dict[str, Any]:
    text = part.args.strip()
    if not text:
        return {}
    try:
        value = zjson.parse(text, zjson.defaults.tool_payload)
    except Exception as exc:  # malformed or over the tool-payload limits
        raise AnthropicEncodeError(
            f"{path}: tool call arguments are not a JSON object: {exc}", path=path
        ) from None
    if not isinstance(value, dict):
        raise AnthropicEncodeError(f"{path}: tool call arguments must be a JSON object", path=path)
    return value


def _media_source(source: Any, kind: str, path: str) -> dict[str, Any]:
    if source.kind == "bytes":
        if kind == "document" and source.media_type == "text/plain":
            return {"type": "text", "media_type": "text/plain",
                    "data": source.data.decode("utf-8", "replace")}
        return {
            "type": "base64",
            "media_type": source.media_type,
            "data": base64.b64encode(source.data).decode("ascii"),
        }
    if source.kind == "url":
        return {"type": "url", "url": source.url}
    if source.kind == "uploaded-file":
        if source.provider_name != PROVIDER_NAME:
            raise AnthropicEncodeError(
                f"{path}: file {source.file_id!r} belongs to {source.provider_name!r}", path=path
            )
        return {"type": "file", "file_id": source.file_id}
    if source.kind == "provider-file":
        return {"type": "file", "file_id": source.file_id}
    raise AnthropicEncodeError(f"{path}: unsupported media source", path=path)


def _user_blocks(part: UserPromptPart, path: str) -> list[dict[str, Any]]:
    if isinstance(part.content, str):
        return [{"type": "text", "text": part.content}] if part.content else []
    blocks: list[dict[str, Any]] = []
    for index, item in enumerate(part.content):
        where = f"{path}.content[{index}]"
        if item.kind == "text":
            if item.text:
                blocks.append({"type": "text", "text": item.text})
        elif item.kind == "tagged-text":
            blocks.append({"type": "text", "text": f"<{item.tag}>{item.text}</{item.tag}>"})
        elif item.kind == "image":
            blocks.append({"type": "image", "source": _media_source(item.source, "image", where)})
        elif item.kind == "document":
            block: dict[str, Any] = {
                "type": "document", "source": _media_source(item.source, "document", where)
            }
            if item.title:
                block["title"] = item.title
            blocks.append(block)
        elif item.kind == "uploaded-file":
            media = item.file.media_type or ""
            kind = "image" if media.startswith("image/") else "document"
            blocks.append({"type": kind, "source": _media_source(item.file, kind, where)})
        elif item.kind == "cache-point":
            if not blocks:
                raise AnthropicEncodeError(f"{where}: a cache point must follow content", path=where)
            control: dict[str, Any] = {"type": "ephemeral"}
            if item.ttl:
                control["ttl"] = item.ttl
            blocks[-1]["cache_control"] = control
        else:
            raise UnsupportedModelFeature(f"Anthropic does not accept {item.kind} content")
    return blocks


def _request_blocks(message: RequestMessage, path: str) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for index, part in enumerate(message.parts):
        where = f"{path}.parts[{index}]"
        if part.part_kind in ("system-prompt", "instruction"):
            continue  # rendered into the top-level system field
        if part.part_kind == "user-prompt":
            blocks.extend(_user_blocks(part, where))
        elif part.part_kind == "tool-return":
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": part.tool_call_id,
                "content": _json_text(part.content),
            }
            if part.outcome is not ToolOutcome.success:
                block["is_error"] = True
            blocks.append(block)
        elif part.part_kind == "retry-prompt":
            if part.tool_call_id is not None:
                blocks.append({"type": "tool_result", "tool_use_id": part.tool_call_id,
                               "content": part.content, "is_error": True})
            else:
                blocks.append({"type": "text", "text": part.content})
        elif part.part_kind == "capability-load-return":
            result = part.content if part.content is not None else "\n\n".join(part.instructions)
            block = {"type": "tool_result", "tool_use_id": part.tool_call_id,
                     "content": result or "loaded"}
            if part.outcome is not ToolOutcome.success:
                block["is_error"] = True
            blocks.append(block)
        elif part.part_kind == "speech-prompt":
            if part.transcript is None:
                raise UnsupportedModelFeature("Anthropic does not accept audio content")
            if part.transcript:
                blocks.append({"type": "text", "text": part.transcript})
        elif part.part_kind == "tool-availability":
            blocks.append({"type": "text", "text": availability_sentences(part)})
        else:
            raise AnthropicEncodeError(f"{where}: cannot encode {type(part).__name__}", path=where)
    return blocks


def _is_ours(provider: Any) -> bool:
    return provider is not None and provider.provider_name == PROVIDER_NAME


def _response_blocks(message: Any, path: str) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for index, part in enumerate(message.parts):
        where = f"{path}.parts[{index}]"
        if part.part_kind == "text":
            if part.content:
                blocks.append({"type": "text", "text": part.content})
        elif part.part_kind == "thinking":
            if not _is_ours(part.provider):
                continue
            details = part.provider.details if part.provider is not None else None
            redacted = details.get("redacted_data") if details is not None else None
            if isinstance(redacted, str):
                blocks.append({"type": "redacted_thinking", "data": redacted})
            elif part.signature:
                blocks.append({"type": "thinking", "thinking": part.content,
                               "signature": part.signature})
        elif part.part_kind == "tool-call":
            blocks.append({"type": "tool_use", "id": part.tool_call_id, "name": part.tool_name,
                           "input": _args_object(part, where)})
        elif part.part_kind == "capability-load-call":
            # an ordinary tool_use, so the load's tool_result is never orphaned
            blocks.append({"type": "tool_use", "id": part.tool_call_id, "name": part.tool_name,
                           "input": {"capability_id": part.capability_id}})
        elif part.part_kind == "native-tool-call":
            if _is_ours(part.provider):
                details = part.provider.details
                call: dict[str, Any] = {"type": "server_tool_use", "id": part.tool_call_id,
                                        "name": part.tool_name}
                if details is not None and details.get("type") == "mcp_tool_use":
                    call["type"] = "mcp_tool_use"
                    call["server_name"] = details.get("server_name")
                call["input"] = _args_object(part, where)
                blocks.append(call)
        elif part.part_kind == "native-tool-return":
            if _is_ours(part.provider):
                details = part.provider.details
                block_type = details.get("type") if details is not None else None
                if not isinstance(block_type, str):
                    block_type = f"{part.tool_name}_tool_result"
                result: dict[str, Any] = {"type": block_type, "tool_use_id": part.tool_call_id}
                if details is not None and isinstance(details.get("is_error"), bool):
                    result["is_error"] = details.get("is_error")
                result["content"] = thaw_json(part.content)
                blocks.append(result)
        # other response parts (files, speech, compaction ...) have no Messages API input form
    return blocks


def encode_messages(messages: tuple[Message, ...]) -> tuple[list[str], list[dict[str, Any]]]:
    """``(system texts, messages)`` for the history, merging adjacent turns of one role."""
    return turns(messages, _request_blocks, _response_blocks, roles=("user", "assistant"),
                 key="content")


def _tool_choice(request: ModelRequest, tool_names: list[str]) -> dict[str, Any] | None:
    settings = request.settings
    choice: dict[str, Any] | None = None
    if settings.tool_choice == "auto":
        choice = {"type": "auto"}
    elif settings.tool_choice == "none":
        choice = {"type": "none"}
    elif settings.tool_choice == "required":
        choice = {"type": "tool", "name": tool_names[0]} if len(tool_names) == 1 else {"type": "any"}
    if settings.parallel_tool_calls is False and tool_names:
        if choice is None:
            choice = {"type": "auto"}
        if choice["type"] != "none":
            choice["disable_parallel_tool_use"] = True
    return choice


def beta_features(request: ModelRequest) -> tuple[str, ...]:
    """The ``anthropic-beta`` features the encoded request relies on."""
    features = []
    features.extend(_server_tools.betas(request.managed_tools))
    for message in request.messages:
        if not isinstance(message, RequestMessage):
            continue
        for part in message.parts:
            if part.part_kind == "user-prompt" and not isinstance(part.content, str):
                for item in part.content:
                    source = getattr(item, "source", getattr(item, "file", None))
                    if getattr(source, "kind", None) in ("uploaded-file", "provider-file"):
                        if FILES_BETA not in features:
                            features.append(FILES_BETA)
    return tuple(features)


def encode_request(
    request: ModelRequest, *, model_name: str, max_tokens: int, stream: bool = False
) -> dict[str, Any]:
    """The Messages API body for ``request`` (settings must already be merged)."""
    settings = request.settings
    for name in _UNSUPPORTED_SETTINGS:
        if getattr(settings, name) is not None:
            raise UnsupportedModelFeature(f"the Anthropic Messages API has no {name!r} control")
    system, turns = encode_messages(request.messages)
    system.extend(request.instructions)
    body: dict[str, Any] = {
        "model": model_name,
        "max_tokens": settings.max_tokens if settings.max_tokens is not None else max_tokens,
    }
    system_blocks = [{"type": "text", "text": text} for text in system if text]
    if system_blocks:
        body["system"] = system_blocks
    body["messages"] = turns
    tools: list[dict[str, Any]] = []
    allowed = settings.allowed_tools
    for tool in request.tools:
        if allowed is not None and tool.name not in allowed and tool.kind == "function":
            continue
        entry: dict[str, Any] = {"name": tool.name}
        if tool.description:
            entry["description"] = tool.description
        entry["input_schema"] = dict(tool.parameters_json_schema)
        if tool.strict:
            entry["strict"] = True
        tools.append(entry)
    names = [t["name"] for t in tools]
    tools.extend(_server_tools.server_tool(m) for m in request.managed_tools)
    if tools:
        body["tools"] = tools
    servers = _server_tools.mcp_servers(request.managed_tools)
    if servers:
        body["mcp_servers"] = servers
    choice = _tool_choice(request, names)
    if choice is not None and tools:
        body["tool_choice"] = choice
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.top_k is not None:
        body["top_k"] = settings.top_k
    if settings.stop_sequences:
        body["stop_sequences"] = list(settings.stop_sequences)
    output_config: dict[str, Any] = {}
    if settings.thinking_budget_tokens is not None:
        if settings.thinking_budget_tokens == 0 or settings.thinking == "off":
            body["thinking"] = {"type": "disabled"}
        else:
            body["thinking"] = {"type": "enabled", "budget_tokens": settings.thinking_budget_tokens}
    elif settings.thinking == "off":
        body["thinking"] = {"type": "disabled"}
    elif settings.thinking is not None:
        # Newer models take the effort level; thinking itself stays adaptive (model default).
        output_config["effort"] = settings.thinking
    fmt = request.output_format
    if fmt.kind == "json_schema":
        output_config["format"] = {"type": "json_schema", "schema": dict(fmt.schema or {})}
    elif fmt.kind == "json_object":
        raise UnsupportedModelFeature("Anthropic has no JSON-object output mode")
    if output_config:
        body["output_config"] = output_config
    if settings.service_tier is not None:
        body["service_tier"] = settings.service_tier
    if settings.extra_body is not None:
        extra = settings.extra_body.accept(PROVIDER_NAME, RESERVED_KEYS)
        if servers and "mcp_servers" in extra:
            raise AnthropicEncodeError(
                "mcp_servers comes from the mcp_server managed tools; do not also set it in "
                "extra_body")
        body.update(extra)
    if stream:
        body["stream"] = True
    return body
