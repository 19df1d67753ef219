"""The Responses API stream as a state machine: SSE events in, model stream events out.

:class:`StreamDecoder` is fed one :class:`~zigai.providers.sse.SseEvent` at a time and
returns the ``part_start`` / ``part_delta`` / ``part_end`` events it completes; it never
does I/O, so tests can split a recording at every byte boundary.  Part indexes are
assigned in the order parts first appear and never change.

Event handling (``type`` of each JSON ``data``):

* ``response.output_item.added`` starts reasoning and function-call parts (text parts start
  with their first ``content_part.added`` or text delta);
* ``response.output_text.delta`` / ``response.refusal.delta`` / reasoning summary and
  reasoning text deltas / ``response.function_call_arguments.delta`` produce deltas; a
  reasoning ``.done`` event adds its text only when no delta streamed it, and a reasoning
  item that never finishes still keeps its streamed texts by field (summary / content) in
  its provider details, so replay sends them back in the fields they came in;
* ``response.output_item.done`` ends the item's parts with exactly what
  :mod:`.decode` builds from the finished item, so the accumulated stream equals the
  buffered decode of the same response;
* a function call whose item was never announced (arguments arrive keyed only by
  ``item_id``) is started from ``function_call_arguments.done`` (which names the tool) with
  the item id standing in for the call id;
* ``response.completed`` / ``response.incomplete`` / ``response.failed`` carry the response
  id, model, usage and finish status; ``error`` events raise :class:`ProviderServerError`;
  ``[DONE]`` and unknown event types are ignored.

:meth:`StreamDecoder.finish` ends every part still open; a stream that ends before a
terminal ``response.*`` event raises :class:`OpenAIDecodeError`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from zigai.messages import (
    FinishReason,
    ProviderDetails,
    ProviderPart,
    ResponsePart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from zigai.model import (
    ModelStreamEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
)
from zigai.model.stream import GrowingParts
from zigai.provider import ProviderServerError, parse_provider_json
from zigai.providers._wire import details_or_none
from zigai.providers.openai.decode import (
    decode_output_item,
    decode_usage,
    finish_reason,
    obj,
    reasoning_details,
    string,
)
from zigai.providers.openai.errors import OpenAIDecodeError
from zigai.providers.sse import SseEvent
from zigai.usage import RequestUsage

__all__ = ["StreamDecoder"]

_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})


class StreamDecoder:
    """Incremental decoder of one streamed Responses API answer."""

    def __init__(self, provider_name: str = "openai") -> None:
        self.provider_name = provider_name
        self.usage = RequestUsage()
        self.finish_reason: FinishReason | None = None
        self.raw_finish_reason: str | None = None
        self.response_id: str | None = None
        self.model_name: str | None = None
        self.completed = False
        self._next = 0
        self._parts = GrowingParts()
        self._open: set[int] = set()
        self._text: dict[tuple[str | None, int], int] = {}  # (item id, content index) -> index
        self._items: dict[str, int] = {}  # reasoning / function-call item id -> index
        self._pending_args: dict[str, str] = {}  # args of calls whose item was not announced
        # reasoning item id -> streamed texts by (field, index), field "summary" or "content"
        self._reasoning: dict[str, dict[tuple[str, int], str]] = {}
        self._refused = False
        self._incomplete_call = False
        self._events = 0
        self._status: str | None = None
        self._incomplete_details: Any = None
        self._unknown_items: list[dict[str, Any]] = []  # output items with no neutral form
        self._response_error: Any = None

    @property
    def provider_details(self) -> ProviderDetails | None:
        """Unknown output items and the response's ``error``, as the buffered decode keeps them."""
        details: dict[str, Any] = {}
        if self._unknown_items:
            details["output"] = self._unknown_items
        if self._response_error is not None:
            details["error"] = self._response_error
        return details_or_none(details)

    # -- helpers --------------------------------------------------------------------------

    def _start(self, part: ResponsePart, out: list[ModelStreamEvent]) -> int:
        index = self._next
        self._next += 1
        self._parts[index] = part
        self._open.add(index)
        out.append(PartStartEvent(index, part))
        return index

    def _end(self, index: int, part: ResponsePart, out: list[ModelStreamEvent]) -> None:
        if index not in self._open:
            return
        self._open.discard(index)
        self._parts[index] = part
        out.append(PartEndEvent(index, part))

    def _with_streamed_details(self, part: ThinkingPart, item_id: str) -> ThinkingPart:
        """A reasoning part whose item never finished: keep its texts by field for replay."""
        pieces = sorted(self._reasoning[item_id].items())
        details = reasoning_details([t for (f, _), t in pieces if f == "summary"],
                                    [t for (f, _), t in pieces if f == "content"])
        return replace(part, provider=ProviderPart(self.provider_name, id=item_id,
                                                   details=details))

    def _provider(self, item_id: str | None) -> ProviderPart:
        return ProviderPart(self.provider_name, id=item_id)

    def _text_index(self, item_id: str | None, content_index: int,
                    out: list[ModelStreamEvent]) -> int:
        key = (item_id, content_index)
        if key not in self._text:
            part = TextPart("", id=item_id, provider=self._provider(item_id))
            self._text[key] = self._start(part, out)
        return self._text[key]

    def _delta_text(self, index: int, text: str) -> None:
        if isinstance(self._parts.base(index), (TextPart, ThinkingPart, ToolCallPart)):
            self._parts.grow(index, text)

    # -- feeding --------------------------------------------------------------------------

    def feed(self, event: SseEvent) -> list[ModelStreamEvent]:
        """Decode one SSE event; returns the model stream events it completed."""
        data = event.data.strip()
        if not data or data == "[DONE]":
            return []
        self._events += 1
        path = f"$event[{self._events}]"
        payload = dict(obj(parse_provider_json(data), path))
        kind = string(payload, "type", path)
        out: list[ModelStreamEvent] = []
        handler = _HANDLERS.get(kind or "")
        if handler is not None:
            handler(self, payload, path, out)
        elif kind in _TERMINAL:
            self._terminal(kind, payload, path)
        return out

    def finish(self) -> list[ModelStreamEvent]:
        """End of stream: close open parts in index order; require a terminal event."""
        if not self.completed:
            raise OpenAIDecodeError("stream ended before a terminal response event", path="$")
        out: list[ModelStreamEvent] = []
        streamed_reasoning = {index: item_id for item_id, index in self._items.items()
                              if item_id in self._reasoning}
        for index in sorted(self._open):
            part = self._parts[index]
            if isinstance(part, ThinkingPart) and index in streamed_reasoning:
                part = self._with_streamed_details(part, streamed_reasoning[index])
            self._end(index, part, out)
        has_calls = any(isinstance(p, ToolCallPart) for p in self._parts.values())
        self.finish_reason, self.raw_finish_reason = finish_reason(
            self._status, self._incomplete_details, has_tool_calls=has_calls,
            refused=self._refused, incomplete_call=self._incomplete_call, path="$",
        )
        return out

    # -- event handlers -------------------------------------------------------------------

    def _item_added(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        item = obj(payload.get("item"), f"{path}.item")
        kind = string(item, "type", f"{path}.item")
        item_id = string(item, "id", f"{path}.item", optional=True)
        if item_id is None:
            return
        if kind == "reasoning":
            part: ResponsePart = ThinkingPart("", id=item_id, provider=self._provider(item_id))
            self._items[item_id] = self._start(part, out)
        elif kind == "function_call":
            name = string(item, "name", f"{path}.item")
            call_id = string(item, "call_id", f"{path}.item")
            if not name or not call_id:
                raise OpenAIDecodeError("function_call needs a call_id and a name",
                                        path=f"{path}.item")
            part = ToolCallPart(name, "", call_id, id=item_id, provider=self._provider(item_id))
            self._items[item_id] = self._start(part, out)

    def _item_done(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        item = obj(payload.get("item"), f"{path}.item")
        item_id = string(item, "id", f"{path}.item", optional=True)
        kind = string(item, "type", f"{path}.item")
        parts, refused, incomplete, other = decode_output_item(item, f"{path}.item",
                                                               self.provider_name)
        if other is not None:
            self._unknown_items.append(other)
        self._refused = self._refused or refused
        self._incomplete_call = self._incomplete_call or incomplete
        if kind == "message":
            for content_index, part in enumerate(parts):
                index = self._text_index(item_id, content_index, out)
                self._end(index, part, out)
        elif kind in ("reasoning", "function_call") and item_id is not None:
            found = self._items.get(item_id)
            if parts:
                if found is None:
                    found = self._items[item_id] = self._start(parts[0], out)
                self._end(found, parts[0], out)
            elif found is not None and found in self._open:
                # an incomplete call: nothing usable to end with; keep what streamed
                self._end(found, self._parts[found], out)
        else:
            for part in parts:
                index = self._start(part, out)
                self._end(index, part, out)

    def _content_added(self, payload: dict[str, Any], path: str,
                       out: list[ModelStreamEvent]) -> None:
        part = payload.get("part")
        if isinstance(part, dict) and part.get("type") in ("output_text", "refusal"):
            self._text_index(string(payload, "item_id", path, optional=True),
                             _content_index(payload, path), out)

    def _text_delta(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        delta = string(payload, "delta", path)
        assert delta is not None
        if payload.get("type") == "response.refusal.delta":
            self._refused = True
        index = self._text_index(string(payload, "item_id", path, optional=True),
                                 _content_index(payload, path), out)
        self._delta_text(index, delta)
        out.append(PartDeltaEvent(index, TextPartDelta(delta)))

    def _reasoning_delta(self, payload: dict[str, Any], path: str,
                         out: list[ModelStreamEvent]) -> None:
        kind = payload.get("type", "")
        done = kind.endswith(".done")
        text = string(payload, "text" if done else "delta", path)
        item_id = string(payload, "item_id", path)
        assert text is not None and item_id is not None
        index = self._items.get(item_id)
        if index is None:
            part = ThinkingPart("", id=item_id, provider=self._provider(item_id))
            index = self._items[item_id] = self._start(part, out)
        field = "summary" if "summary" in kind else "content"
        key = (field, _event_index(payload, f"{field}_index", path))
        pieces = self._reasoning.setdefault(item_id, {})
        if done:
            if key in pieces:  # the deltas already streamed it; the done text is the whole
                pieces[key] = text
                return
        elif key in pieces:
            pieces[key] += text
        if key not in pieces:
            if pieces:
                self._delta_text(index, "\n\n")
                out.append(PartDeltaEvent(index, ThinkingPartDelta("\n\n")))
            pieces[key] = text
        self._delta_text(index, text)
        out.append(PartDeltaEvent(index, ThinkingPartDelta(text)))

    def _args_delta(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        delta = string(payload, "delta", path)
        item_id = string(payload, "item_id", path)
        assert delta is not None and item_id is not None
        index = self._items.get(item_id)
        if index is None:
            self._pending_args[item_id] = self._pending_args.get(item_id, "") + delta
            return
        self._delta_text(index, delta)
        out.append(PartDeltaEvent(index, ToolCallPartDelta(args_delta=delta)))

    def _args_done(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        item_id = string(payload, "item_id", path)
        arguments = string(payload, "arguments", path)
        assert item_id is not None and arguments is not None
        if item_id in self._items:
            return  # the finished item (output_item.done) ends the part
        name = string(payload, "name", path)
        if not name:
            raise OpenAIDecodeError("function call arguments for an unknown item need a name",
                                    path=f"{path}.name")
        self._pending_args.pop(item_id, None)
        part = ToolCallPart(name, "", item_id, provider=self._provider(None))
        index = self._items[item_id] = self._start(part, out)
        out.append(PartDeltaEvent(index, ToolCallPartDelta(args_delta=arguments)))
        self._end(index, replace(part, args=arguments), out)

    def _error(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        code = payload.get("code")
        message = payload.get("message")
        raise ProviderServerError(
            f"{self.provider_name} stream error: {message if isinstance(message, str) else ''}",
            code=code if isinstance(code, str) else None,
            provider_message=message if isinstance(message, str) else None,
            provider_name=self.provider_name,
        )

    def _terminal(self, kind: str | None, payload: dict[str, Any], path: str) -> None:
        response = obj(payload.get("response"), f"{path}.response")
        where = f"{path}.response"
        self.response_id = string(response, "id", where, optional=True) or self.response_id
        self.model_name = string(response, "model", where, optional=True) or self.model_name
        if response.get("usage") is not None:
            self.usage = decode_usage(response["usage"], f"{where}.usage")
        status = string(response, "status", where, optional=True)
        if status is None and kind != "response.completed":
            status = (kind or "").removeprefix("response.")
        if response.get("error") is not None:
            self._response_error = response["error"]
        details = response.get("incomplete_details")
        if details is not None:
            obj(details, f"{where}.incomplete_details")
        self._status = status
        self._incomplete_details = details
        self.completed = True

    def _created(self, payload: dict[str, Any], path: str, out: list[ModelStreamEvent]) -> None:
        response = payload.get("response")
        if isinstance(response, dict):
            self.response_id = string(response, "id", f"{path}.response", optional=True)
            self.model_name = string(response, "model", f"{path}.response", optional=True)


def _content_index(payload: dict[str, Any], path: str) -> int:
    return _event_index(payload, "content_index", path)


def _event_index(payload: dict[str, Any], field: str, path: str) -> int:
    value = payload.get(field, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise OpenAIDecodeError("expected a non-negative integer", path=f"{path}.{field}")
    return value


_HANDLERS = {
    "response.created": StreamDecoder._created,
    "response.output_item.added": StreamDecoder._item_added,
    "response.output_item.done": StreamDecoder._item_done,
    "response.content_part.added": StreamDecoder._content_added,
    "response.output_text.delta": StreamDecoder._text_delta,
    "response.refusal.delta": StreamDecoder._text_delta,
    "response.reasoning_summary_text.delta": StreamDecoder._reasoning_delta,
    "response.reasoning_text.delta": StreamDecoder._reasoning_delta,
    "response.reasoning_summary_text.done": StreamDecoder._reasoning_delta,
    "response.reasoning_text.done": StreamDecoder._reasoning_delta,
    "response.function_call_arguments.delta": StreamDecoder._args_delta,
    "response.function_call_arguments.done": StreamDecoder._args_done,
    "error": StreamDecoder._error,
}
