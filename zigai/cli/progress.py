"""Live output of a CLI run: text as it arrives on stdout, one-line progress events on stderr.

:class:`Progress` consumes the agent's own stream events (``Agent.run_stream``,
``run_until_pause_stream``, ``resume_run_stream``; see :mod:`zigai.agent.events`), so the
agent loop, history and output are exactly those of a buffered run:

* text part starts and text deltas go to stdout the moment they are decoded;
* ``function_tool_call`` → ``[tool call] name {args}`` (just before the tool runs);
* ``function_tool_result`` → ``[tool result] name: value`` (or ``[tool retry] name: why``);
* ``deferred_request`` → one ``[approval needed] id name {args}`` (or ``[external result
  needed] …``) line per waiting call, right before the run pauses;
* ``deferred_result`` → ``[approved] name: value``, ``[denied] name: reason`` or
  ``[external result] name: value`` when a resumed decision enters the history.

:attr:`Progress.text_written` says whether the *latest* model response streamed text to
stdout (it is reset by every ``model_response`` event), so the caller knows whether the final
answer is already on screen.

Invariants: progress lines never go to stdout; each line is bounded (``MAX_LINE`` chars);
nothing here retains run data after the run.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from zigai.agent.events import (
    DeferredToolRequestEvent,
    DeferredToolResultEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelResponseEvent,
)
from zigai.messages import RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from zigai.model import PartDeltaEvent, PartStartEvent, TextPartDelta

__all__ = ["MAX_LINE", "Progress"]

MAX_LINE = 200

_DEFERRED_LABELS = {"approve": "approved", "deny": "denied", "result": "external result"}


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 1] + "…"


def _json(value: Any) -> str:
    from zigai.messages.json_value import thaw_json

    if isinstance(value, str):
        return value
    try:
        value = thaw_json(value)
    except Exception:  # not a frozen JSON value: show it as it is
        pass
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return repr(value)


class Progress:
    """Writes streamed text to ``out`` and progress events as single lines to ``err``."""

    def __init__(self, out: TextIO, err: TextIO, *, show_text: bool = True) -> None:
        self.out = out
        self.err = err
        self.show_text = show_text
        self.text_written = False  # text of the latest model response reached stdout
        self._response_text = False  # text of the response being streamed reached stdout

    def event(self, kind: str, detail: str) -> None:
        self.err.write(_short(f"[{kind}] {detail}") + "\n")
        self.err.flush()

    def handle(self, event: Any) -> None:
        """Show one agent stream event (events without a visible effect are ignored)."""
        if isinstance(event, PartDeltaEvent):
            if isinstance(event.delta, TextPartDelta):
                self.text(event.delta.content_delta)
        elif isinstance(event, PartStartEvent):
            if isinstance(event.part, TextPart):
                self.text(event.part.content)
        elif isinstance(event, ModelResponseEvent):
            self.text_written = self._response_text
            self._response_text = False
        elif isinstance(event, FunctionToolCallEvent):
            self.tool_call(event.part)
        elif isinstance(event, FunctionToolResultEvent):
            self.tool_result(event.result)
        elif isinstance(event, DeferredToolRequestEvent):
            for call in event.calls:
                kind = "external result needed" if call.execution == "external" else "approval needed"
                self.event(kind, f"{call.tool_call_id} {call.tool_name} {call.args or '{}'}")
        elif isinstance(event, DeferredToolResultEvent):
            result = event.result
            label = _DEFERRED_LABELS.get(event.action, event.action)
            detail = result.content if isinstance(result, RetryPromptPart) else _json(result.content)
            self.event(label, f"{result.tool_name}: {detail}")

    def tool_call(self, part: ToolCallPart) -> None:
        self.event("tool call", f"{part.tool_name} {_json(part.args) if part.args else '{}'}")

    def tool_result(self, part: ToolReturnPart | RetryPromptPart) -> None:
        if isinstance(part, ToolReturnPart):
            self.event("tool result", f"{part.tool_name}: {_json(part.content)}")
        else:
            self.event("tool retry", f"{part.tool_name}: {part.content}")

    def text(self, delta: str) -> None:
        if self.show_text and delta:
            self.out.write(delta)
            self.out.flush()
            self._response_text = True
