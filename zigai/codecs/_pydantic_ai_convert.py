"""PydanticAI stable-v2 message graphs <-> zigai messages, where the mapping is lossless (private).

Job: :func:`messages_to_zigai` turns a *validated* PydanticAI message graph into zigai
:data:`~zigai.messages.Message` values and :func:`messages_from_zigai` writes zigai messages
as the graph the library itself would dump.  ``zigai.codecs.pydantic_ai`` wraps both with
parsing, validation and the public error.  The mapping of every kind and field is stated in
docs/codecs.md; the rules that shape it:

* a field maps only onto a zigai field of the same meaning; a value with no zigai field is
  either the library's default (dropped, and written back as that default) or carried in
  the reserved ``"pydantic_ai"`` key of the envelope's :class:`~zigai.messages.Metadata`
  (``run_id``, ``conversation_id``, a non-default ``state``, ``provider_url``, usage
  ``cost`` and built-in tool-return timestamps that differ from the response's);
* a provider-run tool search (``builtin-tool-call``/``builtin-tool-return`` with
  ``tool_kind`` ``tool-search``) is zigai's ``ToolSearchCallPart``/``ToolSearchReturnPart``;
  the local ``search_tools`` fallback, whose return sits in the next request, has no form;
* anything else raises :class:`NoForm` with the location and kind, never a silent drop;
* the raw finish reason is ``provider_details["finish_reason"]`` and reasoning tokens are
  ``usage.details["reasoning_tokens"]`` on the PydanticAI side, as the library's own
  adapters store them; ``cache_audio_read_tokens`` is a zigai usage detail;
* tool-call arguments: a JSON object becomes its canonical text and canonical object text
  is written back as an object; ``null`` is empty text and back.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from zigai.codecs._pydantic_ai_media import (
    NoForm,
    binary_from,
    binary_to,
    content_from,
    content_to,
)
from zigai.errors import MessageError
from zigai.messages import (
    AudioContent,
    BytesSource,
    CompactionPart,
    FilePart,
    FinishReason,
    Message,
    Metadata,
    NativeToolCallPart,
    NativeToolReturnPart,
    ProviderDetails,
    ProviderPart,
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    SpeechPart,
    SpeechPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolAvailabilityPart,
    ToolCallPart,
    ToolOutcome,
    ToolReturnPart,
    ToolSearchCallPart,
    ToolSearchReturnPart,
    UserPromptPart,
)
from zigai.messages.json_value import thaw_json
from zigai.usage import RequestUsage, UsageDetails

__all__ = ["EXTRAS_KEY", "NoForm", "messages_from_zigai", "messages_to_zigai"]

EXTRAS_KEY = "pydantic_ai"
"""The reserved zigai metadata key that carries PydanticAI envelope fields zigai has no field for."""

_OUTCOME_TO = {"success": ToolOutcome.success, "failed": ToolOutcome.error,
               "denied": ToolOutcome.denied, "interrupted": ToolOutcome.interrupted}
_OUTCOME_FROM = {value: key for key, value in _OUTCOME_TO.items()}
_REQUEST_EXTRAS = ("run_id", "conversation_id", "state")
_RESPONSE_EXTRAS = (*_REQUEST_EXTRAS, "provider_url", "cost", "native_return_timestamps")
_USAGE_FIELDS = ("input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens",
                 "input_audio_tokens", "output_audio_tokens")
_REASONING = "reasoning_tokens"
_CACHE_AUDIO = "cache_audio_read_tokens"
_RAW_FINISH = "finish_reason"


def _timestamp_to(text: str | None, path: str, kind: str) -> datetime | None:
    if text is None:
        return None
    stamp = datetime.fromisoformat(text)
    if stamp.tzinfo is None:
        raise NoForm(path, kind, f"timestamp {text!r} has no UTC offset; zigai timestamps are aware")
    return stamp


def _timestamp_from(stamp: datetime) -> str:
    return stamp.isoformat().replace("+00:00", "Z")  # zigai keeps UTC; the library writes "Z"


def _none_or_no_form(part: dict[str, Any], path: str, kind: str, *names: str) -> None:
    for name in names:
        if part.get(name) is not None:
            raise NoForm(path, kind, f"{name} {part[name]!r} has no zigai form")


# ---- PydanticAI -> zigai ------------------------------------------------------------------------

def _provider_to(part: dict[str, Any], path: str, kind: str, *, part_id: str | None = None,
                 required: bool = False) -> ProviderPart | None:
    name, details = part.get("provider_name"), part.get("provider_details")
    if name is None:
        if required:
            raise NoForm(path, kind, "provider_name is null; zigai provider-native parts need "
                                     "the provider that produced them")
        if details is not None:
            raise NoForm(path, kind, "provider_details without provider_name has no zigai form")
        return None
    return ProviderPart(name, id=part_id,
                        details=None if details is None else ProviderDetails(details))


def _call_id(part: dict[str, Any], path: str, kind: str) -> str:
    if "tool_call_id" not in part:
        raise NoForm(path, kind, "tool_call_id is absent (the library would invent one)")
    return part["tool_call_id"]


def _untyped_tool(part: dict[str, Any], path: str, kind: str) -> None:
    tool_kind = part.get("tool_kind")
    if tool_kind is not None:
        raise NoForm(path, f"{kind}/{tool_kind}", f"a {kind} part with tool_kind {tool_kind!r} "
                                                  "has no zigai form")


def _args_to(args: Any) -> str | dict[str, Any]:
    return "" if args is None else args


def _audio_to(audio: Any, path: str) -> AudioContent | None:
    if audio is None:
        return None
    return AudioContent(binary_to(audio, path))


def _speech_common(part: dict[str, Any], path: str, speaker: str) -> None:
    if part["speaker"] != speaker:
        raise NoForm(path, "speech", f"a speech part of speaker {part['speaker']!r} has no zigai "
                                     f"form on this side (zigai expects {speaker!r})")
    _none_or_no_form(part, path, "speech", "interrupted_at_ms")


def _request_part_to(part: dict[str, Any], path: str) -> Any:
    kind = part["part_kind"]
    stamp = _timestamp_to(part.get("timestamp"), f"{path}.timestamp", kind)
    if kind == "system-prompt":
        _none_or_no_form(part, path, kind, "dynamic_ref")
        return SystemPromptPart(part["content"], timestamp=stamp)
    if kind == "user-prompt":
        content = part["content"]
        if isinstance(content, str):
            return UserPromptPart(content, timestamp=stamp)
        if not content:
            raise NoForm(path, kind, "an empty content list has no zigai form")
        return UserPromptPart(tuple(content_to(item, f"{path}.content[{index}]")
                                    for index, item in enumerate(content)), timestamp=stamp)
    if kind == "tool-return":
        _untyped_tool(part, path, kind)
        metadata = part.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            raise NoForm(path, kind, "metadata that is not a JSON object has no zigai form")
        return ToolReturnPart(part["tool_name"], _call_id(part, path, kind), content=part["content"],
                              outcome=_OUTCOME_TO[part.get("outcome", "success")], timestamp=stamp,
                              metadata=None if metadata is None else Metadata(metadata))
    if kind == "retry-prompt":
        if not isinstance(part["content"], str):
            raise NoForm(path, kind, "structured validation-error content has no zigai form "
                                     "(zigai retry prompts are text)")
        return RetryPromptPart(part["content"], tool_name=part.get("tool_name"),
                               tool_call_id=part.get("tool_call_id"), timestamp=stamp)
    if kind == "tool-availability-delta":
        return ToolAvailabilityPart(added=tuple(part.get("tools_added", ())),
                                    tool_call_id=part.get("tool_call_id"))
    # speech is the only other request part kind the schema admits
    _speech_common(part, path, "user")
    _none_or_no_form(part, path, kind, "id", "provider_name", "provider_details")
    audio = _audio_to(part.get("audio"), f"{path}.audio")
    if audio is None:
        raise NoForm(path, kind, "user speech without audio has no zigai form")
    return SpeechPromptPart(audio, transcript=part.get("transcript"))


def _response_part_to(part: dict[str, Any], path: str, *, index: int,
                      stamps: dict[str, str], response_stamp: str | None) -> Any:
    kind = part["part_kind"]
    part_id = part.get("id")
    if kind in ("builtin-tool-call", "builtin-tool-return") and part.get("tool_kind") == "tool-search":
        return _native_search_to(part, path, index, stamps, response_stamp)
    if kind in ("builtin-tool-call", "builtin-tool-return"):
        _untyped_tool(part, path, kind)
        provider = _provider_to(part, path, kind, part_id=part_id, required=True)
        assert provider is not None
        if kind == "builtin-tool-call":
            return NativeToolCallPart(part["tool_name"], _call_id(part, path, kind), provider,
                                      args=_args_to(part.get("args")))  # type: ignore[arg-type]
        _none_or_no_form(part, path, kind, "metadata")
        _keep_return_stamp(part, index, stamps, response_stamp)
        return NativeToolReturnPart(part["tool_name"], _call_id(part, path, kind), provider,
                                    content=part["content"],
                                    outcome=_OUTCOME_TO[part.get("outcome", "success")])
    provider = _provider_to(part, path, kind)
    if kind == "text":
        return TextPart(part["content"], id=part_id, provider=provider)
    if kind == "thinking":
        return ThinkingPart(part["content"], id=part_id, signature=part.get("signature"),
                            provider=provider)
    if kind == "compaction":
        return CompactionPart(part.get("content"), id=part_id, provider=provider)
    if kind == "file":
        return FilePart(binary_to(part["content"], f"{path}.content"), id=part_id, provider=provider)
    if kind == "tool-call":
        _untyped_tool(part, path, kind)
        return ToolCallPart(part["tool_name"], _args_to(part.get("args")),  # type: ignore[arg-type]
                            _call_id(part, path, kind), id=part_id, provider=provider)
    _speech_common(part, path, "assistant")  # speech is the only other response part kind
    return SpeechPart(audio=_audio_to(part.get("audio"), f"{path}.audio"),
                      transcript=part.get("transcript"), id=part_id, provider=provider)


def _keep_return_stamp(part: dict[str, Any], index: int, stamps: dict[str, str],
                       response_stamp: str | None) -> None:
    stamp = part.get("timestamp")
    if stamp is not None and stamp != response_stamp:
        stamps[str(index)] = stamp


def _native_search_to(part: dict[str, Any], path: str, index: int, stamps: dict[str, str],
                      response_stamp: str | None) -> Any:
    """A provider-run tool search: zigai keeps both its call and its return in the response."""
    kind = f"{part['part_kind']}/tool-search"
    provider = _provider_to(part, path, kind)
    if part["part_kind"] == "builtin-tool-call":
        args = _args_to(part.get("args"))
        return ToolSearchCallPart(_call_id(part, path, kind), args=args,  # type: ignore[arg-type]
                                  id=part.get("id"), provider=provider)
    _none_or_no_form(part, path, kind, "metadata")
    content = part["content"]
    if set(content) != {"discovered_tools"}:
        raise NoForm(path, kind, "a tool-search result with a message has no zigai form "
                                 "(zigai keeps only the discovered tool names)")
    matches = content["discovered_tools"]
    if any(set(match) != {"name"} for match in matches):
        raise NoForm(path, kind, "tool-search matches with fields besides name have no zigai form")
    _keep_return_stamp(part, index, stamps, response_stamp)
    return ToolSearchReturnPart(_call_id(part, path, kind),
                                tool_names=tuple(match["name"] for match in matches),
                                outcome=_OUTCOME_TO[part.get("outcome", "success")],
                                provider=provider)


def _metadata_to(message: dict[str, Any], path: str, extras: dict[str, Any]) -> Metadata | None:
    given = message.get("metadata")
    if given is not None and EXTRAS_KEY in given:
        raise NoForm(f"{path}.metadata", message["kind"],
                     f"metadata key {EXTRAS_KEY!r} is reserved for PydanticAI fields zigai has no "
                     "field for; rename it")
    if given is None and not extras:
        return None
    value = dict(given or {})
    if extras:
        value[EXTRAS_KEY] = extras
    return Metadata(value)


def _usage_to(usage: dict[str, Any], path: str) -> RequestUsage:
    details = dict(usage.get("details", {}))
    if _CACHE_AUDIO in details:
        raise NoForm(path, "usage", f"usage detail {_CACHE_AUDIO!r} collides with the "
                                    "cache_audio_read_tokens field zigai keeps under that name")
    reasoning = details.pop(_REASONING, 0)
    cache_audio = usage.get(_CACHE_AUDIO, 0)
    if cache_audio:
        details[_CACHE_AUDIO] = cache_audio
    return RequestUsage(**{name: usage.get(name, 0) for name in _USAGE_FIELDS},
                        reasoning_tokens=reasoning, details=UsageDetails(details))


def _finish_to(message: dict[str, Any]) -> tuple[str | None, ProviderDetails | None]:
    details = message.get("provider_details")
    if details is None:
        return None, None
    raw = details.get(_RAW_FINISH)
    if not isinstance(raw, str):
        return None, ProviderDetails(details)
    rest = {key: value for key, value in details.items() if key != _RAW_FINISH}
    return raw, ProviderDetails(rest) if rest else None


def _extras(message: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    found = {name: message[name] for name in names if message.get(name) is not None}
    if found.get("state") == "complete":
        del found["state"]
    return found


def _message_to(message: dict[str, Any], path: str) -> Message:
    kind = message["kind"]
    if kind == "request":
        parts = [_part(_request_part_to, part, f"{path}.parts[{index}]")
                 for index, part in enumerate(message["parts"])]
        if not parts:
            raise NoForm(path, kind, "a request without parts has no zigai form")
        return RequestMessage(
            tuple(parts), instructions=message.get("instructions"),
            timestamp=_timestamp_to(message.get("timestamp"), f"{path}.timestamp", kind),
            metadata=_metadata_to(message, path, _extras(message, _REQUEST_EXTRAS)),
        )
    response_stamp = message.get("timestamp")
    stamps: dict[str, str] = {}
    parts = [_part(functools.partial(_response_part_to, index=index, stamps=stamps,
                                     response_stamp=response_stamp), part, f"{path}.parts[{index}]")
             for index, part in enumerate(message["parts"])]
    extras = _extras(message, _RESPONSE_EXTRAS)
    cost = message.get("usage", {}).get("cost")
    if cost is not None:
        extras["cost"] = cost
    if stamps:
        extras["native_return_timestamps"] = stamps
    raw_finish, details = _finish_to(message)
    finish = message.get("finish_reason")
    return ResponseMessage(
        tuple(parts), usage=_usage_to(message.get("usage", {}), f"{path}.usage"),
        model_name=message.get("model_name"), provider_name=message.get("provider_name"),
        provider_response_id=message.get("provider_response_id"),
        finish_reason=None if finish is None else FinishReason(finish),
        raw_finish_reason=raw_finish,
        timestamp=_timestamp_to(response_stamp, f"{path}.timestamp", kind),
        provider_details=details,
        metadata=_metadata_to(message, path, extras),
    )


def _part(convert: Callable[[dict[str, Any], str], Any], part: dict[str, Any], path: str) -> Any:
    try:
        return convert(part, path)
    except MessageError as exc:  # a zigai constructor refused the value
        raise NoForm(path, part["part_kind"], str(exc)) from None


def messages_to_zigai(graph: list[Any]) -> list[Message]:
    """zigai messages of a validated stable-v2 graph; raises :class:`NoForm`."""
    converted = []
    for index, message in enumerate(graph):
        path = f"$[{index}]"
        try:
            converted.append(_message_to(message, path))
        except MessageError as exc:  # envelope-level refusal (usage subsets, details)
            raise NoForm(path, message["kind"], str(exc)) from None
    return converted


# ---- zigai -> PydanticAI ------------------------------------------------------------------------

def _provider_from(provider: ProviderPart | None, part_id: str | None, path: str, kind: str,
                   *, native: bool = False) -> dict[str, Any]:
    if provider is None:
        return {"id": part_id, "provider_name": None, "provider_details": None}
    if provider.id is not None and not native:
        raise NoForm(path, kind, "ProviderPart.id has no PydanticAI form (use the part's id)")
    details = None if provider.details is None else provider.details.to_value()
    return {"id": provider.id if native else part_id, "provider_name": provider.provider_name,
            "provider_details": details}


def _args_from(args: str) -> Any:
    if args == "":
        return None
    try:
        value = json.loads(args)
    except ValueError:
        return args
    canonical = isinstance(value, dict) and json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False) == args
    return value if canonical else args


def _stamped(out: dict[str, Any], stamp: datetime | None) -> dict[str, Any]:
    if stamp is not None:  # else the library stamps the part with the time it reads it
        out["timestamp"] = _timestamp_from(stamp)
    return out


def _no_timestamp(part: Any, path: str) -> None:
    if part.timestamp is not None:
        raise NoForm(path, part.part_kind, f"{type(part).__name__}.timestamp has no PydanticAI form")


def _request_part_from(part: Any, path: str) -> dict[str, Any]:
    kind = part.part_kind
    if isinstance(part, SystemPromptPart):
        return _stamped({"content": part.content, "dynamic_ref": None, "part_kind": kind},
                        part.timestamp)
    if isinstance(part, UserPromptPart):
        content = part.content if isinstance(part.content, str) else [
            content_from(item, f"{path}.content[{index}]") for index, item in enumerate(part.content)]
        return _stamped({"content": content, "part_kind": kind}, part.timestamp)
    if isinstance(part, ToolReturnPart):
        if part.outcome not in _OUTCOME_FROM:
            raise NoForm(path, kind, f"tool outcome {part.outcome.value!r} has no PydanticAI form")
        return _stamped({
            "tool_name": part.tool_name, "content": thaw_json(part.content),
            "tool_call_id": part.tool_call_id, "tool_kind": None,
            "metadata": None if part.metadata is None else part.metadata.to_value(),
            "outcome": _OUTCOME_FROM[part.outcome], "part_kind": kind,
        }, part.timestamp)
    if isinstance(part, RetryPromptPart):
        out = {"content": part.content, "tool_name": part.tool_name, "part_kind": kind}
        if part.tool_call_id is not None:  # else the library invents one when it reads the part
            out["tool_call_id"] = part.tool_call_id
        return _stamped(out, part.timestamp)
    if isinstance(part, ToolAvailabilityPart):
        if part.removed:
            raise NoForm(path, kind, "withdrawn tools (ToolAvailabilityPart.removed) have no "
                                     "PydanticAI form")
        _no_timestamp(part, path)
        return {"tools_added": list(part.added), "tool_call_id": part.tool_call_id,
                "part_kind": "tool-availability-delta"}
    if isinstance(part, SpeechPromptPart):
        _no_timestamp(part, path)
        return {"speaker": "user", "transcript": part.transcript,
                "audio": _audio_from(part.audio, f"{path}.audio"), "interrupted_at_ms": None,
                "id": None, "provider_name": None, "provider_details": None, "part_kind": "speech"}
    raise NoForm(path, kind, f"{type(part).__name__} has no PydanticAI form"
                             + (" (put instructions on RequestMessage.instructions)"
                                if kind == "instruction" else ""))


def _audio_from(audio: AudioContent | None, path: str) -> dict[str, Any] | None:
    if audio is None:
        return None
    if not isinstance(audio.source, BytesSource):
        raise NoForm(path, "audio", f"speech audio over a {type(audio.source).__name__} has no "
                                    "PydanticAI form (only inline bytes)")
    return binary_from(audio.source)


def _native_return_from(part: NativeToolReturnPart | ToolSearchReturnPart, path: str,
                        tool_name: str, content: Any, tool_kind: str | None,
                        native_stamp: str | None) -> dict[str, Any]:
    kind = part.part_kind
    if part.outcome not in _OUTCOME_FROM:
        raise NoForm(path, kind, f"tool outcome {part.outcome.value!r} has no PydanticAI form")
    if part.provider is not None and part.provider.id is not None:
        raise NoForm(path, kind, f"ProviderPart.id of a {kind} part has no PydanticAI form")
    provider = _provider_from(part.provider, None, path, kind, native=True)
    del provider["id"]
    out = {"tool_name": tool_name, "content": content, "tool_call_id": part.tool_call_id,
           "tool_kind": tool_kind, "metadata": None, "outcome": _OUTCOME_FROM[part.outcome],
           **provider, "part_kind": "builtin-tool-return"}
    if native_stamp is not None:
        out["timestamp"] = native_stamp
    return out


def _response_part_from(part: Any, path: str, native_stamp: str | None) -> dict[str, Any]:
    kind = part.part_kind
    if isinstance(part, TextPart):
        return {"content": part.content, **_provider_from(part.provider, part.id, path, kind),
                "part_kind": kind}
    if isinstance(part, ThinkingPart):
        return {"content": part.content, "signature": part.signature,
                **_provider_from(part.provider, part.id, path, kind), "part_kind": kind}
    if isinstance(part, CompactionPart):
        return {"content": part.content, **_provider_from(part.provider, part.id, path, kind),
                "part_kind": kind}
    if isinstance(part, FilePart):
        if not isinstance(part.source, BytesSource):
            raise NoForm(path, kind, f"a file part over a {type(part.source).__name__} has no "
                                     "PydanticAI form (only inline bytes)")
        return {"content": binary_from(part.source),
                **_provider_from(part.provider, part.id, path, kind), "part_kind": kind}
    if isinstance(part, ToolCallPart):
        return {"tool_name": part.tool_name, "args": _args_from(part.args),
                "tool_call_id": part.tool_call_id, "tool_kind": None,
                **_provider_from(part.provider, part.id, path, kind), "part_kind": kind}
    if isinstance(part, NativeToolCallPart):
        return {"tool_name": part.tool_name, "args": _args_from(part.args),
                "tool_call_id": part.tool_call_id, "tool_kind": None,
                **_provider_from(part.provider, None, path, kind, native=True),
                "part_kind": "builtin-tool-call"}
    if isinstance(part, NativeToolReturnPart):
        return _native_return_from(part, path, part.tool_name, thaw_json(part.content), None,
                                   native_stamp)
    if isinstance(part, ToolSearchCallPart):
        return {"tool_name": "tool_search", "args": _args_from(part.args),
                "tool_call_id": part.tool_call_id, "tool_kind": "tool-search",
                **_provider_from(part.provider, part.id, path, kind), "part_kind": "builtin-tool-call"}
    if isinstance(part, ToolSearchReturnPart):
        if part.id is not None:
            raise NoForm(path, kind, "ToolSearchReturnPart.id has no PydanticAI form")
        found = {"discovered_tools": [{"name": name} for name in part.tool_names]}
        return _native_return_from(part, path, "tool_search", found, "tool-search", native_stamp)
    if isinstance(part, SpeechPart):
        return {"speaker": "assistant", "transcript": part.transcript,
                "audio": _audio_from(part.audio, f"{path}.audio"), "interrupted_at_ms": None,
                **_provider_from(part.provider, part.id, path, kind), "part_kind": kind}
    raise NoForm(path, kind, f"{type(part).__name__} has no PydanticAI form")


def _metadata_from(message: Message, path: str, allowed: tuple[str, ...]) -> tuple[Any, dict[str, Any]]:
    if message.metadata is None:
        return None, {}
    value = message.metadata.to_value()
    if EXTRAS_KEY not in value:
        return value, {}
    extras = value.pop(EXTRAS_KEY)
    at = f"{path}.metadata[{EXTRAS_KEY!r}]"
    if not isinstance(extras, dict):
        raise NoForm(at, message.kind, "must be a JSON object of PydanticAI envelope fields")
    unknown = sorted(set(extras) - set(allowed))
    if unknown:
        raise NoForm(at, message.kind, f"keys {unknown} have no PydanticAI form on a "
                                       f"{message.kind} (known: {', '.join(allowed)})")
    return (value or None), extras


def _usage_from(usage: RequestUsage, cost: Any, path: str) -> dict[str, Any]:
    details = dict(usage.details)
    if _REASONING in details:
        raise NoForm(path, "usage", f"usage detail {_REASONING!r} collides with "
                                    "RequestUsage.reasoning_tokens, which PydanticAI keeps there")
    cache_audio = details.pop(_CACHE_AUDIO, 0)
    if usage.reasoning_tokens:
        details[_REASONING] = usage.reasoning_tokens
    out: dict[str, Any] = {name: getattr(usage, name) for name in _USAGE_FIELDS}
    out.update({_CACHE_AUDIO: cache_audio, "details": details, "cost": cost})
    return out


def _details_from(message: ResponseMessage, path: str) -> Any:
    details = None if message.provider_details is None else message.provider_details.to_value()
    raw = message.raw_finish_reason
    if details is not None and isinstance(details.get(_RAW_FINISH), str):
        raise NoForm(f"{path}.provider_details", "response",
                     f"provider_details[{_RAW_FINISH!r}] is where PydanticAI keeps the raw finish "
                     "reason; move it to ResponseMessage.raw_finish_reason")
    if raw is None:
        return details
    return {**(details or {}), _RAW_FINISH: raw}


def _message_from(message: Message, path: str) -> dict[str, Any]:
    if isinstance(message, RequestMessage):
        metadata, extras = _metadata_from(message, path, _REQUEST_EXTRAS)
        return {
            "parts": [_request_part_from(part, f"{path}.parts[{index}]")
                      for index, part in enumerate(message.parts)],
            "timestamp": None if message.timestamp is None else _timestamp_from(message.timestamp),
            "instructions": message.instructions, "kind": "request",
            "run_id": extras.get("run_id"), "conversation_id": extras.get("conversation_id"),
            "metadata": metadata, "state": extras.get("state", "complete"),
        }
    metadata, extras = _metadata_from(message, path, _RESPONSE_EXTRAS)
    stamp = None if message.timestamp is None else _timestamp_from(message.timestamp)
    native_stamps = extras.get("native_return_timestamps") or {}
    for key in native_stamps:
        if not (key.isdigit() and int(key) < len(message.parts)
                and isinstance(message.parts[int(key)], (NativeToolReturnPart, ToolSearchReturnPart))):
            raise NoForm(f"{path}.metadata[{EXTRAS_KEY!r}]", "response",
                         f"native_return_timestamps key {key!r} names no native tool return part")
    if message.finish_reason is FinishReason.other:
        raise NoForm(f"{path}.finish_reason", "response",
                     "finish reason 'other' has no PydanticAI form")
    out: dict[str, Any] = {
        "parts": [_response_part_from(part, f"{path}.parts[{index}]",
                                      native_stamps.get(str(index), stamp))
                  for index, part in enumerate(message.parts)],
        "usage": _usage_from(message.usage, extras.get("cost"), f"{path}.usage"),
        "model_name": message.model_name, "kind": "response",
        "provider_name": message.provider_name, "provider_url": extras.get("provider_url"),
        "provider_details": _details_from(message, path),
        "provider_response_id": message.provider_response_id,
        "finish_reason": None if message.finish_reason is None else message.finish_reason.value,
        "run_id": extras.get("run_id"), "conversation_id": extras.get("conversation_id"),
        "metadata": metadata, "state": extras.get("state", "complete"),
    }
    if stamp is not None:  # else the library stamps the response with the time it reads it
        out["timestamp"] = stamp
    return out


def messages_from_zigai(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """The stable-v2 graph of zigai messages (not yet schema-checked); raises :class:`NoForm`."""
    out = []
    for index, message in enumerate(messages):
        if not isinstance(message, (RequestMessage, ResponseMessage)):
            raise TypeError(f"messages[{index}] must be a RequestMessage or ResponseMessage, "
                            f"not {type(message).__name__}")
        out.append(_message_from(message, f"messages[{index}]"))
    return out

