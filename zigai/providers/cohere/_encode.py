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

from collections.abc import Callable, Mapping
from typing import Any

from zigai import json as zjson
from zigai.messages import ThinkingPart
from zigai.model import ModelRequest
from zigai.providers import _encode_core as core
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
_SETTINGS = (("max_tokens", "max_tokens"), ("temperature", "temperature"), ("p", "top_p"),
             ("k", "top_k"), ("seed", "seed"), ("presence_penalty", "presence_penalty"),
             ("frequency_penalty", "frequency_penalty"), ("logprobs", "logprobs"))
_TOOL_SHAPE = core.ToolShape("parameters", wrap=lambda spec: {"type": "function", "function": spec})


def _image(item: Any) -> dict[str, Any]:
    url = core.media_url(item, CohereEncodeError,
                    "Cohere v2 Chat takes images as data or URLs, not provider file ids")
    image: dict[str, Any] = {"url": url}
    if item.detail is not None:
        image["detail"] = item.detail
    return {"type": "image_url", "image_url": image}


def _text_document(item: Any) -> dict[str, Any]:
    source = item.source
    if not (source.kind == "bytes" and source.media_type.startswith("text/")):
        raise CohereEncodeError("Cohere v2 Chat documents must be inline text")
    document: dict[str, Any] = {"data": source.data.decode("utf-8", "replace")}
    if item.title is not None:
        document["id"] = item.title
    return {"type": "document", "document": document}


_USER_ITEMS: Mapping[str, Callable[[Any], dict[str, Any] | None]] = {
    "text": lambda item: {"type": "text", "text": core.item_text(item)},
    "tagged-text": lambda item: {"type": "text", "text": core.item_text(item)},
    "image": _image,
    "document": _text_document,
    "cache-point": lambda item: None,  # Cohere caches prompt prefixes itself
}


def _document(text: str) -> dict[str, Any]:
    return {"type": "document", "document": {"data": text}}


class _Requests:
    """Request parts as v2 Chat messages (see :func:`zigai.providers._encode_core.walk`)."""

    def __init__(self, out: list[dict[str, Any]]) -> None:
        self.out = out

    def system(self, text: str) -> None:
        self.out.append({"role": "system", "content": text})

    def user(self, part: Any) -> None:
        content = core.user_items(part, _USER_ITEMS, label="Cohere v2 Chat", error=CohereEncodeError)
        if content != []:
            self.out.append({"role": "user", "content": content})

    def user_text(self, text: str) -> None:
        self.out.append({"role": "user", "content": text})

    def tool_result(self, call_id: str, content: Any, *, error: bool, retry: bool) -> None:
        item = {"type": "text", "text": content} if retry else _document(core.result_text(content))
        self.out.append({"role": "tool", "tool_call_id": call_id, "content": [item]})


def is_tool_plan(part: ThinkingPart) -> bool:
    details = part.provider.details if part.provider is not None else None
    return details is not None and details.get("tool_plan") is True


class _Answer:
    """One answer's parts as a single assistant message (text, tool plan, tool calls)."""

    def __init__(self, out: list[dict[str, Any]]) -> None:
        self.out = out
        self.content: list[dict[str, Any]] = []
        self.plans: list[str] = []
        self.calls: list[dict[str, Any]] = []

    def text(self, text: str) -> None:
        self.content.append({"type": "text", "text": text})

    def thinking(self, part: Any) -> None:
        if not core.is_own(part, PROVIDER_NAME):
            return  # another provider's reasoning state means nothing here
        if is_tool_plan(part):
            self.plans.append(part.content)
        elif part.content:
            self.content.append({"type": "thinking", "thinking": part.content})

    def tool_call(self, part: Any) -> None:
        arguments = (part.args if part.part_kind == "tool-call"
                     else zjson.dumps({"capability_id": part.capability_id}))
        self.calls.append({"id": part.tool_call_id, "type": "function",
                           "function": {"name": part.tool_name, "arguments": arguments}})

    def native_call(self, part: Any) -> None:
        return  # Cohere executes no provider-side tools

    def end(self) -> None:
        if not (self.content or self.plans or self.calls):
            return
        message: dict[str, Any] = {"role": "assistant"}
        if self.content:
            message["content"] = self.content
        if self.plans:
            message["tool_plan"] = "".join(self.plans)
        if self.calls:
            message["tool_calls"] = self.calls
        self.out.append(message)


def encode_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The chronological ``messages`` list (instructions first, as one system message)."""
    out: list[dict[str, Any]] = []
    if request.instructions:
        out.append({"role": "system", "content": "\n\n".join(request.instructions)})
    core.walk(request.messages, _Requests(out), lambda: _Answer(out), label="Cohere v2 Chat",
         error=CohereEncodeError)
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
    core.copy_settings(body, settings, _SETTINGS, stop_key="stop_sequences")
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
        body["tools"] = core.function_tools(request.tools, _TOOL_SHAPE)
    _apply_settings(body, request)
    extra = request.settings.extra_body
    if extra is not None:
        fields = extra.accept(EXTENSION_TAG, RESERVED_KEYS)
        _check_extension(fields)
        body.update(fields)
    return body
