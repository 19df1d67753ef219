"""The session observer: control-safe metadata about every realtime event, never content.

A :class:`RealtimeObserver` sees one :class:`RealtimeEventInfo` per command sent and event
received, plus session lifecycle notes (``connected``, ``reconnected``, ``closed``).  The
info names the event kind and its identities (response, item, call ids, tool names), counts
sizes (audio bytes, text characters) and carries usage and error codes — never text, audio,
instructions, tool arguments or results.  Observers are called synchronously and fail open:
an exception raised by an observer is swallowed, so telemetry can never break a session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from zigai.realtime import events as ev
from zigai.usage import RequestUsage

__all__ = ["RealtimeObserver", "RealtimeEventInfo", "describe"]


@dataclass(frozen=True, slots=True)
class RealtimeEventInfo:
    direction: Literal["sent", "received", "session"]
    kind: str
    provider: str
    response_id: str | None = None
    item_id: str | None = None
    call_id: str | None = None
    tool_name: str | None = None
    audio_bytes: int = 0
    text_chars: int = 0
    status: str | None = None
    error_code: str | None = None
    usage: RequestUsage | None = None
    server_state_survived: bool | None = None


class RealtimeObserver(Protocol):
    def on_realtime_event(self, info: RealtimeEventInfo) -> None: ...


def describe(value: ev.Command | ev.ServerEvent, direction: Literal["sent", "received"],
             provider: str) -> RealtimeEventInfo:
    """Metadata of one command or event (sizes and ids only)."""
    audio = len(value.audio) if isinstance(value, (ev.AppendAudio, ev.AudioDelta)) else 0
    text = getattr(value, "text", None)
    chars = len(text) if isinstance(text, str) else 0
    if isinstance(value, ev.SendToolResults):
        chars = sum(len(r.output) for r in value.results)
    usage = value.usage if isinstance(value, (ev.ResponseDone, ev.UsageReported)) else None
    return RealtimeEventInfo(
        direction=direction, kind=type(value).__name__ if not isinstance(value, ev.ProviderNotice)
        else f"ProviderNotice:{value.kind}", provider=provider,
        response_id=_str(value, "response_id"), item_id=_str(value, "item_id"),
        call_id=_str(value, "call_id"),
        tool_name=value.name if isinstance(value, ev.ToolCallRequested) else None,
        audio_bytes=audio, text_chars=chars,
        status=value.status if isinstance(value, ev.ResponseDone) else None,
        error_code=value.code if isinstance(value, ev.ServerError) else None, usage=usage,
    )


def _str(value: object, name: str) -> str | None:
    found = getattr(value, name, None)
    return found if isinstance(found, str) else None
