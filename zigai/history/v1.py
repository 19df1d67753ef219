"""Migration of version-1 (role-based) ZigAI histories to version-2 messages.

The version-1 document this parser accepts is exactly::

    {"version": 1, "messages": [ <v1 message>, ... ]}

where each v1 message is an object with a ``role`` and role-specific fields
(no other fields are allowed):

``{"role": "system", "content": <string>}``
    becomes a :class:`SystemPromptPart`.
``{"role": "user", "content": <string>}``
    becomes a :class:`UserPromptPart` with text content.
``{"role": "assistant", "content": <string | null>?, "tool_calls": [<call>, ...]?}``
    becomes one :class:`ResponseMessage`: a :class:`TextPart` when ``content``
    is a non-empty string, then one :class:`ToolCallPart` per call in order.
    A call is ``{"id": <string>, "name": <string>, "arguments": <string | object>}``;
    string arguments are kept verbatim as the raw JSON text, an object is
    encoded to compact JSON text; ``arguments`` may be omitted (``"{}"``).
``{"role": "tool", "tool_call_id": <string>, "content": <JSON value>, "name": <string>?}``
    becomes a :class:`ToolReturnPart`.  ``name`` may be omitted when an earlier
    assistant call with that id names the tool.

Consecutive ``system``/``user``/``tool`` messages are grouped, in order, into one
:class:`RequestMessage` (version 2 alternates requests and responses); every
``assistant`` message becomes its own response.  Version 1 carried no usage,
timestamps, ids or provider data, so those stay at their defaults.
"""

from __future__ import annotations

import json
from typing import Any

from zigai import messages as m
from zigai.errors import MessageError
from zigai.history.decode import obj, string
from zigai.history.errors import InvalidHistory

__all__ = ["migrate_v1"]

_ALLOWED = {
    "system": {"role", "content"},
    "user": {"role", "content"},
    "assistant": {"role", "content", "tool_calls"},
    "tool": {"role", "content", "tool_call_id", "name"},
}


def _check_keys(data: dict[str, Any], role: str, path: str) -> None:
    for key in data:
        if key not in _ALLOWED[role]:
            raise InvalidHistory(f"unknown field for a v1 {role!r} message", path=f"{path}.{key}")


def _required(data: dict[str, Any], key: str, path: str) -> Any:
    if key not in data:
        raise InvalidHistory("missing required field", path=f"{path}.{key}")
    return data[key]


def _call(value: Any, path: str) -> m.ToolCallPart:
    data = obj(value, path)
    for key in data:
        if key not in ("id", "name", "arguments"):
            raise InvalidHistory("unknown field for a v1 tool call", path=f"{path}.{key}")
    call_id = string(_required(data, "id", path), f"{path}.id")
    name = string(_required(data, "name", path), f"{path}.name")
    arguments = data.get("arguments", "{}")
    if isinstance(arguments, dict):
        arguments = json.dumps(arguments, sort_keys=True, separators=(",", ":"),
                               ensure_ascii=False)
    arguments = string(arguments, f"{path}.arguments")
    try:
        return m.ToolCallPart(name, arguments, call_id)
    except MessageError as exc:
        raise InvalidHistory(str(exc), path=path) from exc


def migrate_v1(items: list[Any], path: str = "messages") -> tuple[m.Message, ...]:
    """Convert the ``messages`` array of a version-1 document to version-2 messages."""
    result: list[m.Message] = []
    pending: list[m.RequestPart] = []
    tool_names: dict[str, str] = {}

    def flush() -> None:
        if pending:
            result.append(m.RequestMessage(tuple(pending)))
            pending.clear()

    for index, item in enumerate(items):
        here = f"{path}[{index}]"
        data = obj(item, here)
        role = _required(data, "role", here)
        if not isinstance(role, str) or role not in _ALLOWED:
            raise InvalidHistory(f"unknown v1 role {role!r}", path=f"{here}.role")
        _check_keys(data, role, here)
        try:
            if role == "assistant":
                flush()
                parts: list[m.ResponsePart] = []
                content = data.get("content")
                if content is not None and string(content, f"{here}.content"):
                    parts.append(m.TextPart(content))
                calls = data.get("tool_calls")
                if calls is None:
                    calls = []
                if not isinstance(calls, list):
                    raise InvalidHistory("expected an array", path=f"{here}.tool_calls")
                for call_index, call in enumerate(calls):
                    part = _call(call, f"{here}.tool_calls[{call_index}]")
                    tool_names[part.tool_call_id] = part.tool_name
                    parts.append(part)
                result.append(m.ResponseMessage(tuple(parts)))
            elif role == "tool":
                call_id = string(_required(data, "tool_call_id", here), f"{here}.tool_call_id")
                if "name" in data:
                    name = string(data["name"], f"{here}.name")
                elif call_id in tool_names:
                    name = tool_names[call_id]
                else:
                    raise InvalidHistory(
                        "tool message without 'name' and without a matching earlier call",
                        path=f"{here}.name",
                    )
                pending.append(m.ToolReturnPart(name, call_id, data.get("content")))
            else:
                content = string(_required(data, "content", here), f"{here}.content")
                if role == "system":
                    pending.append(m.SystemPromptPart(content))
                else:
                    pending.append(m.UserPromptPart(content))
        except MessageError as exc:
            raise InvalidHistory(str(exc), path=here) from exc
    flush()
    return tuple(result)
