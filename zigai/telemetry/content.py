"""Recorded content in the shapes of the GenAI semantic conventions' JSON schemas.

Job
    Turn zigai messages, instructions, outputs and tool definitions into the JSON values of
    ``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.system_instructions``
    and ``gen_ai.tool.definitions`` (release :data:`~zigai.telemetry.SEMCONV_VERSION`), and
    render them bounded and redacted without breaking the JSON.

Invariants
    * Part types are the convention's: ``text``, ``reasoning``, ``tool_call``,
      ``tool_call_response``, ``blob``, ``uri``, ``file``; a zigai part with no counterpart
      becomes a generic part whose ``type`` is its zigai kind with ``_`` for ``-``.
    * Tool results keep their JSON value (objects, numbers, lists), never only strings.
    * Every output message carries ``finish_reason``.
    * :func:`render_bounded` cuts string *values* (each redacted), never the JSON text, so a
      recorded attribute is always one JSON document of at most ``max_chars`` characters;
      when even short strings do not fit, the oldest items are dropped first (``[]`` when
      nothing fits).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Sequence
from typing import Any

from zigai.telemetry.records import ContentPolicy

__all__ = ["input_messages", "output_messages", "render_bounded", "system_instructions", "tool_definitions",
           "output_value_messages"]

_FINISH = {"stop": "stop", "length": "length", "content_filter": "content_filter",
           "tool_call": "tool_call", "error": "error"}
_MIN_LEAF = 16


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _plain(value: Any) -> Any:
    """Tool results and outputs as plain JSON values (frozen mappings and tuples thawed)."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


def _modality(media_type: str | None) -> str:
    head = (media_type or "").split("/")[0]
    return head if head in ("image", "audio", "video") else "document"


def _media(source: Any) -> dict[str, Any]:
    """A media source (bytes, URL, provider file or uploaded file) as a blob, uri or file part."""
    common: dict[str, Any] = {"modality": _modality(source.media_type), "mime_type": source.media_type}
    if source.kind == "bytes":
        return {"type": "blob", **common, "content": base64.b64encode(source.data).decode()}
    if source.kind == "url":
        return {"type": "uri", **common, "uri": source.url}
    return {"type": "file", **common, "file_id": source.file_id}


def _user_content(item: Any) -> dict[str, Any]:
    kind = getattr(item, "kind", "")
    if kind == "text":
        return {"type": "text", "content": item.text}
    if kind == "tagged-text":
        return {"type": "text", "content": f"<{item.tag}>{item.text}</{item.tag}>"}
    if kind == "uploaded-file":
        return _media(item.file)
    if hasattr(item, "source"):
        return _media(item.source)
    return {"type": kind.replace("-", "_")}  # a cache point: no content


def _request_part(part: Any) -> tuple[str, dict[str, Any]]:
    kind = part.part_kind
    if kind in ("system-prompt", "instruction"):
        return "system", {"type": "text", "content": part.content}
    if kind == "user-prompt":
        if isinstance(part.content, str):
            return "user", {"type": "text", "content": part.content}
        return "user", {"type": "_several", "parts": [_user_content(c) for c in part.content]}
    if kind in ("tool-return", "capability-load-return"):
        return "tool", {"type": "tool_call_response", "id": part.tool_call_id, "response": _plain(part.content)}
    if kind == "retry-prompt":
        if part.tool_call_id is not None:
            return "tool", {"type": "tool_call_response", "id": part.tool_call_id, "response": part.content}
        return "user", {"type": "text", "content": part.content}
    return "user", {"type": kind.replace("-", "_")}


def _response_parts(message: Any) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in message.parts:
        kind = part.part_kind
        if kind == "text":
            parts.append({"type": "text", "content": part.content})
        elif kind == "thinking":
            parts.append({"type": "reasoning", "content": part.content})
        elif kind in ("tool-call", "native-tool-call"):
            parts.append({"type": "tool_call", "id": part.tool_call_id, "name": part.tool_name,
                          "arguments": _json_or_text(part.args)})
        elif kind == "capability-load-call":
            parts.append({"type": "tool_call", "id": part.tool_call_id, "name": part.tool_name,
                          "arguments": {"capability_id": part.capability_id}})
        elif kind == "native-tool-return":
            parts.append({"type": "tool_call_response", "id": part.tool_call_id, "response": _plain(part.content)})
        elif kind == "file":
            parts.append(_media(part.source))
        else:
            parts.append({"type": kind.replace("-", "_")})
    return parts


def input_messages(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """``gen_ai.input.messages``: one message per run of same-role parts."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.kind == "response":
            out.append({"role": "assistant", "parts": _response_parts(message)})
            continue
        current: dict[str, Any] | None = None
        for part in message.parts:
            role, item = _request_part(part)
            if current is None or current["role"] != role:
                current = {"role": role, "parts": []}
                out.append(current)
            current["parts"].extend(item["parts"] if item["type"] == "_several" else [item])
    return out


def _finish(reason: Any) -> str:
    value = getattr(reason, "value", reason)
    return _FINISH.get(str(value), "stop" if value is None else str(value))


def output_messages(response: Any) -> list[dict[str, Any]]:
    """``gen_ai.output.messages`` for one model response (``finish_reason`` always set)."""
    return [{"role": "assistant", "parts": _response_parts(response),
             "finish_reason": _finish(response.finish_reason)}]


def output_value_messages(output: Any) -> list[dict[str, Any]]:
    """``gen_ai.output.messages`` for a run's final output (text, or structured as JSON text)."""
    text = output if isinstance(output, str) else json.dumps(_plain(output), ensure_ascii=False)
    return [{"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": "stop"}]


def system_instructions(instructions: Sequence[str]) -> list[dict[str, Any]]:
    """``gen_ai.system_instructions``: one text part per instruction."""
    return [{"type": "text", "content": text} for text in instructions]


def tool_definitions(tools: Iterable[Any]) -> list[dict[str, Any]]:
    """``gen_ai.tool.definitions``: function tools with description and parameter schema."""
    out = []
    for tool in tools:
        item: dict[str, Any] = {"type": "function", "name": tool.name}
        if tool.description:
            item["description"] = tool.description
        item["parameters"] = _plain(tool.parameters_json_schema)
        out.append(item)
    return out


def _cut(value: Any, limit: int, policy: ContentPolicy) -> Any:
    if isinstance(value, str):
        return policy.redactor.text(value, limit)
    if isinstance(value, dict):
        return {k: _cut(v, limit, policy) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v, limit, policy) for v in value]
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def render_bounded(value: list[Any], policy: ContentPolicy) -> str:
    """``value`` as one JSON document within ``policy.max_chars``, strings redacted and cut."""
    limit = policy.max_chars
    items = list(value)
    while True:
        text = _dumps(_cut(items, limit, policy))
        if len(text) <= policy.max_chars:
            return text
        if limit > _MIN_LEAF:
            limit = max(_MIN_LEAF, limit // 2)
        elif items:
            items = items[1:]
        else:
            return "[]"  # nothing fits: an empty list, still one JSON document
