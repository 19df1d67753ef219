"""One strict codec for the OpenAI Realtime wire, with dialect profiles for OpenAI, Azure
OpenAI and xAI.

The three services speak one event protocol (JSON text frames with a ``type`` field) that
differs in details: the GA names (``response.output_text.delta``) against the preview names
Azure's preview API versions still use (``response.text.delta``), where the voice and the
modalities sit in ``session.update``, which frame opens the session, and where a function
call is announced.  A :class:`RealtimeDialect` states those differences explicitly; the codec
has no other provider switch.

Invariants: every received frame is bounded JSON (:class:`~zigai.realtime.FrameLimits`),
audio is strict base64 bounded before decoding, a frame ``type`` outside the dialect's
documented set raises :class:`UnknownRealtimeFrame`, and a documented frame missing a field
the session relies on raises :class:`RealtimeCodecError`.  Nothing is dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from zigai.realtime import events as ev
from zigai.realtime._wire import Fields, FrameLimits, decode_audio, dump, encode_audio, parse_object
from zigai.usage import RequestUsage

__all__ = ["RealtimeDialect", "OPENAI", "AZURE_OPENAI", "AZURE_OPENAI_PREVIEW", "XAI",
           "OpenAIRealtimeCodec"]

_COMMON_NOTICES = frozenset({
    "conversation.item.retrieved", "conversation.item.truncated", "conversation.item.deleted",
    "conversation.item.input_audio_transcription.failed", "input_audio_buffer.cleared",
    "response.output_item.added", "response.content_part.added", "response.content_part.done",
    "response.function_call_arguments.delta", "rate_limits.updated",
})
_GA_NOTICES = _COMMON_NOTICES | {
    "conversation.item.added", "conversation.item.done",
    "conversation.item.input_audio_transcription.segment", "input_audio_buffer.timeout_triggered",
    "output_audio_buffer.started", "output_audio_buffer.stopped", "output_audio_buffer.cleared",
}
_PREVIEW_NOTICES = _COMMON_NOTICES | {"conversation.created", "conversation.item.created"}


@dataclass(frozen=True, slots=True)
class RealtimeDialect:
    """The documented differences between services speaking the OpenAI Realtime wire."""

    name: str
    session_started: frozenset[str]
    text_events: tuple[str, str]          # (delta, done)
    audio_events: tuple[str, str]
    transcript_events: tuple[str, str]
    notices: frozenset[str]
    session_type: str | None              # GA sessions carry ``"type": "realtime"``
    modalities_key: str | None            # "output_modalities" (GA), "modalities" (preview)
    voice_in_audio: bool                  # GA: session.audio.output.voice; else session.voice
    call_source: Literal["output_item", "arguments_done"]
    transcription_model: str | None


_GA_TEXT = ("response.output_text.delta", "response.output_text.done")
_GA_AUDIO = ("response.output_audio.delta", "response.output_audio.done")
_GA_TRANSCRIPT = ("response.output_audio_transcript.delta", "response.output_audio_transcript.done")

OPENAI = RealtimeDialect(
    name="openai", session_started=frozenset({"session.created"}), text_events=_GA_TEXT,
    audio_events=_GA_AUDIO, transcript_events=_GA_TRANSCRIPT, notices=_GA_NOTICES,
    session_type="realtime", modalities_key="output_modalities", voice_in_audio=True,
    call_source="output_item", transcription_model="gpt-4o-transcribe",
)
#: Azure OpenAI's GA ``/openai/v1/realtime`` endpoint: the OpenAI GA wire.
AZURE_OPENAI = RealtimeDialect(
    name="azure_openai", session_started=frozenset({"session.created"}), text_events=_GA_TEXT,
    audio_events=_GA_AUDIO, transcript_events=_GA_TRANSCRIPT, notices=_GA_NOTICES,
    session_type="realtime", modalities_key="output_modalities", voice_in_audio=True,
    call_source="output_item", transcription_model="whisper-1",
)
#: Azure OpenAI preview API versions (``api-version=2025-04-01-preview`` and earlier).
AZURE_OPENAI_PREVIEW = RealtimeDialect(
    name="azure_openai_preview", session_started=frozenset({"session.created"}),
    text_events=("response.text.delta", "response.text.done"),
    audio_events=("response.audio.delta", "response.audio.done"),
    transcript_events=("response.audio_transcript.delta", "response.audio_transcript.done"),
    notices=_PREVIEW_NOTICES, session_type=None, modalities_key="modalities",
    voice_in_audio=False, call_source="output_item", transcription_model="whisper-1",
)
#: xAI's Grok voice agent API: GA output names, ``conversation.created`` opens the session,
#: function calls are announced by ``response.function_call_arguments.done``.
XAI = RealtimeDialect(
    name="xai", session_started=frozenset({"conversation.created", "session.created"}),
    text_events=_GA_TEXT, audio_events=_GA_AUDIO, transcript_events=_GA_TRANSCRIPT,
    notices=_GA_NOTICES, session_type=None, modalities_key=None, voice_in_audio=False,
    call_source="arguments_done", transcription_model=None,
)

_CALL_FRAMES = frozenset({"response.output_item.done", "response.function_call_arguments.done"})
_STATUSES: frozenset[str] = frozenset({"completed", "cancelled", "failed", "incomplete"})


class OpenAIRealtimeCodec:
    """Encode commands to and decode frames from one OpenAI-Realtime-wire service."""

    can_resume = False
    tools_answered_after_terminal = True  # calls arrive in a response; results start the next

    def __init__(self, dialect: RealtimeDialect = OPENAI, *, limits: FrameLimits | None = None) -> None:
        self.dialect = dialect
        self.limits = limits or FrameLimits()

    @property
    def provider(self) -> str:
        return self.dialect.name

    # -- encoding ----------------------------------------------------------------------------

    def encode(self, command: ev.Command) -> tuple[str, ...]:
        frames: list[dict[str, Any]]
        match command:
            case ev.ConfigureSession():
                frames = [{"type": "session.update", "session": self._session(command)}]
            case ev.AppendAudio(audio=audio):
                frames = [{"type": "input_audio_buffer.append", "audio": encode_audio(audio)}]
            case ev.CommitAudio():
                frames = [{"type": "input_audio_buffer.commit"}]
            case ev.ClearAudio():
                frames = [{"type": "input_audio_buffer.clear"}]
            case ev.SendText(text=text, respond=respond):
                frames = [{"type": "conversation.item.create", "item": {
                    "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}}]
                frames += [{"type": "response.create"}] if respond else []
            case ev.SendToolResults(results=results, respond=respond):
                frames = [{"type": "conversation.item.create", "item": {
                    "type": "function_call_output", "call_id": r.call_id, "output": r.output}}
                    for r in results]
                frames += [{"type": "response.create"}] if respond else []
            case ev.RequestResponse():
                frames = [{"type": "response.create"}]
            case ev.CancelResponse():
                frames = [{"type": "response.cancel"}]
            case _:
                raise ev.RealtimeCodecError(f"{type(command).__name__} is not a realtime command")
        return tuple(dump(frame) for frame in frames)

    def _session(self, config: ev.ConfigureSession) -> dict[str, Any]:
        d = self.dialect
        if config.resume_handle is not None:
            raise ev.RealtimeCodecError(f"{d.name} realtime sessions cannot be resumed by handle; "
                                        "start a new session")
        session: dict[str, Any] = {}
        if d.session_type is not None:
            session["type"] = d.session_type
        if config.instructions is not None:
            session["instructions"] = config.instructions
        if d.modalities_key == "modalities":  # preview: audio output always comes with text
            session["modalities"] = ["text", "audio"] if "audio" in config.output_modalities else ["text"]
        elif d.modalities_key is not None:
            session[d.modalities_key] = list(config.output_modalities)
        if config.voice is not None:
            if d.voice_in_audio:
                session.setdefault("audio", {})["output"] = {"voice": config.voice}
            else:
                session["voice"] = config.voice
        if config.transcribe_input:
            if d.transcription_model is None:
                raise ev.RealtimeCodecError(f"{d.name} has no input transcription setting")
            if d.voice_in_audio:
                session.setdefault("audio", {})["input"] = {"transcription": {"model": d.transcription_model}}
            else:
                session["input_audio_transcription"] = {"model": d.transcription_model}
        if config.tools:
            session["tools"] = [{"type": "function", "name": t.name, "description": t.description,
                                 "parameters": t.parameters} for t in config.tools]
            session["tool_choice"] = "auto"
        return session

    # -- decoding ----------------------------------------------------------------------------

    def decode(self, frame: str | bytes) -> tuple[ev.ServerEvent, ...]:
        value = parse_object(frame, self.limits, self.dialect.name)
        kind = value.get("type")
        if not isinstance(kind, str):
            raise ev.UnknownRealtimeFrame(f"a {self.dialect.name} frame has no string 'type'")
        return (self._event(kind, Fields(value, kind)),)

    def _event(self, kind: str, f: Fields) -> ev.ServerEvent:
        d = self.dialect
        if kind in d.session_started:
            session = f.opt_obj("session") or f.opt_obj("conversation")
            return ev.SessionStarted(session.opt_text("id") if session is not None else None)
        if kind == "error":
            error = f.obj("error")
            return ev.ServerError(error.text("message"), error.opt_text("code") or error.opt_text("type"),
                                  error.opt_text("event_id") or f.opt_text("event_id"))
        if kind == "session.updated":
            f.obj("session")
            return ev.SessionConfigured()
        if kind == "input_audio_buffer.speech_started":
            return ev.SpeechStarted(f.opt_text("item_id"))
        if kind == "input_audio_buffer.speech_stopped":
            return ev.SpeechStopped(f.opt_text("item_id"))
        if kind == "input_audio_buffer.committed":
            return ev.InputCommitted(f.opt_text("item_id"))
        if kind == "conversation.item.input_audio_transcription.delta":
            return ev.InputTranscript(f.text("delta"), f.opt_text("item_id"), final=False)
        if kind == "conversation.item.input_audio_transcription.completed":
            return ev.InputTranscript(f.text("transcript"), f.opt_text("item_id"), final=True)
        if kind == "response.created":
            return ev.ResponseStarted(f.obj("response").opt_text("id"))
        if kind == "response.done":
            return self._done(f.obj("response"))
        if kind == d.text_events[0]:
            return ev.TextDelta(f.text("delta"), f.opt_text("response_id"), f.opt_text("item_id"))
        if kind == d.text_events[1]:
            return ev.TextDone(f.text("text"), f.opt_text("response_id"), f.opt_text("item_id"))
        if kind == d.audio_events[0]:
            return ev.AudioDelta(decode_audio(f.text("delta"), self.limits, kind), f.opt_text("response_id"),
                                 f.opt_text("item_id"))
        if kind == d.audio_events[1]:
            return ev.AudioDone(f.opt_text("response_id"), f.opt_text("item_id"))
        if kind == d.transcript_events[0]:
            return ev.TranscriptDelta(f.text("delta"), f.opt_text("response_id"), f.opt_text("item_id"))
        if kind == d.transcript_events[1]:
            return ev.TranscriptDone(f.text("transcript"), f.opt_text("response_id"), f.opt_text("item_id"))
        if kind == "response.output_item.done" and d.call_source == "output_item":
            item = f.obj("item")
            if item.value.get("type") == "function_call":
                return ev.ToolCallRequested(item.text("call_id"), item.text("name"), item.text("arguments"),
                                            f.opt_text("response_id"), item.opt_text("id"))
            return ev.ProviderNotice(kind, item.opt_text("id"), f.opt_text("response_id"))
        if kind == "response.function_call_arguments.done" and d.call_source == "arguments_done":
            return ev.ToolCallRequested(f.text("call_id"), f.text("name"), f.text("arguments"),
                                        f.opt_text("response_id"), f.opt_text("item_id"))
        if kind in d.notices or kind in _CALL_FRAMES:  # the call frame this dialect does not use
            item_id = f.value.get("item_id")
            response_id = f.value.get("response_id")
            return ev.ProviderNotice(kind, item_id if isinstance(item_id, str) else None,
                                     response_id if isinstance(response_id, str) else None)
        raise ev.UnknownRealtimeFrame(f"{d.name} realtime frame type {kind!r} is not part of the "
                                      "documented protocol this codec speaks")

    def _done(self, response: Fields) -> ev.ResponseDone:
        status = response.text("status")
        if status not in _STATUSES:
            raise ev.RealtimeCodecError(f"response.done: status {status!r} is not a terminal status")
        usage = response.opt_obj("usage")
        return ev.ResponseDone(status, response.opt_text("id"),  # type: ignore[arg-type]
                               None if usage is None else _usage(usage))


def _usage(usage: Fields) -> RequestUsage:
    details_in = usage.opt_obj("input_token_details")
    details_out = usage.opt_obj("output_token_details")
    return RequestUsage(
        input_tokens=usage.count("input_tokens"), output_tokens=usage.count("output_tokens"),
        cache_read_tokens=details_in.count("cached_tokens") if details_in else 0,
        input_audio_tokens=details_in.count("audio_tokens") if details_in else 0,
        output_audio_tokens=details_out.count("audio_tokens") if details_out else 0,
    )
