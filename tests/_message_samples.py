"""One instance of every part and content kind, shared by the message and history tests."""

from __future__ import annotations

from datetime import UTC, datetime

from zigai import messages as m
from zigai.usage import RequestUsage

STAMP = datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
DETAILS = m.ProviderDetails.from_value({"signature": "sig", "nested": {"list": [1, 2.5, None]}})
PROVIDER = m.ProviderPart("openai", id="item_1", details=DETAILS)
UPLOADED = m.UploadedFile("anthropic", "file_123", media_type="application/pdf")


def all_sources() -> list[m.MediaSource]:
    return [
        m.BytesSource(b"\x89PNG\x00\xff", "image/png"),
        m.UrlSource("https://example.com/cat.png", media_type="image/png"),
        m.UrlSource("https://example.com/any"),
        m.ProviderFileSource("file-legacy", media_type="audio/wav"),
        UPLOADED,
    ]


def all_user_content() -> list[m.UserContent]:
    sources = all_sources()
    return [
        m.TextContent("hello"),
        m.TaggedText("context", "some context"),
        *[m.ImageContent(s, detail="high") for s in sources],
        m.ImageContent(sources[1]),
        m.AudioContent(sources[0]),
        m.VideoContent(sources[1]),
        m.DocumentContent(sources[4], title="Report"),
        m.DocumentContent(sources[2]),
        m.BinaryContent(b"\x00\x01binary", "application/octet-stream"),
        m.UploadedFileContent(UPLOADED),
        m.CachePoint(),
        m.CachePoint(ttl="1h"),
    ]


def all_request_parts() -> list[m.RequestPart]:
    return [
        m.SystemPromptPart("Be brief.", timestamp=STAMP),
        m.UserPromptPart("plain text"),
        m.UserPromptPart(tuple(all_user_content()), timestamp=STAMP),
        m.RetryPromptPart("fix it", tool_name="get_weather", tool_call_id="call_1"),
        m.RetryPromptPart("output invalid"),
        m.InstructionPart("Answer in French.", dynamic=True, timestamp=STAMP),
        m.SpeechPromptPart(m.AudioContent(m.BytesSource(b"RIFF", "audio/wav")), transcript="hi"),
        m.ToolAvailabilityPart(added=("search",), removed=("old",), tool_call_id="call_9"),
        m.ToolReturnPart("get_weather", "call_1", {"temp": 21.5, "tags": ["a", "b"], "ok": True},
                         timestamp=STAMP, metadata=m.Metadata.from_value({"trace": "t1"})),
        m.ToolReturnPart("get_weather", "call_2", "denied by user", outcome="denied"),
        m.CapabilityLoadReturnPart("call_3", "billing", loaded=("auth", "billing"),
                                   instructions=("Use auth.", "Use billing.")),
        m.CapabilityLoadReturnPart("call_4", "ghost", outcome=m.ToolOutcome.error,
                                   content="unknown capability"),
    ]


def all_response_parts() -> list[m.ResponsePart]:
    return [
        m.TextPart("Hello there", id="msg_1", provider=PROVIDER),
        m.TextPart(""),
        m.ThinkingPart("hmm", id="rs_1", signature="c2ln", provider=PROVIDER),
        m.CompactionPart("summary so far", id="cmp_1", provider=PROVIDER),
        m.CompactionPart(),
        m.FilePart(m.BytesSource(b"\x89PNG", "image/png"), id="img_1",
                   provider=m.ProviderPart("google", details=m.ProviderDetails.from_value(
                       {"thoughtSignature": "abc"}))),
        m.SpeechPart(audio=m.AudioContent(m.BytesSource(b"OggS", "audio/ogg")), transcript="hi"),
        m.SpeechPart(transcript="only words"),
        m.ToolCallPart("get_weather", '{"city": "Paris"}', "call_1", id="fc_1", provider=PROVIDER),
        m.NativeToolCallPart("web_search", "ws_1", m.ProviderPart("openai"), args='{"q":"x"}'),
        m.NativeToolReturnPart("web_search", "ws_1", m.ProviderPart("openai", id="ws_1"),
                               content=[{"url": "https://example.com"}]),
        m.ToolSearchCallPart("ts_1", args='{"query": "billing"}'),
        m.ToolSearchReturnPart("ts_1", tool_names=("pay", "refund"), provider=PROVIDER),
        m.CapabilityLoadCallPart("billing", "call_3"),
    ]


def every_kind_history() -> tuple[m.Message, ...]:
    """A conversation holding every part kind, every content kind and every source kind."""
    return (
        m.RequestMessage(all_request_parts()[:3], instructions="Be nice.", timestamp=STAMP,
                         metadata=m.Metadata.from_value({"user": "u1"})),
        m.ResponseMessage(
            all_response_parts(),
            usage=RequestUsage(input_tokens=100, output_tokens=50, cache_read_tokens=20,
                               cache_write_tokens=10, input_audio_tokens=5,
                               output_audio_tokens=4, reasoning_tokens=7,
                               details={"server_tool_use": 1}),
            model_name="gpt-5-mini",
            provider_name="openai",
            provider_response_id="resp_1",
            finish_reason=m.FinishReason.tool_call,
            raw_finish_reason="tool_calls",
            timestamp=STAMP,
            provider_details=m.ProviderDetails.from_value({"service_tier": "default"}),
            metadata=m.Metadata.from_value({"cost": 0}),
        ),
        m.RequestMessage(all_request_parts()[3:]),
        m.ResponseMessage([m.TextPart("done")], finish_reason=m.FinishReason.stop),
    )
