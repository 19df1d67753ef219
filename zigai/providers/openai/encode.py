"""Encode a provider-neutral :class:`~zigai.model.ModelRequest` as one Responses API body.

:func:`encode_request` is pure: the same request, model name and options always give the
same JSON object, and nothing here does I/O.  Settings are translated exactly once, here.

Wire mapping (``POST {root}/responses``):

* ``instructions`` — the resolved instruction list joined with a blank line.
* ``input`` — one item per part, in history order: system prompts and user prompts become
  ``message`` items (plain string content for text, ``input_text`` / ``input_image`` /
  ``input_file`` parts for rich content; cache points are dropped); tool returns become
  ``function_call_output`` items with JSON text output; a retry prompt tied to a tool call
  becomes that call's ``function_call_output`` and otherwise a user message; assistant text
  becomes an assistant ``message``; tool calls become ``function_call`` items.
* ``tools`` — provider-managed web search first, then function tools (``strict`` only when
  the definition sets it); ``tool_choice``/``allowed_tools``, ``parallel_tool_calls``,
  ``max_output_tokens``, ``temperature``, ``top_p``, ``reasoning.effort`` (from
  ``thinking``), ``service_tier``, ``truncation``, ``top_logprobs`` plus the
  ``message.output_text.logprobs`` include, ``text.format`` for JSON output.

Replay rule for provider-generated parts (documented contract):

* Parts OpenAI itself produced carry ``ProviderPart(provider_name=<this provider>)``.  By
  default their item ids are *not* sent and reasoning items are *not* replayed: each request
  is self-contained (tool calls are matched by ``call_id``), which is what the recorded
  conformance exchanges show.  With ``replay_reasoning=True`` reasoning items are sent back
  unchanged (id, summary, ``reasoning_text`` content, ``encrypted_content``: each text in
  the field it was decoded from; a part with no such record sends its text as the one
  summary) and function-call / assistant-message items carry their ids, which OpenAI
  requires whenever a reasoning item precedes them.
* Thinking parts from any other provider are dropped (their opaque state means nothing to
  OpenAI).  Provider-native tool traffic (e.g. web search) is not replayed by default: OpenAI
  ran it inside the earlier response and its outcome is already in the assistant text.  With
  ``replay_native_items=True`` (services whose Responses input accepts them, such as xAI) or
  ``replay_reasoning=True`` (a replayed reasoning item needs the items that followed it) a
  native call part this provider produced is sent back as the complete item it was decoded
  from (kept in its provider details); its return part travels in that same item.  An image
  this provider generated (a file part tagged ``image_generation_call`` or
  ``code_interpreter_call``) travels with its call item too; an image generation item is
  replayed with ``"result": null``.
* Managed tools are rendered by :mod:`.hosted_tools` (web search, code interpreter, image
  generation, file search, remote MCP).
* Content OpenAI cannot accept (audio, video, other generated files, compaction state, tool
  search traffic, a file uploaded to another provider) raises :class:`OpenAIEncodeError`.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from zigai import json as zjson
from zigai.messages import (
    AudioContent,
    BinaryContent,
    BytesSource,
    CachePoint,
    CapabilityLoadCallPart,
    CapabilityLoadReturnPart,
    CompactionPart,
    DocumentContent,
    FilePart,
    ImageContent,
    InstructionPart,
    NativeToolCallPart,
    NativeToolReturnPart,
    ProviderFileSource,
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
    ToolOutcome,
    ToolReturnPart,
    ToolSearchCallPart,
    ToolSearchReturnPart,
    UploadedFile,
    UploadedFileContent,
    UrlSource,
    UserPromptPart,
    VideoContent,
)
from zigai.messages.json_value import thaw_json
from zigai.model import ModelProfile, ModelRequest
from zigai.providers.openai.errors import OpenAIEncodeError
from zigai.providers.openai.hosted_tools import encode_managed_tool
from zigai.settings import ModelSettings, UnsupportedModelSetting

__all__ = ["EncodeOptions", "RESERVED_BODY_KEYS", "encode_request", "encode_tool_output"]

#: Body keys the portable encoder owns; a ProviderExtraBody may not set them.
RESERVED_BODY_KEYS = frozenset(
    {
        "model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
        "max_output_tokens", "temperature", "top_p", "reasoning", "service_tier",
        "truncation", "text", "top_logprobs", "include", "stream", "store",
        "previous_response_id", "conversation",
    }
)
_UNSUPPORTED_SETTINGS = (
    "top_k", "seed", "stop_sequences", "presence_penalty", "frequency_penalty",
    "thinking_budget_tokens",
)
_LOGPROBS_INCLUDE = "message.output_text.logprobs"
_ENCRYPTED_REASONING_INCLUDE = "reasoning.encrypted_content"


@dataclass(frozen=True, slots=True)
class EncodeOptions:
    """Adapter-specific choices that are not portable settings.

    ``provider_name`` identifies parts this provider produced (and files it owns);
    ``extra_body_tag`` is the ProviderExtraBody tag this adapter accepts.
    ``replay_reasoning`` turns on reasoning-item replay (see the module docstring);
    ``include_encrypted_reasoning`` asks OpenAI to return ``encrypted_content``;
    ``reasoning_summary`` requests readable summaries (``auto``/``concise``/``detailed``);
    ``store`` is sent only when not None; ``replay_native_items`` sends provider-executed tool
    items back (see the module docstring).
    """

    provider_name: str = "openai"
    extra_body_tag: str = "openai"
    replay_reasoning: bool = False
    include_encrypted_reasoning: bool = False
    reasoning_summary: str | None = None
    store: bool | None = None
    replay_native_items: bool = False

    def __post_init__(self) -> None:
        if self.reasoning_summary not in (None, "auto", "concise", "detailed"):
            raise OpenAIEncodeError("reasoning_summary must be 'auto', 'concise' or 'detailed'")


def encode_tool_output(content: Any) -> str:
    """Tool-return content as the string ``function_call_output.output`` wants."""
    if isinstance(content, str):
        return content
    return zjson.dumps(thaw_json(content))


def _data_url(source: BytesSource) -> str:
    return f"data:{source.media_type};base64,{base64.b64encode(source.data).decode('ascii')}"


def _owned_file_id(file: UploadedFile, options: EncodeOptions) -> str:
    if file.provider_name != options.provider_name:
        raise OpenAIEncodeError(
            f"file {file.file_id!r} is owned by {file.provider_name!r}, "
            f"not {options.provider_name!r}"
        )
    return file.file_id


def _image(item: ImageContent, options: EncodeOptions) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "input_image"}
    source = item.source
    if isinstance(source, BytesSource):
        out["image_url"] = _data_url(source)
    elif isinstance(source, UrlSource):
        out["image_url"] = source.url
    elif isinstance(source, ProviderFileSource):
        out["file_id"] = source.file_id
    else:
        out["file_id"] = _owned_file_id(source, options)
    if item.detail is not None:
        out["detail"] = item.detail
    return out


def _file(source: Any, filename: str | None, options: EncodeOptions) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "input_file"}
    if isinstance(source, BytesSource):
        out["filename"] = filename or "file"
        out["file_data"] = _data_url(source)
    elif isinstance(source, UrlSource):
        out["file_url"] = source.url
    elif isinstance(source, ProviderFileSource):
        out["file_id"] = source.file_id
    else:
        out["file_id"] = _owned_file_id(source, options)
    return out


def _user_content(part: UserPromptPart, options: EncodeOptions) -> str | list[dict[str, Any]]:
    if isinstance(part.content, str):
        return part.content
    items: list[dict[str, Any]] = []
    for item in part.content:
        if isinstance(item, TextContent):
            items.append({"type": "input_text", "text": item.text})
        elif isinstance(item, TaggedText):
            items.append({"type": "input_text", "text": f"<{item.tag}>{item.text}</{item.tag}>"})
        elif isinstance(item, ImageContent):
            items.append(_image(item, options))
        elif isinstance(item, DocumentContent):
            items.append(_file(item.source, item.title, options))
        elif isinstance(item, BinaryContent):
            items.append(_file(BytesSource(item.data, item.media_type), None, options))
        elif isinstance(item, UploadedFileContent):
            media = item.file.media_type or ""
            if media.startswith("image/"):
                items.append({"type": "input_image", "file_id": _owned_file_id(item.file, options)})
            else:
                items.append({"type": "input_file", "file_id": _owned_file_id(item.file, options)})
        elif isinstance(item, CachePoint):
            continue  # OpenAI caches prompt prefixes automatically
        elif isinstance(item, (AudioContent, VideoContent)):
            raise OpenAIEncodeError(f"the Responses API does not accept {item.kind} input")
        else:  # pragma: no cover - the union is closed
            raise OpenAIEncodeError(f"unknown user content {type(item).__name__}")
    return items


def _message(role: str, content: Any) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": content}


def _own(part: Any, options: EncodeOptions) -> str | None:
    """The provider item id of a part this provider produced, else None."""
    provider = getattr(part, "provider", None)
    if provider is None or provider.provider_name != options.provider_name:
        return None
    return provider.id or getattr(part, "id", None)


def _reasoning_texts(part: ThinkingPart) -> tuple[list[str], list[str]]:
    """The summary and ``reasoning_text`` content texts to replay, as they were decoded."""
    details = part.provider.details if part.provider is not None else None
    summaries = details.get("summary") if details is not None else None
    contents = details.get("content") if details is not None else None
    if isinstance(summaries, tuple) or isinstance(contents, tuple):
        return ([str(s) for s in summaries or ()], [str(c) for c in contents or ()])
    return ([part.content] if part.content else [], [])

def _encode_request_part(part: Any, options: EncodeOptions, out: list[dict[str, Any]]) -> None:
    if isinstance(part, SystemPromptPart):
        out.append(_message("system", part.content))
    elif isinstance(part, UserPromptPart):
        content = _user_content(part, options)
        if content != []:
            out.append(_message("user", content))
    elif isinstance(part, ToolReturnPart):
        out.append({
            "type": "function_call_output",
            "call_id": part.tool_call_id,
            "output": encode_tool_output(part.content),
        })
    elif isinstance(part, RetryPromptPart):
        if part.tool_call_id is not None:
            out.append({
                "type": "function_call_output",
                "call_id": part.tool_call_id,
                "output": part.content,
            })
        else:
            out.append(_message("user", part.content))
    elif isinstance(part, CapabilityLoadReturnPart):
        if part.outcome is ToolOutcome.success:
            output = zjson.dumps({"loaded": list(part.loaded),
                                  "instructions": list(part.instructions)})
        else:
            output = part.content or part.outcome.value
        out.append({"type": "function_call_output", "call_id": part.tool_call_id,
                    "output": output})
    elif isinstance(part, SpeechPromptPart):
        if part.transcript is None:
            raise OpenAIEncodeError("the Responses API does not accept audio input")
        out.append(_message("user", part.transcript))
    elif isinstance(part, ToolAvailabilityPart):
        lines = []
        if part.added:
            lines.append("Tools now available: " + ", ".join(part.added))
        if part.removed:
            lines.append("Tools no longer available: " + ", ".join(part.removed))
        out.append(_message("user", "\n".join(lines)))
    elif isinstance(part, InstructionPart):
        return  # instructions travel in ``instructions`` (ModelRequest.instructions)
    else:  # pragma: no cover - the union is closed
        raise OpenAIEncodeError(f"unknown request part {type(part).__name__}")


def _encode_response_part(part: Any, options: EncodeOptions, out: list[dict[str, Any]]) -> None:
    replay = options.replay_reasoning
    if isinstance(part, TextPart):
        item_id = _own(part, options) if replay else None
        if item_id is None:
            out.append(_message("assistant", part.content))
        else:
            out.append({
                "type": "message", "role": "assistant", "id": item_id, "status": "completed",
                "content": [{"type": "output_text", "text": part.content, "annotations": []}],
            })
    elif isinstance(part, ToolCallPart):
        item = {"type": "function_call", "call_id": part.tool_call_id, "name": part.tool_name,
                "arguments": part.args}
        item_id = _own(part, options) if replay else None
        if item_id is not None:
            item["id"] = item_id
        out.append(item)
    elif isinstance(part, CapabilityLoadCallPart):
        out.append({"type": "function_call", "call_id": part.tool_call_id,
                    "name": part.tool_name,
                    "arguments": zjson.dumps({"capability_id": part.capability_id})})
    elif isinstance(part, ThinkingPart):
        item_id = _own(part, options)
        if not replay or item_id is None:
            return  # see the replay rule in the module docstring
        summaries, contents = _reasoning_texts(part)
        reasoning: dict[str, Any] = {
            "type": "reasoning", "id": item_id,
            "summary": [{"type": "summary_text", "text": s} for s in summaries],
        }
        if contents:
            reasoning["content"] = [{"type": "reasoning_text", "text": c} for c in contents]
        if part.signature is not None:
            reasoning["encrypted_content"] = part.signature
        out.append(reasoning)
    elif isinstance(part, NativeToolCallPart):
        details = part.provider.details
        replay = options.replay_native_items or options.replay_reasoning
        if (replay and part.provider.provider_name == options.provider_name
                and details is not None and isinstance(details.get("type"), str)):
            out.append(details.to_value())
        # otherwise provider-executed and not replayed; see the replay rule
    elif isinstance(part, NativeToolReturnPart):
        return  # its item travels with the call part
    elif isinstance(part, SpeechPart):
        if part.transcript is None:
            raise OpenAIEncodeError("assistant audio without a transcript cannot be replayed")
        out.append(_message("assistant", part.transcript))
    elif isinstance(part, FilePart) and _generated_image(part, options):
        return  # its image_generation_call item travels with the call part
    elif isinstance(part, (FilePart, CompactionPart, ToolSearchCallPart, ToolSearchReturnPart)):
        raise OpenAIEncodeError(f"a {part.part_kind} part cannot be replayed to the Responses API")
    else:  # pragma: no cover - the union is closed
        raise OpenAIEncodeError(f"unknown response part {type(part).__name__}")


def _generated_image(part: FilePart, options: EncodeOptions) -> bool:
    provider = part.provider
    return (provider is not None and provider.provider_name == options.provider_name
            and provider.details is not None
            and provider.details.get("type") in ("image_generation_call",
                                                  "code_interpreter_call"))


def _encode_tools(request: ModelRequest) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    for managed in request.managed_tools:
        tools.append(encode_managed_tool(managed))
    for definition in request.tools:
        function: dict[str, Any] = {
            "type": "function",
            "name": definition.name,
            "description": definition.description,
            "parameters": dict(definition.parameters_json_schema),
        }
        if definition.strict is not None:
            function["strict"] = definition.strict
        tools.append(function)
    return tools


def _reasoning_effort(settings: ModelSettings, profile: ModelProfile | None) -> str | None:
    level = settings.thinking
    if level is None:
        return None
    if level == "off":
        if profile is not None and "off" in profile.reasoning_efforts:
            return "none"
        return None
    return level


def _apply_settings(
    body: dict[str, Any],
    request: ModelRequest,
    profile: ModelProfile | None,
    options: EncodeOptions,
) -> None:
    settings = request.settings
    for name in _UNSUPPORTED_SETTINGS:
        if getattr(settings, name) is not None:
            raise UnsupportedModelSetting(f"the Responses API has no {name!r} control")
    if settings.max_tokens is not None:
        body["max_output_tokens"] = settings.max_tokens
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = settings.parallel_tool_calls
    if settings.allowed_tools is not None:
        declared = {t.name for t in request.tools}
        missing = [name for name in settings.allowed_tools if name not in declared]
        if missing:
            raise OpenAIEncodeError(f"allowed_tools names undeclared tools: {', '.join(missing)}")
        mode = settings.tool_choice or "auto"
        if mode == "none":
            raise OpenAIEncodeError("allowed_tools cannot be combined with tool_choice 'none'")
        body["tool_choice"] = {
            "type": "allowed_tools",
            "mode": mode,
            "tools": [{"type": "function", "name": name} for name in settings.allowed_tools],
        }
    elif settings.tool_choice is not None:
        body["tool_choice"] = settings.tool_choice
    include: list[str] = []
    effort = _reasoning_effort(settings, profile)
    if effort is not None or options.reasoning_summary is not None:
        reasoning: dict[str, Any] = {}
        if effort is not None:
            reasoning["effort"] = effort
        if options.reasoning_summary is not None:
            reasoning["summary"] = options.reasoning_summary
        body["reasoning"] = reasoning
    if options.include_encrypted_reasoning:
        include.append(_ENCRYPTED_REASONING_INCLUDE)
    if settings.service_tier is not None:
        body["service_tier"] = settings.service_tier
    if settings.truncation is not None:
        body["truncation"] = settings.truncation
    if settings.top_logprobs is not None and settings.logprobs is not False:
        body["top_logprobs"] = settings.top_logprobs
        include.append(_LOGPROBS_INCLUDE)
    elif settings.logprobs:
        include.append(_LOGPROBS_INCLUDE)
    if include:
        body["include"] = include
    if options.store is not None:
        body["store"] = options.store


def _encode_output_format(body: dict[str, Any], request: ModelRequest) -> None:
    fmt = request.output_format
    if fmt.kind == "json_object":
        body["text"] = {"format": {"type": "json_object"}}
    elif fmt.kind == "json_schema":
        wire: dict[str, Any] = {"type": "json_schema", "name": fmt.name}
        if fmt.description is not None:
            wire["description"] = fmt.description
        wire["strict"] = True if fmt.strict is None else fmt.strict
        wire["schema"] = dict(fmt.schema or {})
        body["text"] = {"format": wire}


def encode_input(
    messages: tuple[Any, ...], options: EncodeOptions | None = None
) -> list[dict[str, Any]]:
    """The ``input`` item list for a message history."""
    options = options or EncodeOptions()
    items: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, RequestMessage):
            for part in message.parts:
                _encode_request_part(part, options, items)
        elif isinstance(message, ResponseMessage):
            for response_part in message.parts:
                _encode_response_part(response_part, options, items)
        else:
            raise OpenAIEncodeError(f"unknown message {type(message).__name__}")
    return items


def encode_request(
    request: ModelRequest,
    model_name: str,
    *,
    stream: bool = False,
    profile: ModelProfile | None = None,
    options: EncodeOptions | None = None,
) -> dict[str, Any]:
    """The complete JSON body for ``POST responses`` (``stream: true`` when streaming).

    ``profile`` only refines ``thinking="off"`` (see :mod:`.profiles`); feature support is
    checked by the client before encoding.  Raises :class:`OpenAIEncodeError`,
    ``UnsupportedModelSetting`` or ``ExtraBodyRejected`` — never after I/O.
    """
    options = options or EncodeOptions()
    body: dict[str, Any] = {"model": model_name}
    if request.instructions:
        body["instructions"] = "\n\n".join(request.instructions)
    body["input"] = encode_input(request.messages, options)
    tools = _encode_tools(request)
    if tools:
        body["tools"] = tools
    _apply_settings(body, request, profile, options)
    _encode_output_format(body, request)
    if request.settings.extra_body is not None:
        extra = request.settings.extra_body.accept(options.extra_body_tag, RESERVED_BODY_KEYS)
        body.update(extra)
    if stream:
        body["stream"] = True
    return body

