"""What durable steps store: model responses and tool outputs as versioned JSON text.

Step outputs are plain strings so the engine's own serializer never sees zigai objects and a
recorded run stays readable across zigai versions: a model response is one-message zigai
history (``zigai.history``, version 2); a tool output is ``{"v": 1, "content": <JSON>,
"follow_ups": <history JSON or null>}``.  Decoding is bounded by the history JSON profile.
"""

from __future__ import annotations

from typing import Any

from zigai import history
from zigai import json as zjson
from zigai.durable.errors import DurableSetupError
from zigai.messages import RequestMessage, ResponseMessage
from zigai.tool import ToolOutput

__all__ = ["encode_response", "decode_response", "encode_tool_output", "decode_tool_output"]

_TOOL_OUTPUT_VERSION = 1


def encode_response(response: ResponseMessage) -> str:
    return history.stringify([response])


def decode_response(text: str) -> ResponseMessage:
    with history.parse(text) as owned:
        messages = owned.messages
    if len(messages) != 1 or not isinstance(messages[0], ResponseMessage):
        raise DurableSetupError("a recorded model step must hold exactly one response message")
    return messages[0]


def encode_tool_output(output: ToolOutput) -> str:
    follow_ups = history.stringify(output.follow_up_messages) if output.follow_up_messages else None
    return zjson.dumps({"v": _TOOL_OUTPUT_VERSION, "content": output.content, "follow_ups": follow_ups})


def decode_tool_output(text: str) -> ToolOutput:
    value: Any = zjson.parse(text, zjson.defaults.history)
    if not isinstance(value, dict) or value.get("v") != _TOOL_OUTPUT_VERSION:
        raise DurableSetupError("a recorded tool step has an unknown format")
    follow_ups: tuple[RequestMessage, ...] = ()
    if value.get("follow_ups") is not None:
        with history.parse(value["follow_ups"]) as owned:
            follow_ups = tuple(m for m in owned.messages if isinstance(m, RequestMessage))
    return ToolOutput(value.get("content"), follow_ups)
