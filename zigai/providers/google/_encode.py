"""Neutral ModelRequest -> Gemini GenerateContent request body (a pure function).

Rules:

* ``systemInstruction.parts`` holds one text part per system prompt (history order), then one
  per resolved instruction.  Request parts become ``user`` contents and response parts
  ``model`` contents; adjacent contents of one role are merged.
* Tool returns become ``functionResponse`` parts with ``response: {"result": value}``; a
  failed outcome or a tool-bound retry prompt uses ``{"error": value}``.  A free-standing retry
  prompt is user text.
* Thought signatures are replayed unchanged — but only to the provider that produced them
  (same provider name): thinking parts become ``{text, thought: true, thoughtSignature}``,
  text and function calls carry ``thoughtSignature`` from ``ProviderPart.details``.  Thinking
  from any other provider is dropped; its text is not shown to Gemini as model output.
* Function call ids are always sent (ids synthesized by the decoder included), so the
  ``functionResponse`` pairs with its call.
* Code execution parts (``NativeToolCallPart`` / ``NativeToolReturnPart`` named
  ``code_execution``) go back as ``executableCode`` / ``codeExecutionResult`` to the provider
  that ran them, with their ids only when Gemini sent them; other providers' native tool parts
  are dropped (they ran elsewhere and cannot be replayed here).
* ``parameters`` use the documented Schema subset (:mod:`._schema`); structured output uses
  ``responseMimeType`` + ``responseJsonSchema``.
"""

from __future__ import annotations

import base64
from typing import Any

from zigai import json as zjson
from zigai.messages import (
    BytesSource,
    Message,
    NativeToolCallPart,
    NativeToolReturnPart,
    RequestMessage,
    ToolCallPart,
    ToolOutcome,
    UserPromptPart,
)
from zigai.messages.json_value import thaw_json
from zigai.model import ModelRequest, UnsupportedModelFeature
from zigai.providers._encode_core import availability_sentences, turns
from zigai.providers.google._errors import GoogleEncodeError
from zigai.providers.google._schema import gemini_schema

__all__ = [
    "CODE_EXECUTION",
    "EXTRA_BODY_TAG",
    "RESERVED_KEYS",
    "SIGNATURE_KEY",
    "SYNTHESIZED_ID_KEY",
    "encode_contents",
    "encode_request",
]

EXTRA_BODY_TAG = "google"
SIGNATURE_KEY = "thought_signature"
CODE_EXECUTION = "code_execution"  # the native tool name of executableCode / codeExecutionResult
SYNTHESIZED_ID_KEY = "synthesized_id"  # ProviderPart detail: the id is ours, never send it
RESERVED_KEYS = frozenset(
    {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}
)
_UNSUPPORTED_SETTINGS = ("parallel_tool_calls", "truncation", "service_tier")


def _blob(source: Any, default_type: str | None, path: str) -> dict[str, Any]:
    if source.kind == "bytes":
        return {"inlineData": {"mimeType": source.media_type,
                               "data": base64.b64encode(source.data).decode("ascii")}}
    if source.kind in ("url", "provider-file", "uploaded-file"):
        uri = source.url if source.kind == "url" else source.file_id
        mime = source.media_type or default_type
        data: dict[str, Any] = {"fileUri": uri}
        if mime:
            data["mimeType"] = mime
        return {"fileData": data}
    raise GoogleEncodeError(f"{path}: unsupported media source", path=path)


def _user_parts(part: UserPromptPart, path: str) -> list[dict[str, Any]]:
    if isinstance(part.content, str):
        return [{"text": part.content}]
    parts: list[dict[str, Any]] = []
    for index, item in enumerate(part.content):
        where = f"{path}.content[{index}]"
        if item.kind == "text":
            parts.append({"text": item.text})
        elif item.kind == "tagged-text":
            parts.append({"text": f"<{item.tag}>{item.text}</{item.tag}>"})
        elif item.kind in ("image", "audio", "video", "document"):
            parts.append(_blob(item.source, None, where))
        elif item.kind == "binary":
            parts.append(_blob(BytesSource(item.data, item.media_type), None, where))
        elif item.kind == "uploaded-file":
            parts.append(_blob(item.file, None, where))
        else:
            raise UnsupportedModelFeature(f"Gemini does not accept {item.kind} content")
    return parts


def _response_value(content: Any) -> Any:
    return thaw_json(content)


def _request_parts(message: RequestMessage, path: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for index, part in enumerate(message.parts):
        where = f"{path}.parts[{index}]"
        if part.part_kind in ("system-prompt", "instruction"):
            continue
        if part.part_kind == "user-prompt":
            parts.extend(_user_parts(part, where))
        elif part.part_kind == "tool-return":
            key = "result" if part.outcome is ToolOutcome.success else "error"
            parts.append({"functionResponse": {"name": part.tool_name,
                                               "response": {key: _response_value(part.content)},
                                               "id": part.tool_call_id}})
        elif part.part_kind == "retry-prompt":
            if part.tool_call_id is not None and part.tool_name is not None:
                parts.append({"functionResponse": {"name": part.tool_name,
                                                   "response": {"error": part.content},
                                                   "id": part.tool_call_id}})
            else:
                parts.append({"text": part.content})
        elif part.part_kind == "capability-load-return":
            key = "result" if part.outcome is ToolOutcome.success else "error"
            value = part.content if part.content is not None else list(part.instructions)
            parts.append({"functionResponse": {"name": part.tool_name, "response": {key: value},
                                               "id": part.tool_call_id}})
        elif part.part_kind == "speech-prompt":
            parts.append(_blob(part.audio.source, None, where))
        elif part.part_kind == "tool-availability":
            parts.append({"text": availability_sentences(part)})
        else:
            raise GoogleEncodeError(f"{where}: cannot encode {type(part).__name__}", path=where)
    return parts


def _signature(part: Any, provider_name: str) -> str | None:
    provider = getattr(part, "provider", None)
    if provider is None or provider.provider_name != provider_name or provider.details is None:
        return None
    value = provider.details.get(SIGNATURE_KEY)
    return value if isinstance(value, str) else None


def _args(part: ToolCallPart | NativeToolCallPart, path: str) -> dict[str, Any]:
    try:
        value = part.args_as_dict()
    except Exception as exc:
        raise GoogleEncodeError(f"{path}: tool call arguments are not a JSON object: {exc}",
                                path=path) from None
    return value


def _code_execution(
    part: NativeToolCallPart | NativeToolReturnPart, path: str, provider_name: str
) -> dict[str, Any] | None:
    if part.provider.provider_name != provider_name or part.tool_name != CODE_EXECUTION:
        return None
    details = part.provider.details
    keep_id = details is None or details.get(SYNTHESIZED_ID_KEY) is not True
    if part.part_kind == "native-tool-call":
        args = _args(part, path)
        code = args.get("code")
        if not isinstance(code, str):
            raise GoogleEncodeError(f"{path}: code execution arguments need a string 'code'",
                                    path=path)
        body: dict[str, Any] = {"language": args.get("language") or "PYTHON", "code": code}
        key = "executableCode"
    else:
        content = thaw_json(part.content)
        if not isinstance(content, dict) or not isinstance(content.get("outcome"), str):
            raise GoogleEncodeError(f"{path}: a code execution result needs a string 'outcome'",
                                    path=path)
        body = {"outcome": content["outcome"]}
        if isinstance(content.get("output"), str):
            body["output"] = content["output"]
        key = "codeExecutionResult"
    if keep_id:
        body["id"] = part.tool_call_id
    return {key: body}


def _model_parts(message: Any, path: str, provider_name: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for index, part in enumerate(message.parts):
        where = f"{path}.parts[{index}]"
        out: dict[str, Any] | None = None
        if part.part_kind == "thinking":
            if part.provider is None or part.provider.provider_name != provider_name:
                continue
            out = {"text": part.content, "thought": True}
            if part.signature:
                out["thoughtSignature"] = part.signature
            parts.append(out)
            continue
        if part.part_kind == "text":
            out = {"text": part.content}
        elif part.part_kind == "tool-call":
            out = {"functionCall": {"name": part.tool_name, "args": _args(part, where),
                                    "id": part.tool_call_id}}
        elif part.part_kind == "capability-load-call":
            # an ordinary functionCall, so the load's functionResponse is never orphaned
            out = {"functionCall": {"name": part.tool_name,
                                    "args": {"capability_id": part.capability_id},
                                    "id": part.tool_call_id}}
        elif part.part_kind == "file":
            out = _blob(part.source, None, where)
        elif part.part_kind in ("native-tool-call", "native-tool-return"):
            out = _code_execution(part, where, provider_name)
        if out is None:
            continue
        signature = _signature(part, provider_name)
        if signature is not None:
            out["thoughtSignature"] = signature
        elif part.part_kind == "text" and not part.content:
            continue
        parts.append(out)
    return parts


def encode_contents(
    messages: tuple[Message, ...], provider_name: str
) -> tuple[list[str], list[dict[str, Any]]]:
    """``(system texts, contents)`` for the history, merging adjacent contents of one role."""
    return turns(messages, _request_parts,
                 lambda message, path: _model_parts(message, path, provider_name),
                 roles=("user", "model"), key="parts")


def _thinking_config(request: ModelRequest, include_thoughts: bool | None) -> dict[str, Any]:
    settings = request.settings
    config: dict[str, Any] = {}
    if settings.thinking == "off":
        config["thinkingBudget"] = 0
    elif settings.thinking_budget_tokens is not None:
        config["thinkingBudget"] = settings.thinking_budget_tokens
    elif settings.thinking is not None:
        config["thinkingLevel"] = settings.thinking.upper()
    if include_thoughts is not None:
        config["includeThoughts"] = include_thoughts
    return config


def encode_request(
    request: ModelRequest, *, provider_name: str = "gcp.gen_ai",
    include_thoughts: bool | None = None,
) -> dict[str, Any]:
    """The GenerateContent body for ``request`` (settings must already be merged)."""
    settings = request.settings
    for name in _UNSUPPORTED_SETTINGS:
        if getattr(settings, name) is not None:
            raise UnsupportedModelFeature(f"the Gemini API has no {name!r} control")
    system, contents = encode_contents(request.messages, provider_name)
    system.extend(request.instructions)
    body: dict[str, Any] = {}
    if system:
        body["systemInstruction"] = {"parts": [{"text": text} for text in system]}
    body["contents"] = contents
    tools: list[dict[str, Any]] = []
    declarations = []
    allowed = settings.allowed_tools
    forced = settings.tool_choice == "required"
    for tool in request.tools:
        if allowed is not None and not forced and tool.name not in allowed:
            continue  # allowedFunctionNames is only valid with mode ANY; narrow the list instead
        entry: dict[str, Any] = {"name": tool.name}
        if tool.description:
            entry["description"] = tool.description
        parameters = gemini_schema(tool.parameters_json_schema)
        if parameters:
            entry["parameters"] = parameters
        declarations.append(entry)
    if declarations:
        tools.append({"functionDeclarations": declarations})
    for managed in request.managed_tools:
        key = {"web_search": "googleSearch", "web_fetch": "urlContext",
               "code_execution": "codeExecution"}.get(managed.kind)
        if key is None:
            raise UnsupportedModelFeature(f"Gemini has no {managed.kind} tool")
        tools.append({key: dict(managed.config or {})})
    if tools:
        body["tools"] = tools
    calling: dict[str, Any] = {}
    if settings.tool_choice is not None:
        calling["mode"] = {"auto": "AUTO", "none": "NONE", "required": "ANY"}[settings.tool_choice]
    if allowed is not None and forced and declarations:
        calling["allowedFunctionNames"] = list(allowed)
    if calling and declarations:
        body["toolConfig"] = {"functionCallingConfig": calling}
    generation: dict[str, Any] = {}
    fmt = request.output_format
    if fmt.kind == "json_schema":
        generation["responseMimeType"] = "application/json"
        generation["responseJsonSchema"] = zjson.parse(zjson.dumps(dict(fmt.schema or {})),
                                                       zjson.defaults.json_schema)
    elif fmt.kind == "json_object":
        generation["responseMimeType"] = "application/json"
    pairs = (
        ("maxOutputTokens", settings.max_tokens), ("temperature", settings.temperature),
        ("topP", settings.top_p), ("topK", settings.top_k), ("seed", settings.seed),
        ("presencePenalty", settings.presence_penalty),
        ("frequencyPenalty", settings.frequency_penalty),
        ("responseLogprobs", settings.logprobs), ("logprobs", settings.top_logprobs),
    )
    for key, value in pairs:
        if value is not None:
            generation[key] = value
    if settings.stop_sequences:
        generation["stopSequences"] = list(settings.stop_sequences)
    thinking = _thinking_config(request, include_thoughts)
    if thinking:
        generation["thinkingConfig"] = thinking
    if generation:
        body["generationConfig"] = generation
    if settings.extra_body is not None:
        body.update(settings.extra_body.accept(EXTRA_BODY_TAG, RESERVED_KEYS))
    return body
