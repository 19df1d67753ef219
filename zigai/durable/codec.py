"""What durable steps store: model responses and tool outputs as versioned JSON text.

Step outputs are plain strings so the engine's own serializer never sees zigai objects and a
recorded run stays readable across zigai versions: a model response is one-message zigai
history (``zigai.history``, version 2); a tool output is ``{"v": 1, "content": <JSON>,
"follow_ups": <history JSON or null>}``; an output function's return is ``{"v": 1, "kind":
"value" | "output" | "retry", "value": <JSON>, "message": <str or null>}`` (``output`` and
``retry`` stand for an ``OutputResult``).  Decoding is bounded by the history JSON profile.
"""

from __future__ import annotations

from typing import Any

from zigai import history
from zigai import json as zjson
from zigai.durable.errors import DurableSetupError
from zigai.messages import RequestMessage, ResponseMessage
from zigai.output import OutputResult
from zigai.tool import ToolOutput

__all__ = [
    "encode_response", "decode_response", "encode_tool_output", "decode_tool_output",
    "encode_output_return", "decode_output_return",
]

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


def encode_output_return(returned: Any) -> str:
    if isinstance(returned, OutputResult):
        return zjson.dumps({"v": _TOOL_OUTPUT_VERSION, "kind": returned.kind, "value": returned.value,
                            "message": returned.message})
    return zjson.dumps({"v": _TOOL_OUTPUT_VERSION, "kind": "value", "value": returned, "message": None})


def decode_output_return(text: str) -> Any:
    value: Any = zjson.parse(text, zjson.defaults.history)
    if not isinstance(value, dict) or value.get("v") != _TOOL_OUTPUT_VERSION or \
            value.get("kind") not in ("value", "output", "retry"):
        raise DurableSetupError("a recorded output-function step has an unknown format")
    if value["kind"] == "value":
        return value.get("value")
    return OutputResult(value["kind"], value.get("value"), value.get("message"))
