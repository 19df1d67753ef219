"""Encode neutral requests as Mistral Conversations bodies (``POST conversations``).

:func:`encode_request` is pure.  Wire mapping:

* ``inputs`` — one conversation entry per part, in history order: user prompts become
  ``message.input`` entries (plain string, or ``text`` / ``image_url`` / ``document_url``
  chunks); tool returns become ``function.result`` entries (JSON results as JSON text); a
  retry prompt tied to a call is that call's ``function.result``, otherwise a user message;
  assistant text becomes a ``message.output`` entry (Mistral thinking as a ``thinking``
  chunk in it); tool calls become ``function.call`` entries with the arguments as a JSON
  object; Mistral's own tool executions (web search, code interpreter ...) are replayed as
  the ``tool.execution`` entries they came from.
* ``instructions`` — system prompts of the history, then the request instructions, joined
  with a blank line.
* ``tools`` — see :func:`.tools.encode_tools`.
* ``completion_args`` (only when a setting is set) — ``max_tokens``, ``temperature``,
  ``top_p``, ``random_seed``, ``stop``, penalties, ``tool_choice`` (``auto`` / ``none`` /
  ``any`` for required) and ``response_format`` (``json_object``, or ``json_schema`` with
  name, schema, strict and description).
* ``store`` — ``false`` for the stateless model route; ``true`` when a stored conversation
  is started or appended to.  ``stream`` is always sent.
* The ``mistral`` extension body may add Conversations-only fields (``handoff_execution``,
  ``name``, ``description``, ``metadata`` ...); keys the encoder owns are refused.

A stored session's append (:func:`encode_append`) carries only the new entries and
completion arguments (structured output is one): instructions, system prompts and tools
belong to the initial request, and a request carrying them is refused before I/O.
"""

from __future__ import annotations

import base64
from typing import Any

from zigai import json as zjson
from zigai.errors import JsonError
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
from zigai.providers.mistral._errors import MistralEncodeError
from zigai.providers.mistral.tools import MistralTool, encode_tools

__all__ = [
    "APPEND_RESERVED_KEYS", "EXTENSION_TAG", "PROVIDER_NAME", "RESERVED_KEYS", "encode_append",
    "encode_inputs", "encode_request",
]

PROVIDER_NAME = "mistral"
EXTENSION_TAG = "mistral"
RESERVED_KEYS = frozenset({"model", "inputs", "instructions", "tools", "completion_args",
                           "store", "stream", "agent_id", "agent_version"})
APPEND_RESERVED_KEYS = frozenset({"inputs", "completion_args", "store", "stream"})


def _entry(kind: str, **fields: Any) -> dict[str, Any]:
    return {"object": "entry", "type": kind, **fields}


def _result_text(content: Any) -> str:
    return content if isinstance(content, str) else zjson.dumps(thaw_json(content))


def _data_url(source: BytesSource) -> str:
    return f"data:{source.media_type};base64,{base64.b64encode(source.data).decode('ascii')}"


def _user_content(part: UserPromptPart) -> str | list[dict[str, Any]]:
    if isinstance(part.content, str):
        return part.content
    chunks: list[dict[str, Any]] = []
    for item in part.content:
        if isinstance(item, TextContent):
            chunks.append({"type": "text", "text": item.text})
        elif isinstance(item, TaggedText):
            chunks.append({"type": "text", "text": f"<{item.tag}>{item.text}</{item.tag}>"})
        elif isinstance(item, (ImageContent, DocumentContent)):
            source = item.source
            if isinstance(source, BytesSource):
                url = _data_url(source)
            elif isinstance(source, UrlSource):
                url = source.url
            else:
                raise MistralEncodeError(f"Mistral Conversations takes {item.kind} input as "
                                         "data or a URL, not a provider file id")
            if isinstance(item, ImageContent):
                chunks.append({"type": "image_url", "image_url": url})
            else:
                chunk: dict[str, Any] = {"type": "document_url", "document_url": url}
                if item.title is not None:
                    chunk["document_name"] = item.title
                chunks.append(chunk)
        elif isinstance(item, CachePoint):
            continue
        else:
            raise MistralEncodeError(f"Mistral Conversations does not accept {item.kind} input")
    return chunks


def _function_result(call_id: str, text: str) -> dict[str, Any]:
    return _entry("function.result", tool_call_id=call_id, result=text)


def _request_part(part: Any, out: list[dict[str, Any]], system: list[str]) -> None:
    if isinstance(part, SystemPromptPart):
        system.append(part.content)
    elif isinstance(part, UserPromptPart):
        content = _user_content(part)
        if content != []:
            out.append(_entry("message.input", role="user", content=content))
    elif isinstance(part, ToolReturnPart):
        out.append(_function_result(part.tool_call_id, _result_text(part.content)))
    elif isinstance(part, RetryPromptPart):
        if part.tool_call_id is None:
            out.append(_entry("message.input", role="user", content=part.content))
        else:
            out.append(_function_result(part.tool_call_id, part.content))
    elif isinstance(part, CapabilityLoadReturnPart):
        content, _ = capability_result(part)
        out.append(_function_result(part.tool_call_id, _result_text(content)))
    elif isinstance(part, SpeechPromptPart):
        if part.transcript is None:
            raise MistralEncodeError("Mistral Conversations does not accept audio input")
        out.append(_entry("message.input", role="user", content=part.transcript))
    elif isinstance(part, ToolAvailabilityPart):
        out.append(_entry("message.input", role="user", content=availability_text(part)))
    elif isinstance(part, InstructionPart):
        return
    else:  # pragma: no cover - the request part union is closed
        raise MistralEncodeError(f"a {type(part).__name__} cannot be sent to Mistral")


def _arguments(args: str, where: str) -> Any:
    try:
        value = zjson.parse(args or "{}", zjson.defaults.tool_payload)
    except JsonError as exc:
        raise MistralEncodeError(f"{where}: tool call arguments are not JSON ({exc})") from None
    return value


def _own(part: Any) -> bool:
    provider = getattr(part, "provider", None)
    return provider is not None and provider.provider_name == PROVIDER_NAME


class _Assistant:
    """Collects one response's parts into output entries, text and thinking merged per run."""

    def __init__(self, out: list[dict[str, Any]]) -> None:
        self.out = out
        self.chunks: list[dict[str, Any]] = []

    def flush(self) -> None:
        if not self.chunks:
            return
        if len(self.chunks) == 1 and self.chunks[0]["type"] == "text":
            content: Any = self.chunks[0]["text"]
        else:
            content = self.chunks
        self.out.append(_entry("message.output", role="assistant", content=content))
        self.chunks = []

    def add(self, part: Any) -> None:
        if isinstance(part, TextPart):
            if part.content:
                self.chunks.append({"type": "text", "text": part.content})
        elif isinstance(part, ThinkingPart):
            if _own(part) and part.content:
                self.chunks.append({"type": "thinking",
                                    "thinking": [{"type": "text", "text": part.content}]})
        elif isinstance(part, SpeechPart):
            if part.transcript is None:
                raise MistralEncodeError("assistant audio without a transcript cannot be replayed")
            self.chunks.append({"type": "text", "text": part.transcript})
        elif isinstance(part, (ToolCallPart, CapabilityLoadCallPart)):
            self.flush()
            if isinstance(part, ToolCallPart):
                arguments = _arguments(part.args, f"tool call {part.tool_call_id!r}")
            else:
                arguments = {"capability_id": part.capability_id}
            self.out.append(_entry("function.call", tool_call_id=part.tool_call_id,
                                   name=part.tool_name, arguments=arguments))
        elif isinstance(part, NativeToolCallPart):
            if _own(part):
                self.flush()
                self.out.append(_tool_execution(part))
        elif isinstance(part, NativeToolReturnPart):
            return  # the execution entry travels with its call part
        else:
            raise MistralEncodeError(f"a {part.part_kind} part cannot be replayed to Mistral")


def _tool_execution(part: NativeToolCallPart) -> dict[str, Any]:
    entry = _entry("tool.execution", name=part.tool_name, arguments=part.args)
    details = part.provider.details
    info = details.get("info") if details is not None else None
    if info is not None:
        entry["info"] = thaw_json(info)
    return entry


def encode_inputs(messages: tuple[Any, ...]) -> tuple[list[dict[str, Any]], list[str]]:
    """The ``inputs`` entries of a history, and the system prompts it carries."""
    out: list[dict[str, Any]] = []
    system: list[str] = []
    for message in messages:
        if isinstance(message, RequestMessage):
            for part in message.parts:
                _request_part(part, out, system)
        elif isinstance(message, ResponseMessage):
            assistant = _Assistant(out)
            for response_part in message.parts:
                assistant.add(response_part)
            assistant.flush()
        else:
            raise MistralEncodeError(f"unknown message {type(message).__name__}")
    return out, system


def completion_args(request: ModelRequest) -> dict[str, Any]:
    """The ``completion_args`` object (empty when nothing is set)."""
    settings = request.settings
    args: dict[str, Any] = {}
    pairs = (
        ("max_tokens", settings.max_tokens), ("temperature", settings.temperature),
        ("top_p", settings.top_p), ("random_seed", settings.seed),
        ("presence_penalty", settings.presence_penalty),
        ("frequency_penalty", settings.frequency_penalty),
    )
    for key, value in pairs:
        if value is not None:
            args[key] = value
    if settings.stop_sequences:
        args["stop"] = list(settings.stop_sequences)
    if settings.tool_choice is not None:
        args["tool_choice"] = "any" if settings.tool_choice == "required" else settings.tool_choice
    fmt = request.output_format
    if fmt.kind == "json_object":
        args["response_format"] = {"type": "json_object"}
    elif fmt.kind == "json_schema":
        schema: dict[str, Any] = {"name": fmt.name, "schema": dict(fmt.schema or {}),
                                  "strict": True if fmt.strict is None else fmt.strict}
        if fmt.description is not None:
            schema["description"] = fmt.description
        args["response_format"] = {"type": "json_schema", "json_schema": schema}
    return args


def _extra(request: ModelRequest, reserved: frozenset[str]) -> dict[str, Any]:
    extra = request.settings.extra_body
    return {} if extra is None else extra.accept(EXTENSION_TAG, reserved)


def encode_request(
    request: ModelRequest,
    *,
    model_name: str,
    stream: bool = False,
    store: bool = False,
    managed: tuple[MistralTool, ...] = (),
) -> dict[str, Any]:
    """The complete ``POST conversations`` body (settings already merged and checked)."""
    inputs, system = encode_inputs(request.messages)
    body: dict[str, Any] = {"model": model_name, "inputs": inputs}
    instructions = [*system, *request.instructions]
    if instructions:
        body["instructions"] = "\n\n".join(instructions)
    tools = encode_tools(request, managed)
    if tools:
        body["tools"] = tools
    args = completion_args(request)
    if args:
        body["completion_args"] = args
    body["store"] = store
    body["stream"] = stream
    body.update(_extra(request, RESERVED_KEYS))
    return body


def encode_append(request: ModelRequest, *, stream: bool = False) -> dict[str, Any]:
    """The ``POST conversations/{id}`` body: only new entries and completion arguments."""
    if request.instructions or request.tools or request.managed_tools:
        raise MistralEncodeError(
            "a stored conversation keeps the instructions and tools of its initial request; "
            "append only new entries and completion settings"
        )
    inputs, system = encode_inputs(request.messages)
    if system:
        raise MistralEncodeError("system prompts belong to the initial request of a stored "
                                 "conversation")
    if not inputs:
        raise MistralEncodeError("append needs at least one new entry")
    body: dict[str, Any] = {"inputs": inputs}
    args = completion_args(request)
    if args:
        body["completion_args"] = args
    body["store"] = True
    body["stream"] = stream
    body.update(_extra(request, APPEND_RESERVED_KEYS))
    return body
