"""Encode a neutral :class:`~zigai.model.ModelRequest` as one Chat Completions request body.

Job
    :func:`encode_request` is a pure function: the same request, model name and
    :class:`ChatOptions` always give the same JSON object.  Settings are translated here,
    once, at the wire boundary.

Wire mapping (documented contract of ``POST /chat/completions``)
    * ``request.instructions`` become one leading ``system`` (or ``developer``) message,
      joined with blank lines; ``SystemPromptPart`` values keep their history position.
      ``InstructionPart`` records and ``RequestMessage.instructions`` are history records of
      earlier rendering and are not sent again.
    * user prompts: plain text, or content parts (``text``, ``image_url``, ``input_audio``,
      ``file``); tagged text renders as ``<tag>text</tag>``; cache points are dropped (Chat
      Completions has no cache marker).
    * tool returns → ``tool`` messages with ``tool_call_id`` (non-string content as compact
      JSON text); retry prompts for a call → ``tool`` messages, other retry prompts → user
      text.
    * responses → one ``assistant`` message: text parts joined, ``tool_calls`` from function
      calls (``content`` is ``null`` when there is no text).  Replay rule: thinking parts are
      dropped unless ``ChatOptions.replay_reasoning_field`` names the provider's field and
      the part came from the same provider; provider-executed native tool traffic, files,
      speech, compaction and tool-search parts are dropped because Chat Completions cannot
      carry them back.
    * settings: ``max_tokens`` (or ``max_completion_tokens``), ``temperature``, ``top_p``,
      ``seed``, ``stop``, ``presence_penalty``, ``frequency_penalty``, ``logprobs``,
      ``top_logprobs``, ``parallel_tool_calls`` and ``tool_choice`` (only with tools),
      ``reasoning_effort`` (thinking level; ``off`` sends nothing), ``service_tier``;
      ``allowed_tools`` narrows the declared ``tools`` list.  ``thinking_budget_tokens`` has
      no Chat Completions field and is rejected before I/O.
    * output formats: ``response_format`` ``json_object`` / ``json_schema``.
    * streaming adds ``stream: true`` and, unless disabled, ``stream_options.include_usage``.
    * ``ProviderExtraBody`` is accepted only under ``ChatOptions.extra_body_tag`` and may not
      set any key this encoder owns.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from zigai import json as zjson
from zigai.messages import (
    AudioContent,
    BytesSource,
    CachePoint,
    CapabilityLoadCallPart,
    CapabilityLoadReturnPart,
    DocumentContent,
    ImageContent,
    InstructionPart,
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    SpeechPromptPart,
    SystemPromptPart,
    TaggedText,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolAvailabilityPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UploadedFileContent,
    UrlSource,
    UserPromptPart,
)
from zigai.messages.json_value import thaw_json
from zigai.model import ModelRequest, ToolDefinition, UnsupportedModelFeature
from zigai.settings import ModelSettings, UnsupportedModelSetting

__all__ = ["ChatOptions", "RESERVED_KEYS", "encode_request", "encode_messages", "encode_tool"]

#: Body keys the portable encoder owns; extension bodies may never set them.
RESERVED_KEYS = frozenset(
    {
        "model", "messages", "tools", "tool_choice", "parallel_tool_calls", "max_tokens",
        "max_completion_tokens", "temperature", "top_p", "seed", "stop", "presence_penalty",
        "frequency_penalty", "logprobs", "top_logprobs", "response_format", "reasoning_effort",
        "service_tier", "stream", "stream_options", "functions", "function_call",
    }
)

_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav",
                  "audio/mpeg": "mp3", "audio/mp3": "mp3"}


@dataclass(frozen=True, slots=True)
class ChatOptions:
    """Chat Completions behaviour of one client (the wire dialect, not capabilities).

    ``max_tokens_field`` selects ``max_tokens`` or ``max_completion_tokens``;
    ``system_role`` is ``system`` or ``developer``; ``stream_usage`` adds
    ``stream_options.include_usage`` to streamed requests; ``extra_body_tag`` is the
    ``ProviderExtraBody`` tag this client accepts; ``replay_reasoning_field`` (e.g.
    ``reasoning_content``) replays same-provider thinking parts in that assistant field;
    ``reserved_keys`` are further body keys owned by a typed client API.
    """

    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    system_role: Literal["system", "developer"] = "system"
    stream_usage: bool = True
    extra_body_tag: str = "openai_compatible"
    replay_reasoning_field: str | None = None
    reserved_keys: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.max_tokens_field not in ("max_tokens", "max_completion_tokens"):
            raise ValueError("max_tokens_field must be 'max_tokens' or 'max_completion_tokens'")
        if self.system_role not in ("system", "developer"):
            raise ValueError("system_role must be 'system' or 'developer'")
        object.__setattr__(self, "reserved_keys", frozenset(self.reserved_keys))

    @classmethod
    def openai(cls) -> ChatOptions:
        """OpenAI's current dialect: ``developer`` role and ``max_completion_tokens``."""
        return cls(max_tokens_field="max_completion_tokens", system_role="developer")


def _data_url(source: BytesSource) -> str:
    return f"data:{source.media_type};base64,{base64.b64encode(source.data).decode('ascii')}"


def _file_id(source: UploadedFile, provider_name: str | None) -> str:
    if provider_name is not None and source.provider_name != provider_name:
        raise UnsupportedModelFeature(
            f"file uploaded to {source.provider_name!r} cannot be sent to {provider_name!r}"
        )
    return source.file_id


def _content_part(item: Any, provider_name: str | None) -> dict[str, Any] | None:
    if isinstance(item, TextContent):
        return {"type": "text", "text": item.text}
    if isinstance(item, TaggedText):
        return {"type": "text", "text": f"<{item.tag}>{item.text}</{item.tag}>"}
    if isinstance(item, CachePoint):
        return None
    if isinstance(item, ImageContent):
        source = item.source
        if isinstance(source, UrlSource):
            url = source.url
        elif isinstance(source, BytesSource):
            url = _data_url(source)
        else:
            raise UnsupportedModelFeature("Chat Completions images need a URL or inline bytes")
        image: dict[str, Any] = {"url": url}
        if item.detail is not None:
            image["detail"] = item.detail
        return {"type": "image_url", "image_url": image}
    if isinstance(item, AudioContent):
        source = item.source
        fmt = _AUDIO_FORMATS.get(source.media_type) if isinstance(source, BytesSource) else None
        if not isinstance(source, BytesSource) or fmt is None:
            raise UnsupportedModelFeature("Chat Completions audio needs inline wav or mp3 bytes")
        data = base64.b64encode(source.data).decode("ascii")
        return {"type": "input_audio", "input_audio": {"data": data, "format": fmt}}
    if isinstance(item, (DocumentContent, UploadedFileContent)):
        source = item.file if isinstance(item, UploadedFileContent) else item.source
        if isinstance(source, UploadedFile):
            return {"type": "file", "file": {"file_id": _file_id(source, provider_name)}}
        if isinstance(source, BytesSource):
            file: dict[str, Any] = {"file_data": _data_url(source)}
            title = item.title if isinstance(item, DocumentContent) else None
            file["filename"] = title or "document"
            return {"type": "file", "file": file}
        raise UnsupportedModelFeature("Chat Completions documents need inline bytes or a file id")
    raise UnsupportedModelFeature(f"Chat Completions cannot send {getattr(item, 'kind', item)!r} content")


def _user_message(part: UserPromptPart, provider_name: str | None) -> dict[str, Any]:
    if isinstance(part.content, str):
        return {"role": "user", "content": part.content}
    items = [_content_part(item, provider_name) for item in part.content]
    return {"role": "user", "content": [item for item in items if item is not None]}


def _tool_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return zjson.dumps(thaw_json(content))


def _request_messages(
    message: RequestMessage, options: ChatOptions, provider_name: str | None
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, SystemPromptPart):
            out.append({"role": options.system_role, "content": part.content})
        elif isinstance(part, UserPromptPart):
            out.append(_user_message(part, provider_name))
        elif isinstance(part, ToolReturnPart):
            out.append({"role": "tool", "tool_call_id": part.tool_call_id,
                        "content": _tool_text(part.content)})
        elif isinstance(part, RetryPromptPart):
            if part.tool_call_id is not None and part.tool_name is not None:
                out.append({"role": "tool", "tool_call_id": part.tool_call_id,
                            "content": part.content})
            else:
                out.append({"role": "user", "content": part.content})
        elif isinstance(part, CapabilityLoadReturnPart):
            body: dict[str, Any] = {"outcome": part.outcome.value, "loaded": list(part.loaded),
                                    "instructions": list(part.instructions)}
            if part.content is not None:
                body["content"] = part.content
            out.append({"role": "tool", "tool_call_id": part.tool_call_id,
                        "content": zjson.dumps(body)})
        elif isinstance(part, ToolAvailabilityPart):
            lines = []
            if part.added:
                lines.append("Tools now available: " + ", ".join(part.added) + ".")
            if part.removed:
                lines.append("Tools no longer available: " + ", ".join(part.removed) + ".")
            out.append({"role": "user", "content": " ".join(lines)})
        elif isinstance(part, InstructionPart):
            continue
        elif isinstance(part, SpeechPromptPart):
            raise UnsupportedModelFeature("Chat Completions cannot send speech prompts")
    return out


def _assistant_message(
    message: ResponseMessage, options: ChatOptions, provider_name: str | None
) -> dict[str, Any] | None:
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            texts.append(part.content)
        elif isinstance(part, ToolCallPart):
            calls.append({"id": part.tool_call_id, "type": "function",
                          "function": {"name": part.tool_name, "arguments": part.args or "{}"}})
        elif isinstance(part, CapabilityLoadCallPart):
            args = zjson.dumps({"capability_id": part.capability_id})
            calls.append({"id": part.tool_call_id, "type": "function",
                          "function": {"name": part.tool_name, "arguments": args}})
        elif isinstance(part, ThinkingPart) and options.replay_reasoning_field is not None:
            owner = part.provider.provider_name if part.provider is not None else None
            if owner is not None and owner == provider_name:
                reasoning.append(part.content)
    text = "".join(texts)
    if not text and not calls and not reasoning:
        return None
    out: dict[str, Any] = {"role": "assistant", "content": text if text else None}
    if reasoning and options.replay_reasoning_field is not None:
        out[options.replay_reasoning_field] = "".join(reasoning)
        if out["content"] is None and not calls:
            out["content"] = ""
    if calls:
        out["tool_calls"] = calls
    return out


def encode_messages(
    request: ModelRequest, options: ChatOptions = ChatOptions(), provider_name: str | None = None
) -> list[dict[str, Any]]:
    """The ``messages`` array for ``request`` (instructions first)."""
    out: list[dict[str, Any]] = []
    if request.instructions:
        out.append({"role": options.system_role, "content": "\n\n".join(request.instructions)})
    for message in request.messages:
        if isinstance(message, RequestMessage):
            out.extend(_request_messages(message, options, provider_name))
        else:
            assistant = _assistant_message(message, options, provider_name)
            if assistant is not None:
                out.append(assistant)
    return out


def encode_tool(tool: ToolDefinition) -> dict[str, Any]:
    """One ``{"type": "function", "function": {...}}`` declaration (local-only fields omitted)."""
    function: dict[str, Any] = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    function["parameters"] = dict(tool.parameters_json_schema)
    if tool.strict is not None:
        function["strict"] = tool.strict
    return {"type": "function", "function": function}


def _selected_tools(request: ModelRequest, settings: ModelSettings) -> list[ToolDefinition]:
    tools = list(request.tools)
    if settings.allowed_tools is not None:
        names = {t.name for t in tools}
        missing = sorted(set(settings.allowed_tools) - names)
        if missing:
            raise UnsupportedModelSetting(f"allowed_tools names undeclared tools: {', '.join(missing)}")
        allowed = set(settings.allowed_tools)
        tools = [t for t in tools if t.name in allowed or t.kind == "output"]
    return tools


def encode_settings(
    body: dict[str, Any], settings: ModelSettings, options: ChatOptions, has_tools: bool
) -> None:
    """Write the portable settings into ``body`` under their Chat Completions names."""
    if settings.max_tokens is not None:
        body[options.max_tokens_field] = settings.max_tokens
    for name in ("temperature", "top_p", "seed", "presence_penalty", "frequency_penalty",
                 "logprobs", "top_logprobs"):
        value = getattr(settings, name)
        if value is not None:
            body[name] = value
    if settings.stop_sequences is not None:
        body["stop"] = list(settings.stop_sequences)
    if has_tools:
        if settings.tool_choice is not None:
            body["tool_choice"] = settings.tool_choice
        if settings.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = settings.parallel_tool_calls
    if settings.thinking is not None and settings.thinking != "off":
        body["reasoning_effort"] = settings.thinking
    if settings.thinking_budget_tokens is not None:
        raise UnsupportedModelSetting("Chat Completions has no thinking budget field")
    if settings.service_tier is not None:
        body["service_tier"] = settings.service_tier


def encode_request(
    request: ModelRequest,
    model_name: str,
    options: ChatOptions = ChatOptions(),
    *,
    stream: bool = False,
    provider_name: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The complete JSON body for ``POST chat/completions``.

    ``extra`` holds fields a typed named client owns (OpenRouter ``provider``, Z.AI
    ``thinking`` ...); they are written before the extension body, whose keys may not
    collide with them or with :data:`RESERVED_KEYS`.
    """
    settings = request.settings
    body: dict[str, Any] = {"model": model_name,
                            "messages": encode_messages(request, options, provider_name)}
    tools = _selected_tools(request, settings)
    if tools:
        body["tools"] = [encode_tool(t) for t in tools]
    encode_settings(body, settings, options, bool(tools))
    fmt = request.output_format
    if fmt.kind == "json_object":
        body["response_format"] = {"type": "json_object"}
    elif fmt.kind == "json_schema":
        schema: dict[str, Any] = {"name": fmt.name, "schema": dict(fmt.schema or {})}
        if fmt.description:
            schema["description"] = fmt.description
        if fmt.strict is not None:
            schema["strict"] = fmt.strict
        body["response_format"] = {"type": "json_schema", "json_schema": schema}
    if stream:
        body["stream"] = True
        if options.stream_usage:
            body["stream_options"] = {"include_usage": True}
    if extra:
        body.update(extra)
    if settings.extra_body is not None:
        reserved = RESERVED_KEYS | options.reserved_keys | set(extra or {})
        body.update(settings.extra_body.accept(options.extra_body_tag, reserved))
    return body
