"""Shared helpers for the agent-loop tests: scripted FunctionModel responses."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from zigai.messages import FinishReason, Message, ResponseMessage, TextPart, ToolCallPart
from zigai.model import ModelProfile
from zigai.testing import FunctionModel
from zigai.usage import RequestUsage


def call(name: str, args: Any = None, call_id: str | None = None) -> ToolCallPart:
    text = args if isinstance(args, str) else json.dumps(args if args is not None else {})
    return ToolCallPart(name, text, call_id or f"call-{name}")


def reply(*parts: Any, finish: FinishReason | None = None, usage: RequestUsage | None = None) -> ResponseMessage:
    built = tuple(TextPart(p) if isinstance(p, str) else p for p in parts)
    fields: dict[str, Any] = {}
    if finish is not None:
        fields["finish_reason"] = finish
        fields["raw_finish_reason"] = finish.value
    if usage is not None:
        fields["usage"] = usage
    return ResponseMessage(built, **fields)


class Script:
    """A FunctionModel that answers from a fixed list and records every request."""

    def __init__(self, responses: Sequence[ResponseMessage | Callable[[tuple[Message, ...]], ResponseMessage]],
                 profile: ModelProfile | None = None) -> None:
        self.responses = list(responses)
        self.requests: list[Any] = []
        self.model = FunctionModel(self._answer, profile=profile)

    def _answer(self, messages: tuple[Message, ...], info: Any) -> ResponseMessage:
        self.requests.append(info.request)
        if not self.responses:
            raise AssertionError("the script ran out of responses")
        nxt = self.responses.pop(0)
        return nxt(messages) if callable(nxt) else nxt
