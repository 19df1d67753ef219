"""Golden frames for the realtime codecs: every command encoded, every event kind decoded,
each malformed shape refused (OpenAI / Azure OpenAI / xAI dialects and Gemini Live)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from zigai.realtime import (
    AZURE_OPENAI,
    AZURE_OPENAI_PREVIEW,
    OPENAI,
    XAI,
    FrameLimits,
    GeminiLiveCodec,
    OpenAIRealtimeCodec,
    RealtimeCodecError,
    RealtimeFrameTooLarge,
    UnknownRealtimeFrame,
)
from zigai.realtime import events as ev
from zigai.usage import RequestUsage

PCM = bytes(range(256)) * 4
B64 = base64.b64encode(PCM).decode()
TOOL = ev.RealtimeTool("weather", "Weather for a city", {"type": "object", "properties": {"city": {"type": "string"}}})


def frames(codec: Any, command: ev.Command) -> list[dict[str, Any]]:
    return [json.loads(f) for f in codec.encode(command)]


# -- OpenAI wire: encoding ----------------------------------------------------------------------


def test_openai_ga_commands() -> None:
    codec = OpenAIRealtimeCodec(OPENAI)
    config = ev.ConfigureSession(instructions="be brief", tools=(TOOL,), output_modalities=("audio",),
                                 voice="marin", transcribe_input=True)
    assert frames(codec, config) == [{"type": "session.update", "session": {
        "type": "realtime", "instructions": "be brief", "output_modalities": ["audio"],
        "audio": {"output": {"voice": "marin"}, "input": {"transcription": {"model": "gpt-4o-transcribe"}}},
        "tools": [{"type": "function", "name": "weather", "description": "Weather for a city",
                   "parameters": TOOL.parameters}], "tool_choice": "auto"}}]
    assert frames(codec, ev.ConfigureSession()) == [
        {"type": "session.update", "session": {"type": "realtime", "output_modalities": ["text"]}}]
    assert frames(codec, ev.AppendAudio(PCM)) == [{"type": "input_audio_buffer.append", "audio": B64}]
    assert frames(codec, ev.CommitAudio()) == [{"type": "input_audio_buffer.commit"}]
    assert frames(codec, ev.ClearAudio()) == [{"type": "input_audio_buffer.clear"}]
    assert frames(codec, ev.SendText("hi")) == [
        {"type": "conversation.item.create", "item": {"type": "message", "role": "user",
                                                      "content": [{"type": "input_text", "text": "hi"}]}},
        {"type": "response.create"}]
    assert len(frames(codec, ev.SendText("hi", respond=False))) == 1
    results = ev.SendToolResults((ev.ToolResult("c1", "weather", '{"t": 20}'), ev.ToolResult("c2", "weather", "x")))
    assert frames(codec, results) == [
        {"type": "conversation.item.create", "item": {"type": "function_call_output", "call_id": "c1",
                                                      "output": '{"t": 20}'}},
        {"type": "conversation.item.create", "item": {"type": "function_call_output", "call_id": "c2",
                                                      "output": "x"}},
        {"type": "response.create"}]
    assert len(frames(codec, ev.SendToolResults(results.results, respond=False))) == 2
    assert frames(codec, ev.RequestResponse()) == [{"type": "response.create"}]
    assert frames(codec, ev.CancelResponse()) == [{"type": "response.cancel"}]
    with pytest.raises(RealtimeCodecError, match="cannot be resumed"):
        codec.encode(ev.ConfigureSession(resume_handle="h"))
    with pytest.raises(RealtimeCodecError, match="not a realtime command"):
        codec.encode(ev.TextDelta("x"))  # type: ignore[arg-type]


def test_dialect_session_shapes() -> None:
    config = ev.ConfigureSession(instructions="i", output_modalities=("audio",), voice="alloy",
                                 transcribe_input=True)
    assert frames(OpenAIRealtimeCodec(AZURE_OPENAI), config)[0]["session"]["audio"]["input"] == {
        "transcription": {"model": "whisper-1"}}
    preview = frames(OpenAIRealtimeCodec(AZURE_OPENAI_PREVIEW), config)[0]["session"]
    assert preview == {"instructions": "i", "modalities": ["text", "audio"], "voice": "alloy",
                       "input_audio_transcription": {"model": "whisper-1"}}
    assert frames(OpenAIRealtimeCodec(AZURE_OPENAI_PREVIEW), ev.ConfigureSession())[0]["session"] == {
        "modalities": ["text"]}
    xai = frames(OpenAIRealtimeCodec(XAI), ev.ConfigureSession(instructions="i", voice="Ara"))[0]["session"]
    assert xai == {"instructions": "i", "voice": "Ara"}
    with pytest.raises(RealtimeCodecError, match="no input transcription"):
        OpenAIRealtimeCodec(XAI).encode(ev.ConfigureSession(transcribe_input=True))


# -- OpenAI wire: decoding ----------------------------------------------------------------------

USAGE = {"total_tokens": 60, "input_tokens": 20, "output_tokens": 40,
         "input_token_details": {"cached_tokens": 5, "text_tokens": 10, "audio_tokens": 10},
         "output_token_details": {"text_tokens": 10, "audio_tokens": 30}}

GA_EVENTS: list[tuple[dict[str, Any], ev.ServerEvent]] = [
    ({"type": "session.created", "event_id": "e1", "session": {"id": "sess_1", "type": "realtime"}},
     ev.SessionStarted("sess_1")),
    ({"type": "session.updated", "session": {"type": "realtime"}}, ev.SessionConfigured()),
    ({"type": "error", "event_id": "e2", "error": {"type": "invalid_request_error", "code": "bad_field",
                                                  "message": "no", "event_id": "c9"}},
     ev.ServerError("no", "bad_field", "c9")),
    ({"type": "error", "event_id": "e2", "error": {"type": "server_error", "message": "down"}},
     ev.ServerError("down", "server_error", "e2")),
    ({"type": "input_audio_buffer.speech_started", "item_id": "i1", "audio_start_ms": 5}, ev.SpeechStarted("i1")),
    ({"type": "input_audio_buffer.speech_stopped", "item_id": "i1", "audio_end_ms": 9}, ev.SpeechStopped("i1")),
    ({"type": "input_audio_buffer.committed", "item_id": "i1", "previous_item_id": None}, ev.InputCommitted("i1")),
    ({"type": "conversation.item.input_audio_transcription.delta", "item_id": "i1", "delta": "hel"},
     ev.InputTranscript("hel", "i1", final=False)),
    ({"type": "conversation.item.input_audio_transcription.completed", "item_id": "i1", "transcript": "hello"},
     ev.InputTranscript("hello", "i1", final=True)),
    ({"type": "response.created", "response": {"id": "r1", "status": "in_progress"}}, ev.ResponseStarted("r1")),
    ({"type": "response.output_text.delta", "response_id": "r1", "item_id": "m1", "delta": "Hi"},
     ev.TextDelta("Hi", "r1", "m1")),
    ({"type": "response.output_text.done", "response_id": "r1", "item_id": "m1", "text": "Hi!"},
     ev.TextDone("Hi!", "r1", "m1")),
    ({"type": "response.output_audio.delta", "response_id": "r1", "item_id": "m1", "delta": B64},
     ev.AudioDelta(PCM, "r1", "m1")),
    ({"type": "response.output_audio.done", "response_id": "r1", "item_id": "m1"}, ev.AudioDone("r1", "m1")),
    ({"type": "response.output_audio_transcript.delta", "response_id": "r1", "item_id": "m1", "delta": "Hi"},
     ev.TranscriptDelta("Hi", "r1", "m1")),
    ({"type": "response.output_audio_transcript.done", "response_id": "r1", "item_id": "m1", "transcript": "Hi!"},
     ev.TranscriptDone("Hi!", "r1", "m1")),
    ({"type": "response.output_item.done", "response_id": "r1", "item": {
        "id": "fc1", "type": "function_call", "call_id": "call_1", "name": "weather",
        "arguments": '{"city":"Oslo"}', "status": "completed"}},
     ev.ToolCallRequested("call_1", "weather", '{"city":"Oslo"}', "r1", "fc1")),
    ({"type": "response.output_item.done", "response_id": "r1", "item": {"id": "m1", "type": "message"}},
     ev.ProviderNotice("response.output_item.done", "m1", "r1")),
    ({"type": "response.function_call_arguments.done", "response_id": "r1", "item_id": "fc1",
      "call_id": "call_1", "arguments": "{}"},
     ev.ProviderNotice("response.function_call_arguments.done", "fc1", "r1")),
    ({"type": "response.done", "response": {"id": "r1", "status": "completed", "usage": USAGE}},
     ev.ResponseDone("completed", "r1", RequestUsage(input_tokens=20, output_tokens=40, cache_read_tokens=5,
                                                     input_audio_tokens=10, output_audio_tokens=30))),
    ({"type": "response.done", "response": {"id": "r2", "status": "cancelled"}},
     ev.ResponseDone("cancelled", "r2", None)),
    ({"type": "rate_limits.updated", "rate_limits": []}, ev.ProviderNotice("rate_limits.updated")),
    ({"type": "conversation.item.added", "item": {"id": "i1"}}, ev.ProviderNotice("conversation.item.added")),
    ({"type": "response.content_part.added", "response_id": "r1", "item_id": "m1", "part": {}},
     ev.ProviderNotice("response.content_part.added", "m1", "r1")),
]


@pytest.mark.parametrize(("frame", "expected"), GA_EVENTS, ids=[f["type"] for f, _ in GA_EVENTS])
def test_openai_ga_events(frame: dict[str, Any], expected: ev.ServerEvent) -> None:
    for dialect in (OPENAI, AZURE_OPENAI):
        assert OpenAIRealtimeCodec(dialect).decode(json.dumps(frame)) == (expected,)
    assert OpenAIRealtimeCodec(OPENAI).decode(json.dumps(frame).encode()) == (expected,)  # binary frames too


def test_preview_and_xai_dialect_names() -> None:
    preview = OpenAIRealtimeCodec(AZURE_OPENAI_PREVIEW)
    assert preview.decode('{"type":"response.text.delta","delta":"a","response_id":"r","item_id":"i"}') == (
        ev.TextDelta("a", "r", "i"),)
    assert preview.decode(json.dumps({"type": "response.audio.delta", "delta": B64})) == (ev.AudioDelta(PCM),)
    assert preview.decode('{"type":"response.audio_transcript.done","transcript":"t"}') == (ev.TranscriptDone("t"),)
    assert preview.decode('{"type":"conversation.item.created","item":{}}') == (
        ev.ProviderNotice("conversation.item.created"),)
    with pytest.raises(UnknownRealtimeFrame, match="response.output_text.delta"):
        preview.decode('{"type":"response.output_text.delta","delta":"a"}')  # a GA name in a preview dialect
    with pytest.raises(UnknownRealtimeFrame):
        OpenAIRealtimeCodec(OPENAI).decode('{"type":"response.text.delta","delta":"a"}')

    xai = OpenAIRealtimeCodec(XAI)
    assert xai.decode('{"type":"conversation.created","conversation":{"id":"conv_1"}}') == (
        ev.SessionStarted("conv_1"),)
    assert xai.decode(json.dumps({"type": "response.function_call_arguments.done", "response_id": "r",
                                  "item_id": "i", "call_id": "c", "name": "weather", "arguments": "{}"})) == (
        ev.ToolCallRequested("c", "weather", "{}", "r", "i"),)
    item = {"type": "response.output_item.done", "item": {"type": "function_call", "call_id": "c",
                                                          "name": "weather", "arguments": "{}"}}
    assert xai.decode(json.dumps(item)) == (ev.ProviderNotice("response.output_item.done"),)  # not a second call
    with pytest.raises(UnknownRealtimeFrame):
        OpenAIRealtimeCodec(OPENAI).decode('{"type":"conversation.created","conversation":{}}')


MALFORMED: list[tuple[str, type[Exception]]] = [
    ("not json", RealtimeCodecError),
    ("[1, 2]", RealtimeCodecError),
    ('{"event_id": "e"}', UnknownRealtimeFrame),
    ('{"type": 7}', UnknownRealtimeFrame),
    ('{"type": "response.mcp_call.completed"}', UnknownRealtimeFrame),
    ('{"type": "session.updated"}', RealtimeCodecError),
    ('{"type": "error", "error": {"code": "x"}}', RealtimeCodecError),
    ('{"type": "response.output_text.delta", "delta": 5}', RealtimeCodecError),
    ('{"type": "response.output_text.delta", "delta": "a", "item_id": 3}', RealtimeCodecError),
    ('{"type": "response.output_audio.delta", "delta": "***"}', RealtimeCodecError),
    ('{"type": "response.created"}', RealtimeCodecError),
    ('{"type": "response.done", "response": {"status": "in_progress"}}', RealtimeCodecError),
    ('{"type": "response.done", "response": {"status": "completed", "usage": {"input_tokens": -1}}}',
     RealtimeCodecError),
    ('{"type": "response.done", "response": {"status": "completed", "usage": {"input_tokens": true}}}',
     RealtimeCodecError),
    ('{"type": "response.output_item.done", "item": {"type": "function_call", "name": "w", "arguments": "{}"}}',
     RealtimeCodecError),
    ('{"type": "conversation.item.input_audio_transcription.completed", "item_id": "i"}', RealtimeCodecError),
]


@pytest.mark.parametrize(("frame", "error"), MALFORMED, ids=[m[0][:40] for m in MALFORMED])
def test_openai_malformed_frames_fail(frame: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        OpenAIRealtimeCodec(OPENAI).decode(frame)


def test_frame_and_audio_bounds_at_the_limit_and_one_past() -> None:
    audio = b"\x01" * 30  # base64: 40 characters
    frame = json.dumps({"type": "response.output_audio.delta", "delta": base64.b64encode(audio).decode()})
    exact = OpenAIRealtimeCodec(OPENAI, limits=FrameLimits(max_audio_bytes=30))
    assert exact.decode(frame) == (ev.AudioDelta(audio),)
    with pytest.raises(RealtimeFrameTooLarge):
        OpenAIRealtimeCodec(OPENAI, limits=FrameLimits(max_audio_bytes=29)).decode(frame)
    size = len(frame.encode())
    assert OpenAIRealtimeCodec(OPENAI, limits=FrameLimits(max_frame_bytes=size)).decode(frame)
    with pytest.raises(RealtimeFrameTooLarge, match="max_frame_bytes"):
        OpenAIRealtimeCodec(OPENAI, limits=FrameLimits(max_frame_bytes=size - 1)).decode(frame)
    deep = '{"type": "rate_limits.updated", "x": ' + "[" * 5 + "]" * 5 + "}"
    with pytest.raises(RealtimeFrameTooLarge, match="JSON bounds"):
        OpenAIRealtimeCodec(OPENAI, limits=FrameLimits(max_depth=3)).decode(deep)


# -- Gemini Live ----------------------------------------------------------------------------------


def test_gemini_commands() -> None:
    codec = GeminiLiveCodec("gemini-live-2.5-flash")
    config = ev.ConfigureSession(instructions="be brief", tools=(TOOL,), output_modalities=("audio",),
                                 voice="Puck", transcribe_input=True)
    assert frames(codec, config) == [{"setup": {
        "model": "models/gemini-live-2.5-flash",
        "generationConfig": {"responseModalities": ["AUDIO"], "speechConfig": {
            "voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Puck"}}}},
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "tools": [{"functionDeclarations": [{"name": "weather", "description": "Weather for a city",
                                             "parameters": TOOL.parameters}]}],
        "inputAudioTranscription": {}, "outputAudioTranscription": {}, "sessionResumption": {}}}]
    assert frames(codec, ev.ConfigureSession(resume_handle="h1"))[0]["setup"] == {
        "model": "models/gemini-live-2.5-flash", "generationConfig": {"responseModalities": ["TEXT"]},
        "sessionResumption": {"handle": "h1"}}
    assert frames(GeminiLiveCodec("models/m", input_audio_rate=24_000), ev.AppendAudio(PCM)) == [
        {"realtimeInput": {"audio": {"mimeType": "audio/pcm;rate=24000", "data": B64}}}]
    assert frames(codec, ev.CommitAudio()) == [{"realtimeInput": {"audioStreamEnd": True}}]
    assert frames(codec, ev.SendText("hi")) == [
        {"clientContent": {"turns": [{"role": "user", "parts": [{"text": "hi"}]}], "turnComplete": True}}]
    assert frames(codec, ev.SendText("hi", respond=False))[0]["clientContent"]["turnComplete"] is False
    results = ev.SendToolResults((ev.ToolResult("c1", "weather", '{"t": 20}'), ev.ToolResult("c2", "weather", "[1]"),
                                  ev.ToolResult("c3", "weather", "plain")))
    assert frames(codec, results) == [{"toolResponse": {"functionResponses": [
        {"id": "c1", "name": "weather", "response": {"t": 20}},
        {"id": "c2", "name": "weather", "response": {"output": [1]}},
        {"id": "c3", "name": "weather", "response": {"output": "plain"}}]}}]
    assert codec.encode(ev.RequestResponse()) == ()
    for command in (ev.ClearAudio(), ev.CancelResponse()):
        with pytest.raises(RealtimeCodecError, match="no frame"):
            codec.encode(command)
    with pytest.raises(RealtimeCodecError, match="exactly one modality"):
        codec.encode(ev.ConfigureSession(output_modalities=("text", "audio")))
    with pytest.raises(RealtimeCodecError, match="not a realtime command"):
        codec.encode(ev.GoAway())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        GeminiLiveCodec("")


GEMINI_EVENTS: list[tuple[dict[str, Any], tuple[ev.ServerEvent, ...]]] = [
    ({"setupComplete": {}}, (ev.SessionConfigured(),)),
    ({"serverContent": {"modelTurn": {"parts": [{"text": "Hel"}, {"inlineData": {
        "mimeType": "audio/pcm;rate=24000", "data": B64}}]}}},
     (ev.TextDelta("Hel"), ev.AudioDelta(PCM))),
    ({"serverContent": {"inputTranscription": {"text": "what is"}, "outputTranscription": {"text": "It is"},
                        "generationComplete": True}},
     (ev.InputTranscript("what is"), ev.TranscriptDelta("It is"), ev.ProviderNotice("generationComplete"))),
    ({"serverContent": {"modelTurn": {"parts": [{"text": "thinking", "thought": True}]}}},
     (ev.ProviderNotice("thought"),)),
    ({"serverContent": {"interrupted": True}}, (ev.Interrupted(),)),
    ({"serverContent": {"turnComplete": True}, "usageMetadata": {
        "promptTokenCount": 12, "responseTokenCount": 30, "cachedContentTokenCount": 2, "totalTokenCount": 42,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 4}, {"modality": "AUDIO", "tokenCount": 8}],
        "responseTokensDetails": [{"modality": "AUDIO", "tokenCount": 30}]}},
     (ev.UsageReported(RequestUsage(input_tokens=12, output_tokens=30, cache_read_tokens=2,
                                    input_audio_tokens=8, output_audio_tokens=30)), ev.ResponseDone("completed"))),
    ({"usageMetadata": {"promptTokenCount": 1}}, (ev.UsageReported(RequestUsage(input_tokens=1)),)),
    ({"toolCall": {"functionCalls": [{"id": "fc1", "name": "weather", "args": {"city": "Oslo"}},
                                     {"id": "fc2", "name": "weather"}]}},
     (ev.ToolCallRequested("fc1", "weather", '{"city": "Oslo"}'), ev.ToolCallRequested("fc2", "weather", "{}"))),
    ({"toolCallCancellation": {"ids": ["fc1"]}}, (ev.ToolCallsCancelled(("fc1",)),)),
    ({"goAway": {"timeLeft": "10.5s"}}, (ev.GoAway(10.5),)),
    ({"goAway": {}}, (ev.GoAway(None),)),
    ({"sessionResumptionUpdate": {"newHandle": "h2", "resumable": True}}, (ev.ResumptionUpdate("h2", True),)),
    ({"sessionResumptionUpdate": {"resumable": False}}, (ev.ResumptionUpdate(None, False),)),
]


@pytest.mark.parametrize(("frame", "expected"), GEMINI_EVENTS, ids=[next(iter(f)) for f, _ in GEMINI_EVENTS])
def test_gemini_events(frame: dict[str, Any], expected: tuple[ev.ServerEvent, ...]) -> None:
    assert GeminiLiveCodec("m").decode(json.dumps(frame).encode()) == expected


GEMINI_MALFORMED: list[tuple[Any, type[Exception]]] = [
    ({}, UnknownRealtimeFrame),
    ({"somethingNew": {}}, UnknownRealtimeFrame),
    ({"setupComplete": {}, "toolCall": {"functionCalls": []}}, UnknownRealtimeFrame),
    ({"setupComplete": True}, RealtimeCodecError),
    ({"serverContent": {"newField": 1}}, UnknownRealtimeFrame),
    ({"serverContent": {"modelTurn": {"parts": [{"executableCode": {}}]}}}, UnknownRealtimeFrame),
    ({"serverContent": {"modelTurn": {"parts": [7]}}}, UnknownRealtimeFrame),
    ({"serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": "image/png", "data": B64}}]}}},
     UnknownRealtimeFrame),
    ({"serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": "audio/pcm", "data": "@@"}}]}}},
     RealtimeCodecError),
    ({"serverContent": {"turnComplete": "yes"}}, RealtimeCodecError),
    ({"serverContent": {"inputTranscription": {}}}, RealtimeCodecError),
    ({"toolCall": {"functionCalls": [{"id": "a", "name": "w", "args": [1]}]}}, RealtimeCodecError),
    ({"toolCall": {"functionCalls": [{"name": "w"}]}}, RealtimeCodecError),
    ({"toolCall": {}}, RealtimeCodecError),
    ({"toolCallCancellation": {"ids": [1]}}, RealtimeCodecError),
    ({"goAway": {"timeLeft": "soon"}}, RealtimeCodecError),
    ({"sessionResumptionUpdate": {"resumable": "yes"}}, RealtimeCodecError),
    ({"usageMetadata": {"promptTokenCount": -3}}, RealtimeCodecError),
    ({"usageMetadata": {"promptTokensDetails": {}}}, RealtimeCodecError),
    ([1], RealtimeCodecError),
]


@pytest.mark.parametrize(("frame", "error"), GEMINI_MALFORMED, ids=[json.dumps(m[0])[:40] for m in GEMINI_MALFORMED])
def test_gemini_malformed_frames_fail(frame: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        GeminiLiveCodec("m").decode(json.dumps(frame))


def test_audio_far_over_the_bound_is_refused_before_decoding() -> None:
    frame = json.dumps({"type": "response.output_audio.delta", "delta": "A" * 400})
    with pytest.raises(RealtimeFrameTooLarge, match="would exceed"):
        OpenAIRealtimeCodec(OPENAI, limits=FrameLimits(max_audio_bytes=100)).decode(frame)
    done = '{"type":"response.done","response":{"status":"completed","usage":{"input_tokens":null}}}'
    assert OpenAIRealtimeCodec(OPENAI).decode(done) == (ev.ResponseDone("completed", None, RequestUsage()),)


def test_importing_the_package_leaves_websockets_to_its_one_module() -> None:
    import subprocess
    import sys

    code = ("import sys, zigai.realtime, zigai.acp; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('websockets', 'acp')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"
