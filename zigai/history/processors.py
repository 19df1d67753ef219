"""History processors: transform the provider-facing *view* of a conversation.

A processor is any ``Callable[[tuple[Message, ...]], Sequence[Message]]``.  The
agent builds a view (a tuple) of the canonical history before each request and
runs agent, capability and run processors over it left to right
(:func:`apply_processors`).  Messages are immutable and processors return new
tuples, so the canonical history is never truncated or mutated.

Built-ins (each a factory returning a processor):

* :func:`trim_old_messages` keeps at most the last ``keep_last`` messages; it
  never starts the view with a response and never keeps a tool return (or
  tool-bound retry) whose call was trimmed away.
* :func:`compact_adjacent_text` merges adjacent plain text parts (response
  ``TextPart``s without ids/provider data; request string ``UserPromptPart``s).
* :func:`summarize_prefix` replaces the older prefix with one request holding an
  application-written summary.
* :func:`remove_orphaned_tool_traffic` drops tool calls without returns, returns
  without calls, and calls whose arguments are not a valid JSON object; messages
  left empty are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeAlias

from zigai.history.errors import InvalidHistoryProcessor
from zigai.messages import (
    CapabilityLoadCallPart,
    CapabilityLoadReturnPart,
    InvalidMessagePart,
    Message,
    NativeToolCallPart,
    NativeToolReturnPart,
    RequestMessage,
    RequestPart,
    ResponseMessage,
    ResponsePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    ToolSearchCallPart,
    ToolSearchReturnPart,
    UserPromptPart,
)

__all__ = [
    "InvalidHistoryProcessor",
    "Processor",
    "apply_processors",
    "compact_adjacent_text",
    "remove_orphaned_tool_traffic",
    "summarize_prefix",
    "trim_old_messages",
]

Processor: TypeAlias = Callable[[tuple[Message, ...]], Sequence[Message]]


def _check_keep_last(keep_last: object) -> int:
    if type(keep_last) is not int or keep_last < 1:
        raise InvalidHistoryProcessor(f"keep_last must be an int >= 1, got {keep_last!r}")
    return keep_last


def apply_processors(
    view: Sequence[Message], processors: Iterable[Processor]
) -> tuple[Message, ...]:
    """Run ``processors`` left to right over ``view`` and return the final view as a tuple."""
    current = _as_view(view, "the input view")
    for index, processor in enumerate(processors):
        current = _as_view(processor(current), f"processor #{index} ({processor!r})")
    return current


def _as_view(messages: object, origin: str) -> tuple[Message, ...]:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise InvalidHistoryProcessor(f"{origin} must be a sequence of messages")
    result = tuple(messages)
    for position, message in enumerate(result):
        if not isinstance(message, (RequestMessage, ResponseMessage)):
            raise InvalidHistoryProcessor(
                f"{origin} returned a {type(message).__name__} at position {position}"
            )
    return result


# -- tool pairing -------------------------------------------------------------------------

def _call_id(part: object) -> tuple[str, str] | None:
    """(family, id) of a call that expects a matching return."""
    if isinstance(part, (ToolCallPart, CapabilityLoadCallPart)):
        return ("function", part.tool_call_id)
    if isinstance(part, NativeToolCallPart):
        return ("native", part.tool_call_id)
    if isinstance(part, ToolSearchCallPart):
        return ("search", part.tool_call_id)
    return None


def _return_id(part: object) -> tuple[str, str] | None:
    if isinstance(part, (ToolReturnPart, CapabilityLoadReturnPart)):
        return ("function", part.tool_call_id)
    if isinstance(part, RetryPromptPart) and part.tool_call_id is not None:
        return ("function", part.tool_call_id)
    if isinstance(part, NativeToolReturnPart):
        return ("native", part.tool_call_id)
    if isinstance(part, ToolSearchReturnPart):
        return ("search", part.tool_call_id)
    return None


def _malformed(part: object) -> bool:
    if isinstance(part, (ToolCallPart, NativeToolCallPart)):
        try:
            part.args_as_dict()
        except InvalidMessagePart:
            return True
    return False


def _rebuild(message: Message, parts: list[RequestPart] | list[ResponsePart]) -> Message | None:
    if len(parts) == len(message.parts):
        return message
    if not parts:
        return None
    if isinstance(message, RequestMessage):
        return RequestMessage(
            tuple(parts),  # type: ignore[arg-type]
            instructions=message.instructions,
            timestamp=message.timestamp,
            metadata=message.metadata,
        )
    return ResponseMessage(
        tuple(parts),  # type: ignore[arg-type]
        usage=message.usage,
        model_name=message.model_name,
        provider_name=message.provider_name,
        provider_response_id=message.provider_response_id,
        finish_reason=message.finish_reason,
        raw_finish_reason=message.raw_finish_reason,
        timestamp=message.timestamp,
        provider_details=message.provider_details,
        metadata=message.metadata,
    )


def _remove_orphans(view: tuple[Message, ...]) -> tuple[Message, ...]:
    first_call: dict[tuple[str, str], int] = {}
    last_return: dict[tuple[str, str], int] = {}
    malformed: set[tuple[str, str]] = set()
    for index, message in enumerate(view):
        for part in message.parts:
            call = _call_id(part)
            if call is not None:
                first_call.setdefault(call, index)
                if _malformed(part):
                    malformed.add(call)
            ret = _return_id(part)
            if ret is not None:
                last_return[ret] = index

    def keep(part: object, index: int) -> bool:
        call = _call_id(part)
        if call is not None:
            if call in malformed:
                return False
            # native and search returns sit in the same response as their call
            return call in last_return and last_return[call] >= index
        ret = _return_id(part)
        if ret is not None:
            return ret not in malformed and ret in first_call and first_call[ret] <= index
        return True

    result: list[Message] = []
    for index, message in enumerate(view):
        parts = [part for part in message.parts if keep(part, index)]
        rebuilt = _rebuild(message, parts)  # type: ignore[arg-type]
        if rebuilt is not None:
            result.append(rebuilt)
    return tuple(result)


def remove_orphaned_tool_traffic() -> Processor:
    """Drop calls without returns, returns without calls, and malformed calls (and their returns)."""

    def process(view: tuple[Message, ...]) -> Sequence[Message]:
        return _remove_orphans(tuple(view))

    return process


# -- trimming and summarizing -----------------------------------------------------------

def _clean_start(view: tuple[Message, ...]) -> tuple[Message, ...]:
    """Drop leading responses and returns whose call was cut off, until stable."""
    while True:
        while view and isinstance(view[0], ResponseMessage):
            view = view[1:]
        calls = {
            call for message in view for part in message.parts
            if (call := _call_id(part)) is not None
        }
        result: list[Message] = []
        for message in view:
            parts = [p for p in message.parts if (r := _return_id(p)) is None or r in calls]
            rebuilt = _rebuild(message, parts)  # type: ignore[arg-type]
            if rebuilt is not None:
                result.append(rebuilt)
        cleaned = tuple(result)
        if cleaned == view:
            return view
        view = cleaned


def trim_old_messages(keep_last: int) -> Processor:
    """Keep at most the last ``keep_last`` messages (fewer when a clean start needs it)."""
    limit = _check_keep_last(keep_last)

    def process(view: tuple[Message, ...]) -> Sequence[Message]:
        if len(view) <= limit:
            return view
        return _clean_start(tuple(view[len(view) - limit:]))

    return process


def summarize_prefix(
    keep_last: int,
    summarize: Callable[[tuple[Message, ...]], str],
    *,
    as_system_prompt: bool = False,
) -> Processor:
    """Replace everything before the last ``keep_last`` messages with one summary request.

    ``summarize`` receives the older prefix and returns the summary text; it becomes
    a :class:`UserPromptPart` (or a :class:`SystemPromptPart` when
    ``as_system_prompt``).  Messages that cannot start a clean suffix (leading
    responses, returns whose calls are in the prefix) move into the prefix.
    Exceptions from ``summarize`` propagate unchanged.
    """
    limit = _check_keep_last(keep_last)

    def process(view: tuple[Message, ...]) -> Sequence[Message]:
        view = tuple(view)
        if len(view) <= limit:
            return view
        cut = len(view) - limit
        while cut < len(view) and not _clean_cut(view, cut):
            cut += 1
        prefix, suffix = view[:cut], view[cut:]
        summary = summarize(prefix)
        if not isinstance(summary, str):
            raise InvalidHistoryProcessor(
                f"the summarize callback must return str, got {type(summary).__name__}"
            )
        part = SystemPromptPart(summary) if as_system_prompt else UserPromptPart(summary)
        return (RequestMessage((part,)), *suffix)

    return process


def _clean_cut(view: tuple[Message, ...], cut: int) -> bool:
    """True when ``view[cut:]`` starts with a request and holds no return of a prefix call."""
    if not isinstance(view[cut], RequestMessage):
        return False
    prefix_calls = {
        call for message in view[:cut] for part in message.parts
        if (call := _call_id(part)) is not None
    }
    return not any(
        _return_id(part) in prefix_calls for message in view[cut:] for part in message.parts
    )


# -- text compaction ----------------------------------------------------------------------

def compact_adjacent_text(separator: str = "\n\n") -> Processor:
    """Merge adjacent plain text parts inside each message, joined by ``separator``.

    Response ``TextPart``s merge only when neither carries an ``id`` or provider
    data (those must be replayed unchanged); request ``UserPromptPart``s merge
    only when both hold plain strings and no timestamp.
    """
    if not isinstance(separator, str):
        raise InvalidHistoryProcessor("separator must be a str")

    def mergeable(part: object) -> bool:
        if isinstance(part, TextPart):
            return part.id is None and part.provider is None
        if isinstance(part, UserPromptPart):
            return isinstance(part.content, str) and part.timestamp is None
        return False

    def process(view: tuple[Message, ...]) -> Sequence[Message]:
        result: list[Message] = []
        for message in view:
            parts: list[RequestPart | ResponsePart] = []
            for part in message.parts:
                previous = parts[-1] if parts else None
                if (previous is not None and type(previous) is type(part)
                        and mergeable(previous) and mergeable(part)):
                    joined = f"{previous.content}{separator}{part.content}"  # type: ignore[union-attr]
                    parts[-1] = type(part)(joined)  # type: ignore[call-arg,arg-type]
                else:
                    parts.append(part)
            if len(parts) == len(message.parts):
                result.append(message)
            else:
                result.append(_rebuild(message, parts) or message)  # type: ignore[arg-type]
        return tuple(result)

    return process
