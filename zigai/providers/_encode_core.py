"""The encoder core the native adapters share: one history walk, one settings table, one
function-tool renderer; each route supplies only its tables and quirks.

Job
    * :func:`walk` visits a request's history in order.  Request parts reach the route's
      :class:`RequestSink` in four neutral shapes — a system prompt, a user prompt, plain user
      text (a retry without a call, a speech transcript, a tool-availability note) and a tool
      result (return, retry or capability load, with its error flag) — and the parts of each
      answer reach a fresh :class:`ResponseSink` as text, thinking, tool calls and native tool
      calls.  Instructions are skipped (they travel in ``ModelRequest.instructions``), native
      tool returns travel with their calls, and anything a route cannot carry raises the
      route's named encode error.
    * :func:`turns` builds the role-merged turns of the routes that take them (Anthropic
      Messages, Gemini contents) from the route's per-message renderers.
    * :func:`copy_settings` copies the set :class:`~zigai.settings.ModelSettings` fields to
      wire keys from a ``(wire key, field)`` table, stop sequences as a list.
    * :func:`function_tools` renders function tool definitions through a route's
      :class:`ToolShape` (key names, schema wrapping, optional strict flag, outer wrapper).
    * :func:`user_items` renders a user prompt's content items from a route's table keyed by
      content kind.
    * Helpers every route needs: :func:`result_text`, :func:`data_url`, :func:`media_url`,
      :func:`tagged`, :func:`item_text`, :func:`call_arguments`, :func:`is_own`.

Invariants: the walk preserves part order exactly, so each route's bytes on the wire are what
its own walk produced before; nothing here knows a wire format beyond the tables it is given.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from zigai import json as zjson
from zigai.errors import JsonError
from zigai.messages import RequestMessage, ResponseMessage
from zigai.messages.json_value import thaw_json
from zigai.providers._native import availability_text, capability_result
from zigai.settings import ModelSettings

__all__ = [
    "RequestSink", "ResponseSink", "ToolShape", "availability_sentences", "call_arguments",
    "copy_settings", "data_url", "turns",
    "function_tools", "is_own", "item_text", "media_url", "result_text", "tagged",
    "user_items", "walk",
]


class RequestSink(Protocol):
    """Where one route puts the request parts of a history."""

    def system(self, text: str) -> None: ...

    def user(self, part: Any) -> None:
        """A :class:`~zigai.messages.UserPromptPart`."""

    def user_text(self, text: str) -> None: ...

    def tool_result(self, call_id: str, content: Any, *, error: bool, retry: bool) -> None: ...


class ResponseSink(Protocol):
    """Where one route puts the parts of one answer; :meth:`end` closes the answer."""

    def text(self, text: str) -> None: ...

    def thinking(self, part: Any) -> None: ...

    def tool_call(self, part: Any) -> None:
        """A :class:`~zigai.messages.ToolCallPart` or ``CapabilityLoadCallPart``."""

    def native_call(self, part: Any) -> None: ...

    def end(self) -> None: ...


def _request_part(part: Any, sink: RequestSink, label: str, error: type[Exception]) -> None:
    kind = part.part_kind
    if kind == "system-prompt":
        sink.system(part.content)
    elif kind == "user-prompt":
        sink.user(part)
    elif kind == "tool-return":
        sink.tool_result(part.tool_call_id, part.content,
                         error=part.outcome.value != "success", retry=False)
    elif kind == "retry-prompt":
        if part.tool_call_id is None:
            sink.user_text(part.content)
        else:
            sink.tool_result(part.tool_call_id, part.content, error=True, retry=True)
    elif kind == "capability-load-return":
        content, ok = capability_result(part)
        sink.tool_result(part.tool_call_id, content, error=not ok, retry=False)
    elif kind == "speech-prompt":
        if part.transcript is None:
            raise error(f"{label} does not accept audio input")
        sink.user_text(part.transcript)
    elif kind == "tool-availability":
        sink.user_text(availability_text(part))
    elif kind != "instruction":  # pragma: no cover - the request part union is closed
        raise error(f"a {type(part).__name__} cannot be sent to {label}")


def _response_part(part: Any, sink: ResponseSink, label: str, error: type[Exception]) -> None:
    kind = part.part_kind
    if kind == "text":
        if part.content:
            sink.text(part.content)
    elif kind == "thinking":
        sink.thinking(part)
    elif kind in ("tool-call", "capability-load-call"):
        sink.tool_call(part)
    elif kind == "native-tool-call":
        sink.native_call(part)
    elif kind == "native-tool-return":
        return  # it travels with its call part, on the routes that replay either
    elif kind == "speech":
        if part.transcript is None:
            raise error("assistant audio without a transcript cannot be replayed")
        sink.text(part.transcript)
    else:
        raise error(f"a {kind} part cannot be replayed to {label}")


def walk(messages: Iterable[Any], requests: RequestSink, answer: Callable[[], ResponseSink], *,
         label: str, error: type[Exception]) -> None:
    """Visit ``messages`` in order (see the module doc); ``answer()`` makes one sink per
    answer; ``label`` names the route in ``error`` messages."""
    for message in messages:
        if isinstance(message, RequestMessage):
            for part in message.parts:
                _request_part(part, requests, label, error)
        elif isinstance(message, ResponseMessage):
            sink = answer()
            for answer_part in message.parts:
                _response_part(answer_part, sink, label, error)
            sink.end()
        else:
            raise error(f"unknown message {type(message).__name__}")


def turns(messages: Iterable[Any], request: Callable[[Any, str], list[dict[str, Any]]],
          response: Callable[[Any, str], list[dict[str, Any]]], *, roles: tuple[str, str],
          key: str) -> tuple[list[str], list[dict[str, Any]]]:
    """``(system texts, turns)`` for the routes that take role-merged turns (Anthropic
    Messages, Gemini contents): ``request`` / ``response`` render one message's blocks from
    its path (``messages[i]``), adjacent turns of one role merge, empty turns vanish."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        path = f"messages[{index}]"
        if isinstance(message, RequestMessage):
            system.extend(p.content for p in message.parts if p.part_kind == "system-prompt")
            role, blocks = roles[0], request(message, path)
        else:
            role, blocks = roles[1], response(message, path)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1][key].extend(blocks)
        else:
            out.append({"role": role, key: blocks})
    return system, out


def availability_sentences(part: Any) -> str:
    """A tool availability change as sentences (``Tools now available: a, b.``)."""
    notes = []
    if part.added:
        notes.append("Tools now available: " + ", ".join(part.added) + ".")
    if part.removed:
        notes.append("Tools no longer available: " + ", ".join(part.removed) + ".")
    return " ".join(notes)


def copy_settings(target: dict[str, Any], settings: ModelSettings,
                  table: Sequence[tuple[str, str]], *, stop_key: str | None = None) -> None:
    """Copy each set ``settings`` field of ``(wire key, field)`` into ``target``; stop
    sequences go under ``stop_key`` as a list."""
    for key, name in table:
        value = getattr(settings, name)
        if value is not None:
            target[key] = value
    if stop_key is not None and settings.stop_sequences:
        target[stop_key] = list(settings.stop_sequences)


@dataclass(frozen=True, slots=True)
class ToolShape:
    """How one route renders a function tool: the key names, whether the schema is wrapped
    (``{"json": schema}``) and thawed, whether ``strict`` is sent, and an outer wrapper."""

    schema_key: str
    schema_wrapper: str | None = None
    strict: bool = False
    wrap: Callable[[dict[str, Any]], dict[str, Any]] | None = None


def function_tools(tools: Iterable[Any], shape: ToolShape) -> list[dict[str, Any]]:
    """Each :class:`~zigai.model.ToolDefinition` of ``tools`` in the route's shape."""
    rendered = []
    for tool in tools:
        spec: dict[str, Any] = {"name": tool.name}
        if tool.description:
            spec["description"] = tool.description
        if shape.schema_wrapper is None:
            spec[shape.schema_key] = dict(tool.parameters_json_schema)
        else:
            spec[shape.schema_key] = {shape.schema_wrapper: thaw_json(tool.parameters_json_schema)}
        if shape.strict and tool.strict is not None:
            spec["strict"] = tool.strict
        rendered.append(spec if shape.wrap is None else shape.wrap(spec))
    return rendered


def user_items(part: Any, table: Mapping[str, Callable[[Any], dict[str, Any] | None]], *,
               label: str, error: type[Exception]) -> str | list[dict[str, Any]]:
    """A user prompt's content: its text when it is a string, else each content item rendered
    by the route's table entry for its kind (an entry returning None drops the item, a kind
    with no entry raises ``error``)."""
    if isinstance(part.content, str):
        return part.content
    items: list[dict[str, Any]] = []
    for item in part.content:
        render = table.get(item.kind)
        if render is None:
            raise error(f"{label} does not accept {item.kind} input")
        rendered = render(item)
        if rendered is not None:
            items.append(rendered)
    return items


def item_text(item: Any) -> str:
    """The text of a text item, or a tagged item as ``<tag>text</tag>``."""
    return item.text if item.kind == "text" else tagged(item)


def media_url(item: Any, error: type[Exception], refusal: str) -> str:
    """Inline media as a ``data:`` URL, URL media as its URL; anything else raises
    ``error(refusal)``."""
    source = item.source
    if source.kind == "bytes":
        return data_url(source)
    if source.kind == "url":
        return str(source.url)
    raise error(refusal)


def result_text(content: Any) -> str:
    """Tool-result content as text: a string as is, anything else as compact JSON."""
    return content if isinstance(content, str) else zjson.dumps(thaw_json(content))


def data_url(source: Any) -> str:
    """A ``data:`` URL for a :class:`~zigai.messages.BytesSource`."""
    return f"data:{source.media_type};base64,{base64.b64encode(source.data).decode('ascii')}"


def tagged(item: Any) -> str:
    """A :class:`~zigai.messages.TaggedText` as ``<tag>text</tag>``."""
    return f"<{item.tag}>{item.text}</{item.tag}>"


def call_arguments(part: Any, error: type[Exception], what: str) -> Any:
    """A tool call's arguments as a JSON value (a capability load names its capability);
    ``what`` prefixes the error raised for arguments that are not JSON."""
    if part.part_kind == "capability-load-call":
        return {"capability_id": part.capability_id}
    try:
        return zjson.parse(part.args or "{}", zjson.defaults.tool_payload)
    except JsonError as exc:
        raise error(f"{what} arguments are not JSON ({exc})") from None


def is_own(part: Any, provider_name: str) -> bool:
    """Whether ``part`` carries provider details of ``provider_name``."""
    provider = getattr(part, "provider", None)
    return provider is not None and provider.provider_name == provider_name
