"""The Gemini Live codec: ``BidiGenerateContent`` setup, content, media and tool frames.

Client frames carry exactly one of ``setup``, ``clientContent``, ``realtimeInput`` or
``toolResponse``.  Server frames carry one of ``setupComplete``, ``serverContent``,
``toolCall``, ``toolCallCancellation``, ``goAway`` or ``sessionResumptionUpdate``, optionally
with ``usageMetadata``; one frame may decode to several events (a ``serverContent`` with text,
audio, a transcription and ``turnComplete``), in frame order.

Gemini has no response ids and no explicit response start: the first output of a turn
starts it and ``turnComplete`` ends it.  Tool calls arrive mid-turn and the turn continues
once their results are sent, so ``tools_answered_after_terminal`` is False.  A session can be
resumed on a new connection with the handle of the last ``sessionResumptionUpdate``
(``can_resume``).  There is no frame to clear the input buffer or cancel a response;
those commands raise :class:`RealtimeCodecError` rather than doing nothing.

Invariants: bounded JSON, strict bounded base64, unknown top-level keys or part shapes raise
:class:`UnknownRealtimeFrame`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from zigai.realtime import events as ev
from zigai.realtime._wire import Fields, FrameLimits, decode_audio, dump, encode_audio, parse_object
from zigai.usage import RequestUsage

__all__ = ["GeminiLiveCodec"]

_SERVER_KEYS = frozenset({"setupComplete", "serverContent", "toolCall", "toolCallCancellation",
                          "goAway", "sessionResumptionUpdate"})
_CONTENT_KEYS = frozenset({"modelTurn", "turnComplete", "interrupted", "generationComplete",
                           "inputTranscription", "outputTranscription", "groundingMetadata",
                           "turnCompleteReason", "waitingForInput"})
_DURATION = re.compile(r"^(\d+(?:\.\d{1,9})?)s$")


class GeminiLiveCodec:
    """Encode commands to and decode frames from the Gemini Live API for one ``model``."""

    provider = "gemini_live"
    can_resume = True
    tools_answered_after_terminal = False  # the turn waits for the tool response

    def __init__(self, model: str, *, input_audio_rate: int = 16_000,
                 limits: FrameLimits | None = None) -> None:
        if not model:
            raise ValueError("model must name a Live model, e.g. 'models/gemini-live-2.5-flash'")
        self.model = model if model.startswith("models/") else f"models/{model}"
        self.input_mime_type = f"audio/pcm;rate={input_audio_rate}"
        self.limits = limits or FrameLimits()

    # -- encoding ----------------------------------------------------------------------------

    def encode(self, command: ev.Command) -> tuple[str, ...]:
        match command:
            case ev.ConfigureSession():
                return (dump({"setup": self._setup(command)}),)
            case ev.AppendAudio(audio=audio):
                return (dump({"realtimeInput": {"audio": {"mimeType": self.input_mime_type,
                                                          "data": encode_audio(audio)}}}),)
            case ev.CommitAudio():
                return (dump({"realtimeInput": {"audioStreamEnd": True}}),)
            case ev.SendText(text=text, respond=respond):
                return (dump({"clientContent": {"turns": [{"role": "user", "parts": [{"text": text}]}],
                                                "turnComplete": respond}}),)
            case ev.SendToolResults(results=results):
                return (dump({"toolResponse": {"functionResponses": [
                    {"id": r.call_id, "name": r.name, "response": _response_object(r.output)}
                    for r in results]}}),)
            case ev.RequestResponse():
                return ()  # Gemini answers a completed turn by itself; there is no frame to send
            case ev.ClearAudio() | ev.CancelResponse():
                raise ev.RealtimeCodecError(f"Gemini Live has no frame for {type(command).__name__}; "
                                            "stop sending audio, or close the session")
            case _:
                raise ev.RealtimeCodecError(f"{type(command).__name__} is not a realtime command")

    def _setup(self, config: ev.ConfigureSession) -> dict[str, Any]:
        if len(config.output_modalities) != 1:
            raise ev.RealtimeCodecError("Gemini Live answers in exactly one modality: text or audio")
        generation: dict[str, Any] = {"responseModalities": [config.output_modalities[0].upper()]}
        if config.voice is not None:
            generation["speechConfig"] = {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": config.voice}}}
        setup: dict[str, Any] = {"model": self.model, "generationConfig": generation}
        if config.instructions is not None:
            setup["systemInstruction"] = {"parts": [{"text": config.instructions}]}
        if config.tools:
            setup["tools"] = [{"functionDeclarations": [
                {"name": t.name, "description": t.description, "parameters": t.parameters}
                for t in config.tools]}]
        if config.transcribe_input:
            setup["inputAudioTranscription"] = {}
        if "audio" in config.output_modalities:
            setup["outputAudioTranscription"] = {}
        setup["sessionResumption"] = {} if config.resume_handle is None else {"handle": config.resume_handle}
        return setup

    # -- decoding ----------------------------------------------------------------------------

    def decode(self, frame: str | bytes) -> tuple[ev.ServerEvent, ...]:
        value = parse_object(frame, self.limits, "Gemini Live")
        usage = value.get("usageMetadata")
        keys = set(value) - {"usageMetadata"}
        unknown = keys - _SERVER_KEYS
        if unknown or len(keys) > 1 or (not keys and usage is None):
            raise ev.UnknownRealtimeFrame(f"a Gemini Live frame with fields {sorted(value)} is not a "
                                          "documented server message")
        events: list[ev.ServerEvent] = []
        f = Fields(value, "Gemini Live frame")
        if usage is not None:  # first, so it counts for the turn a turnComplete beside it ends
            events.append(ev.UsageReported(_usage(f.obj("usageMetadata"))))
        if "setupComplete" in value:
            f.obj("setupComplete")
            events.append(ev.SessionConfigured())
        elif "serverContent" in value:
            events.extend(self._content(f.obj("serverContent")))
        elif "toolCall" in value:
            for index, raw in enumerate(f.obj("toolCall").array("functionCalls")):
                call = Fields(raw if isinstance(raw, dict) else {}, f"toolCall.functionCalls[{index}]")
                args = call.value.get("args", {})
                if not isinstance(args, dict):
                    raise ev.RealtimeCodecError(f"{call.where}: field 'args' must be an object")
                events.append(ev.ToolCallRequested(call.text("id"), call.text("name"),
                                                   json.dumps(args, ensure_ascii=False)))
        elif "toolCallCancellation" in value:
            ids = f.obj("toolCallCancellation").array("ids")
            if not all(isinstance(i, str) for i in ids):
                raise ev.RealtimeCodecError("toolCallCancellation.ids must be strings")
            events.append(ev.ToolCallsCancelled(tuple(ids)))
        elif "goAway" in value:
            events.append(ev.GoAway(_seconds(f.obj("goAway").opt_text("timeLeft"))))
        elif "sessionResumptionUpdate" in value:
            update = f.obj("sessionResumptionUpdate")
            events.append(ev.ResumptionUpdate(update.opt_text("newHandle"), update.flag("resumable")))
        return tuple(events)

    def _content(self, content: Fields) -> list[ev.ServerEvent]:
        unknown = set(content.value) - _CONTENT_KEYS
        if unknown:
            raise ev.UnknownRealtimeFrame(f"serverContent fields {sorted(unknown)} are not documented")
        events: list[ev.ServerEvent] = []
        transcript = content.opt_obj("inputTranscription")
        if transcript is not None:
            events.append(ev.InputTranscript(transcript.text("text")))
        turn = content.opt_obj("modelTurn")
        if turn is not None:
            for index, raw in enumerate(turn.array("parts")):
                events.append(self._part(Fields(raw if isinstance(raw, dict) else {},
                                                f"serverContent.modelTurn.parts[{index}]")))
        spoken = content.opt_obj("outputTranscription")
        if spoken is not None:
            events.append(ev.TranscriptDelta(spoken.text("text")))
        if content.flag("generationComplete"):
            events.append(ev.ProviderNotice("generationComplete"))
        if content.flag("interrupted"):
            events.append(ev.Interrupted())
        if content.flag("turnComplete"):
            events.append(ev.ResponseDone("completed"))
        return events

    def _part(self, part: Fields) -> ev.ServerEvent:
        if part.value.get("thought") is True and isinstance(part.value.get("text"), str):
            return ev.ProviderNotice("thought")
        if set(part.value) == {"text"}:
            return ev.TextDelta(part.text("text"))
        if set(part.value) == {"inlineData"}:
            blob = part.obj("inlineData")
            if not blob.text("mimeType").startswith("audio/"):
                raise ev.UnknownRealtimeFrame(f"{part.where}: inline {blob.text('mimeType')!r} is not audio")
            return ev.AudioDelta(decode_audio(blob.text("data"), self.limits, part.where))
        raise ev.UnknownRealtimeFrame(f"{part.where}: a part with fields {sorted(part.value)} is not "
                                      "text or inline audio")


def _response_object(output: str) -> dict[str, Any]:
    try:
        value = json.loads(output)
    except ValueError:
        return {"output": output}
    return value if isinstance(value, dict) else {"output": value}


def _seconds(text: str | None) -> float | None:
    if text is None:
        return None
    match = _DURATION.match(text)
    if match is None:
        raise ev.RealtimeCodecError(f"goAway.timeLeft {text!r} is not a duration like '10s'")
    return float(match.group(1))


def _usage(usage: Fields) -> RequestUsage:
    def audio(key: str) -> int:
        details = usage.value.get(key, [])
        if not isinstance(details, list):
            raise ev.RealtimeCodecError(f"usageMetadata.{key} must be an array")
        total = 0
        for raw in details:
            entry = Fields(raw if isinstance(raw, dict) else {}, f"usageMetadata.{key}[]")
            if entry.opt_text("modality") == "AUDIO":
                total += entry.count("tokenCount")
        return total

    return RequestUsage(
        input_tokens=usage.count("promptTokenCount"), output_tokens=usage.count("responseTokenCount"),
        cache_read_tokens=usage.count("cachedContentTokenCount"),
        input_audio_tokens=audio("promptTokensDetails"), output_audio_tokens=audio("responseTokensDetails"),
    )
