"""Encode a neutral :class:`~zigai.model.ModelRequest` as one Bedrock Converse body.

:func:`encode_request` is pure; :func:`model_path` builds ``model/{id}/converse`` (or
``converse-stream``) with the id percent-encoded (every byte outside ``A-Za-z0-9-._~``), after
:func:`check_model_id` accepted it.  Wire mapping:

* ``system`` — system prompts of the history, then the request instructions, as ``text``
  blocks.
* ``messages`` — user prompts and tool results form ``user`` messages, responses form
  ``assistant`` messages; consecutive messages of one role are merged (Converse alternates).
  User content: ``text``, ``image`` / ``document`` (inline bytes, or ``s3://`` URLs),
  ``cachePoint``.  Tool returns are ``toolResult`` blocks: JSON results as ``json`` content,
  strings as ``text``, failures with ``status: "error"``; a retry prompt tied to a call is an
  error ``toolResult``.  Assistant content: ``text``, ``toolUse`` (input as a JSON object) and
  this provider's ``reasoningContent`` (text with its signature, or redacted content),
  replayed unchanged; reasoning from another provider is dropped.
* ``inferenceConfig`` — ``maxTokens``, ``temperature``, ``topP``, ``stopSequences``.
* ``toolConfig`` — ``toolSpec`` tools (``strict`` only when the definition sets it) and
  ``toolChoice`` (``auto`` / ``any``; Converse has no ``none``).
* ``outputConfig.textFormat`` — a JSON schema (sent as JSON text, as Converse requires).
* ``serviceTier`` — ``{"type": <tier>}``.
* Thinking, per family: Claude takes ``thinking`` (``enabled`` with ``budget_tokens`` or
  ``disabled``), Nova 2 ``reasoningConfig`` (``maxReasoningEffort``), gpt-oss
  ``reasoning_effort`` — all inside ``additionalModelRequestFields``.
* The ``bedrock`` extension body adds Converse-only fields (``additionalModelRequestFields``,
  ``additionalModelResponseFieldPaths``, ``guardrailConfig``, ``performanceConfig``,
  ``requestMetadata``, ``promptVariables``); keys the encoder owns are refused, and an
  ``additionalModelRequestFields`` key that the thinking mapping also sets is a conflict.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

from zigai import json as zjson
from zigai.messages import BytesSource, DocumentContent, ImageContent, UrlSource
from zigai.messages.json_value import thaw_json
from zigai.model import ModelRequest
from zigai.providers._encode_core import (
    ToolShape,
    call_arguments,
    copy_settings,
    function_tools,
    item_text,
    user_items,
    walk,
)
from zigai.providers.bedrock._errors import BedrockEncodeError, InvalidBedrockModelId
from zigai.providers.bedrock.profiles import model_family

__all__ = [
    "EXTENSION_TAG", "PROVIDER_NAME", "RESERVED_KEYS", "check_model_id", "encode_request",
    "model_path",
]

PROVIDER_NAME = "bedrock"
EXTENSION_TAG = "bedrock"
RESERVED_KEYS = frozenset({"modelId", "messages", "system", "inferenceConfig", "toolConfig",
                           "outputConfig", "serviceTier"})
_MODEL_ID = re.compile(r"^[A-Za-z0-9._:/-]{1,2048}$")
_IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif",
                  "image/webp": "webp"}
_DOCUMENT_FORMATS = {
    "application/pdf": "pdf", "text/csv": "csv", "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html", "text/plain": "txt", "text/markdown": "md",
}
_SETTINGS = (("maxTokens", "max_tokens"), ("temperature", "temperature"), ("topP", "top_p"))
_TOOL_SHAPE = ToolShape("inputSchema", schema_wrapper="json", strict=True,
                        wrap=lambda spec: {"toolSpec": spec})
_DOCUMENT_NAME = re.compile(r"^[A-Za-z0-9\s\-()\[\]]{1,200}$")


def check_model_id(model_id: str) -> str:
    """Accept a model id, inference-profile id or ARN that can be one path segment."""
    if not isinstance(model_id, str) or not _MODEL_ID.match(model_id):
        raise InvalidBedrockModelId(
            "Bedrock model ids are 1-2048 letters, digits, '.', '_', ':', '/' or '-'"
        )
    if "/" in model_id:
        if not model_id.startswith("arn:"):
            raise InvalidBedrockModelId("only ARNs may contain '/' in a Bedrock model id")
        if any(segment in ("", ".", "..") for segment in model_id.split("/")):
            raise InvalidBedrockModelId("a Bedrock ARN has an empty or dot segment")
    return model_id


def model_path(model_id: str, *, stream: bool = False) -> str:
    """``model/{percent-encoded id}/converse`` (``converse-stream`` when streaming)."""
    encoded = quote(check_model_id(model_id), safe="")
    return f"model/{encoded}/{'converse-stream' if stream else 'converse'}"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _media(item: ImageContent | DocumentContent) -> dict[str, Any]:
    source = item.source
    if isinstance(source, BytesSource):
        media_type = source.media_type
        located: dict[str, Any] = {"bytes": _b64(source.data)}
    elif isinstance(source, UrlSource) and source.url.startswith("s3://"):
        media_type = source.media_type or ""
        located = {"s3Location": {"uri": source.url}}
    else:
        raise BedrockEncodeError(f"Converse takes {item.kind} input as inline bytes or an "
                                 "s3:// URL")
    if isinstance(item, ImageContent):
        image_format = _IMAGE_FORMATS.get(media_type)
        if image_format is None:
            raise BedrockEncodeError(f"Converse images are png, jpeg, gif or webp, not "
                                     f"{media_type or 'an unknown type'}")
        return {"image": {"format": image_format, "source": located}}
    document_format = _DOCUMENT_FORMATS.get(media_type)
    if document_format is None:
        raise BedrockEncodeError(f"Converse does not accept {media_type or 'untyped'} documents")
    name = item.title or "document"
    if not _DOCUMENT_NAME.match(name):
        raise BedrockEncodeError("Converse document names are letters, digits, spaces, "
                                 "hyphens, parentheses and square brackets")
    return {"document": {"format": document_format, "name": name, "source": located}}


_USER_ITEMS: Mapping[str, Callable[[Any], dict[str, Any] | None]] = {
    "text": lambda item: {"text": item_text(item)},
    "tagged-text": lambda item: {"text": item_text(item)},
    "image": lambda item: _media(item),
    "document": lambda item: _media(item),
    "cache-point": lambda item: {"cachePoint": {"type": "default"}},
}


def _user_blocks(part: Any) -> list[dict[str, Any]]:
    content = user_items(part, _USER_ITEMS, label="Converse", error=BedrockEncodeError)
    if isinstance(content, str):
        return [{"text": content}] if content else []
    return content


def _tool_result(call_id: str, content: Any, *, error: bool) -> dict[str, Any]:
    if isinstance(content, str):
        items: list[dict[str, Any]] = [{"text": content}]
    elif content is None:
        items = [{"text": ""}]
    else:
        items = [{"json": thaw_json(content)}]
    result: dict[str, Any] = {"toolUseId": call_id, "content": items}
    if error:
        result["status"] = "error"
    return {"toolResult": result}


class _Conversation:
    """Accumulates blocks into alternating messages (the request sink of the walk)."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.system_texts: list[str] = []

    def add(self, role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if self.messages and self.messages[-1]["role"] == role:
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": role, "content": blocks})

    def system(self, text: str) -> None:
        self.system_texts.append(text)

    def user(self, part: Any) -> None:
        self.add("user", _user_blocks(part))

    def user_text(self, text: str) -> None:
        self.add("user", [{"text": text}])

    def tool_result(self, call_id: str, content: Any, *, error: bool, retry: bool) -> None:
        self.add("user", [_tool_result(call_id, content, error=error)])


class _Answer:
    """One answer's blocks, added to the conversation as one assistant turn."""

    def __init__(self, conversation: _Conversation) -> None:
        self.conversation = conversation
        self.blocks: list[dict[str, Any]] = []

    def text(self, text: str) -> None:
        self.blocks.append({"text": text})

    def thinking(self, part: Any) -> None:
        block = _reasoning(part)
        if block is not None:
            self.blocks.append(block)

    def tool_call(self, part: Any) -> None:
        arguments = call_arguments(part, BedrockEncodeError, f"tool call {part.tool_call_id!r}")
        self.blocks.append({"toolUse": {"toolUseId": part.tool_call_id, "name": part.tool_name,
                                        "input": arguments}})

    def native_call(self, part: Any) -> None:
        return  # Converse runs no provider-side tools in this adapter

    def end(self) -> None:
        self.conversation.add("assistant", self.blocks)


def _reasoning(part: Any) -> dict[str, Any] | None:
    provider = part.provider
    if provider is None or provider.provider_name != PROVIDER_NAME:
        return None  # another provider's reasoning state means nothing to Converse
    redacted = provider.details.get("redacted_content") if provider.details else None
    if isinstance(redacted, str):
        return {"reasoningContent": {"redactedContent": redacted}}
    text: dict[str, Any] = {"text": part.content}
    if part.signature is not None:
        text["signature"] = part.signature
    return {"reasoningContent": {"reasoningText": text}}


def _thinking_fields(request: ModelRequest, model_id: str) -> dict[str, Any]:
    settings = request.settings
    if settings.thinking is None and settings.thinking_budget_tokens is None:
        return {}
    family = model_family(model_id)
    vendor = family[0] if family else ""
    budget, level = settings.thinking_budget_tokens, settings.thinking
    off = level == "off" or budget == 0
    if vendor == "anthropic":
        if off:
            return {"thinking": {"type": "disabled"}}
        if budget is None:
            raise BedrockEncodeError("Claude on Converse takes a thinking budget "
                                     "(thinking_budget_tokens), not an effort level")
        return {"thinking": {"type": "enabled", "budget_tokens": budget}}
    if vendor == "amazon":
        if off:
            return {"reasoningConfig": {"type": "disabled"}}
        if budget is not None:
            raise BedrockEncodeError("Nova reasoning takes an effort level, not a budget")
        return {"reasoningConfig": {"type": "enabled", "maxReasoningEffort": level}}
    if vendor == "openai":
        if off or budget is not None:
            raise BedrockEncodeError("gpt-oss on Converse takes an effort level only")
        return {"reasoning_effort": level}
    if off:
        return {}
    raise BedrockEncodeError(f"Converse has no thinking control for {model_id!r}")


def _tool_config(request: ModelRequest) -> dict[str, Any] | None:
    if not request.tools:
        return None
    config: dict[str, Any] = {"tools": function_tools(request.tools, _TOOL_SHAPE)}
    choice = request.settings.tool_choice
    if choice == "none":
        raise BedrockEncodeError("Converse has no tool_choice 'none'; send no tools instead")
    if choice == "auto":
        config["toolChoice"] = {"auto": {}}
    elif choice == "required":
        config["toolChoice"] = {"any": {}}
    return config


def encode_request(request: ModelRequest, *, model_id: str) -> dict[str, Any]:
    """The Converse body for ``request`` (settings already merged and checked)."""
    if request.managed_tools:
        raise BedrockEncodeError("this Converse adapter has no provider-managed tools")
    conversation = _Conversation()
    walk(request.messages, conversation, lambda: _Answer(conversation), label="Converse",
         error=BedrockEncodeError)
    body: dict[str, Any] = {"messages": conversation.messages}
    system = [*conversation.system_texts, *request.instructions]
    if system:
        body["system"] = [{"text": text} for text in system if text]
    settings = request.settings
    inference: dict[str, Any] = {}
    copy_settings(inference, settings, _SETTINGS, stop_key="stopSequences")
    if inference:
        body["inferenceConfig"] = inference
    tool_config = _tool_config(request)
    if tool_config is not None:
        body["toolConfig"] = tool_config
    fmt = request.output_format
    if fmt.kind == "json_schema":
        schema: dict[str, Any] = {"schema": zjson.dumps(thaw_json(fmt.schema or {})),
                                  "name": fmt.name}
        if fmt.description is not None:
            schema["description"] = fmt.description
        body["outputConfig"] = {"textFormat": {"type": "json_schema",
                                               "structure": {"jsonSchema": schema}}}
    elif fmt.kind == "json_object":
        raise BedrockEncodeError("Converse has no JSON-object mode; use a JSON schema")
    if settings.service_tier is not None:
        body["serviceTier"] = {"type": settings.service_tier}
    fields = _thinking_fields(request, model_id)
    extra = {} if settings.extra_body is None else settings.extra_body.accept(EXTENSION_TAG,
                                                                               RESERVED_KEYS)
    additional = extra.pop("additionalModelRequestFields", None)
    if additional is not None:
        if not isinstance(additional, dict):
            raise BedrockEncodeError("bedrock extension additionalModelRequestFields must be "
                                     "an object", path="extra_body.additionalModelRequestFields")
        clash = sorted(set(additional) & set(fields))
        if clash:
            raise BedrockEncodeError(
                "bedrock extension additionalModelRequestFields sets what the thinking "
                f"setting controls: {', '.join(clash)}",
                path="extra_body.additionalModelRequestFields",
            )
        fields = {**additional, **fields}
    if fields:
        body["additionalModelRequestFields"] = fields
    body.update(extra)
    return body
