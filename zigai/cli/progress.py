"""Live output of a CLI run: text as it arrives on stdout, one-line progress events on stderr.

:class:`StreamingModel` wraps the configured :class:`~zigai.model.Model` for ``--stream``.
Every request the agent makes goes through the inner model's ``stream()``; text deltas are
written to stdout the moment they are decoded, each finished tool call becomes one
``[tool call] name {args}`` line on stderr, and the tool results the agent sends back in
the next request become ``[tool result] name: value`` lines (the agent runs the tools between
the two requests, so the lines appear in the order things happen).  The accumulated
response the agent receives is exactly what the inner stream decoded — the same message a
buffered request returns — so the agent loop, history and output are unchanged.

Invariants: progress lines never go to stdout; each line is bounded (``MAX_LINE`` chars);
nothing here retains run data after the run.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from zigai.messages import RequestMessage, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from zigai.model import PartDeltaEvent, PartEndEvent, PartStartEvent, TextPartDelta

__all__ = ["MAX_LINE", "Progress", "StreamingModel"]

MAX_LINE = 200


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
    """Writes progress events as single lines to ``err`` and streamed text to ``out``."""

    def __init__(self, out: TextIO, err: TextIO, *, show_text: bool = True) -> None:
        self.out = out
        self.err = err
        self.show_text = show_text
        self.text_written = False  # text of the latest response reached stdout

    def event(self, kind: str, detail: str) -> None:
        self.err.write(_short(f"[{kind}] {detail}") + "\n")
        self.err.flush()

    def tool_call(self, part: ToolCallPart) -> None:
        self.event("tool call", f"{part.tool_name} {part.args or '{}'}")

    def tool_result(self, part: ToolReturnPart | RetryPromptPart) -> None:
        if isinstance(part, ToolReturnPart):
            self.event("tool result", f"{part.tool_name}: {_json(part.content)}")
        else:
            self.event("tool retry", f"{part.tool_name}: {part.content}")

    def text(self, delta: str) -> None:
        if self.show_text and delta:
            self.out.write(delta)
            self.out.flush()
            self.text_written = True


class StreamingModel:
    """A Model view that streams every request of ``inner`` and reports progress."""

    def __init__(self, inner: Any, progress: Progress) -> None:
        self.inner = inner
        self.progress = progress
        self._reported: set[str] = set()

    @property
    def profile(self) -> Any:
        return self.inner.profile

    @property
    def settings(self) -> Any:
        return getattr(self.inner, "settings", None)

    @property
    def model_name(self) -> str:
        return str(getattr(self.inner, "model_name", "model"))

    @property
    def provider_name(self) -> str:
        return str(getattr(self.inner, "provider_name", "provider"))

    def _report_results(self, request: Any) -> None:
        messages = request.messages
        if not messages or not isinstance(messages[-1], RequestMessage):
            return
        for part in messages[-1].parts:
            if isinstance(part, (ToolReturnPart, RetryPromptPart)) and part.tool_call_id:
                if part.tool_call_id not in self._reported:
                    self._reported.add(part.tool_call_id)
                    self.progress.tool_result(part)

    def request(self, request: Any) -> Any:
        self._report_results(request)
        progress = self.progress
        progress.text_written = False
        with self.inner.stream(request) as streamed:
            for event in streamed:
                if isinstance(event, PartStartEvent):
                    if isinstance(event.part, TextPart):
                        progress.text(event.part.content)
                elif isinstance(event, PartDeltaEvent):
                    if isinstance(event.delta, TextPartDelta):
                        progress.text(event.delta.content_delta)
                elif isinstance(event, PartEndEvent) and isinstance(event.part, ToolCallPart):
                    progress.tool_call(event.part)
            return streamed.response()

    def stream(self, request: Any) -> Any:
        return self.inner.stream(request)
