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

from collections.abc import Callable, Mapping
from typing import Any

from zigai.messages.json_value import thaw_json
from zigai.model import ModelRequest
from zigai.providers._encode_core import (
    call_arguments,
    copy_settings,
    is_own,
    item_text,
    media_url,
    result_text,
    user_items,
    walk,
)
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
_SETTINGS = (("max_tokens", "max_tokens"), ("temperature", "temperature"), ("top_p", "top_p"),
             ("random_seed", "seed"), ("presence_penalty", "presence_penalty"),
             ("frequency_penalty", "frequency_penalty"))


def _entry(kind: str, **fields: Any) -> dict[str, Any]:
    return {"object": "entry", "type": kind, **fields}


def _media(item: Any) -> dict[str, Any]:
    url = media_url(item, MistralEncodeError, f"Mistral Conversations takes {item.kind} input "
                    "as data or a URL, not a provider file id")
    if item.kind == "image":
        return {"type": "image_url", "image_url": url}
    chunk: dict[str, Any] = {"type": "document_url", "document_url": url}
    if item.title is not None:
        chunk["document_name"] = item.title
    return chunk


_USER_ITEMS: Mapping[str, Callable[[Any], dict[str, Any] | None]] = {
    "text": lambda item: {"type": "text", "text": item_text(item)},
    "tagged-text": lambda item: {"type": "text", "text": item_text(item)},
    "image": _media,
    "document": _media,
    "cache-point": lambda item: None,
}


class _Requests:
    """Request parts as input entries; system prompts are collected for ``instructions``."""

    def __init__(self, out: list[dict[str, Any]], system: list[str]) -> None:
        self.out = out
        self.system_texts = system

    def system(self, text: str) -> None:
        self.system_texts.append(text)

    def user(self, part: Any) -> None:
        content = user_items(part, _USER_ITEMS, label="Mistral Conversations",
                             error=MistralEncodeError)
        if content != []:
            self.user_text(content)

    def user_text(self, text: Any) -> None:
        self.out.append(_entry("message.input", role="user", content=text))

    def tool_result(self, call_id: str, content: Any, *, error: bool, retry: bool) -> None:
        self.out.append(_entry("function.result", tool_call_id=call_id,
                               result=result_text(content)))


class _Assistant:
    """Collects one response's parts into output entries, text and thinking merged per run."""

    def __init__(self, out: list[dict[str, Any]]) -> None:
        self.out = out
        self.chunks: list[dict[str, Any]] = []

    def end(self) -> None:
        if not self.chunks:
            return
        if len(self.chunks) == 1 and self.chunks[0]["type"] == "text":
            content: Any = self.chunks[0]["text"]
        else:
            content = self.chunks
        self.out.append(_entry("message.output", role="assistant", content=content))
        self.chunks = []

    def text(self, text: str) -> None:
        self.chunks.append({"type": "text", "text": text})

    def thinking(self, part: Any) -> None:
        if is_own(part, PROVIDER_NAME) and part.content:
            self.chunks.append({"type": "thinking",
                                "thinking": [{"type": "text", "text": part.content}]})

    def tool_call(self, part: Any) -> None:
        self.end()
        arguments = call_arguments(part, MistralEncodeError, f"tool call {part.tool_call_id!r}")
        self.out.append(_entry("function.call", tool_call_id=part.tool_call_id,
                               name=part.tool_name, arguments=arguments))

    def native_call(self, part: Any) -> None:
        if is_own(part, PROVIDER_NAME):
            self.end()
            self.out.append(_tool_execution(part))


def _tool_execution(part: Any) -> dict[str, Any]:
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
    walk(messages, _Requests(out, system), lambda: _Assistant(out),
         label="Mistral Conversations", error=MistralEncodeError)
    return out, system


def completion_args(request: ModelRequest) -> dict[str, Any]:
    """The ``completion_args`` object (empty when nothing is set)."""
    settings = request.settings
    args: dict[str, Any] = {}
    copy_settings(args, settings, _SETTINGS, stop_key="stop")
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
