"""What the native routes share (zigai.providers._native): provider and client plumbing, and the
parts every native encoder must express the same way (capability loads, tool availability,
speech transcripts) or refuse with its named error before any I/O."""

from __future__ import annotations

from typing import Any

import pytest

from zigai.messages import (
    AudioContent,
    BytesSource,
    CapabilityLoadCallPart,
    CapabilityLoadReturnPart,
    CompactionPart,
    InstructionPart,
    RequestMessage,
    ResponseMessage,
    SpeechPart,
    SpeechPromptPart,
    ToolAvailabilityPart,
    ToolOutcome,
    UserPromptPart,
)
from zigai.model import ModelProfile, ModelRequest
from zigai.providers import bedrock, cohere, mistral
from zigai.providers._native import (
    NativeClient,
    NativeDecodeError,
    NativeProvider,
    availability_text,
    capability_result,
)

AUDIO = AudioContent(BytesSource(b"RIFF", "audio/wav"))


def _cohere(request: ModelRequest) -> Any:
    return cohere.encode_request(request, model_name="command-a-03-2025")["messages"]


def _mistral(request: ModelRequest) -> Any:
    return mistral.encode_request(request, model_name="mistral-small-latest")["inputs"]


def _bedrock(request: ModelRequest) -> Any:
    return bedrock.encode_request(request, model_id="anthropic.claude-sonnet-4-6")["messages"]


ENCODERS = {
    "cohere": (_cohere, cohere.CohereEncodeError),
    "mistral": (_mistral, mistral.MistralEncodeError),
    "bedrock": (_bedrock, bedrock.BedrockEncodeError),
}


def test_shared_helpers() -> None:
    assert availability_text(ToolAvailabilityPart(added=("a", "b"), removed=("c",))) == (
        "Tools now available: a, b\nTools no longer available: c")
    ok = CapabilityLoadReturnPart("t1", "cap", loaded=("cap",), instructions=("Use it.",))
    assert capability_result(ok) == ({"loaded": ["cap"], "instructions": ["Use it."]}, True)
    failed = CapabilityLoadReturnPart("t1", "cap", outcome=ToolOutcome.error, content="no such cap")
    assert capability_result(failed) == ("no such cap", False)
    bare = CapabilityLoadReturnPart("t1", "cap", outcome=ToolOutcome.denied)
    assert capability_result(bare) == ("denied", False)


@pytest.mark.parametrize("route", sorted(ENCODERS))
def test_exotic_parts_encode_on_every_native_route(route: str) -> None:
    encode, _ = ENCODERS[route]
    messages = (
        RequestMessage(parts=(
            UserPromptPart("load it"), InstructionPart("ignored here"),
            SpeechPromptPart(AUDIO, transcript="spoken words"),
            ToolAvailabilityPart(added=("web",)),
        )),
        ResponseMessage(parts=(CapabilityLoadCallPart("cap", "t1"), SpeechPart(transcript="said"))),
        RequestMessage(parts=(
            CapabilityLoadReturnPart("t1", "cap", loaded=("cap",), instructions=("Use it.",)),
        )),
        ResponseMessage(parts=()),
    )
    text = repr(encode(ModelRequest(messages=messages)))
    for expected in ("spoken words", "Tools now available: web", "said", "capability_id", "Use it."):
        assert expected in text, (route, expected)
    assert "ignored here" not in text


@pytest.mark.parametrize("route", sorted(ENCODERS))
@pytest.mark.parametrize("message", [
    RequestMessage(parts=(SpeechPromptPart(AUDIO),)),
    ResponseMessage(parts=(SpeechPart(audio=AUDIO),)),
    ResponseMessage(parts=(CompactionPart("summary"),)),
    RequestMessage(parts=(UserPromptPart((AUDIO,)),)),
])
def test_inexpressible_parts_raise_the_routes_encode_error(route: str, message: Any) -> None:
    encode, error = ENCODERS[route]
    with pytest.raises(error):
        encode(ModelRequest(messages=(message,)))


@pytest.mark.parametrize("route", sorted(ENCODERS))
def test_unknown_messages_are_refused(route: str) -> None:
    encode, error = ENCODERS[route]
    with pytest.raises(error):
        encode(ModelRequest(messages=("not a message",)))  # type: ignore[arg-type]


class _Provider(NativeProvider):
    __slots__ = ()
    provider_name = "sample"
    api_base = None


def test_provider_needs_a_root_and_client_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="base_url"):
        _Provider("key")
    provider = _Provider("key", base_url="https://api.example.com/v1")
    assert provider.api_root == "https://api.example.com/v1/"
    with pytest.raises(ValueError):
        NativeClient("", provider)
    with pytest.raises(TypeError):
        NativeClient("m", provider, settings={"max_tokens": 1})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        NativeClient("m", provider, profile="full")  # type: ignore[arg-type]
    client = NativeClient("m", provider)
    assert NativeClient.builtin_profile("m") is None
    assert client.profile.supports_tools is False  # fail-closed fallback
    assert repr(client) == "NativeClient(model_name='m', provider='sample')"
    explicit = ModelProfile()
    assert NativeClient("m", provider, profile=explicit).profile is explicit


def test_native_errors_pickle_with_their_path() -> None:
    import pickle

    error = NativeDecodeError("bad", path="$.x", status=200, request_id="r")
    clone = pickle.loads(pickle.dumps(error))
    assert (clone.path, clone.status, clone.request_id, str(clone)) == ("$.x", 200, "r", "bad")


def test_stream_decoder_base_dispatches_and_requires_its_terminal_event() -> None:
    from zigai.messages import TextPart
    from zigai.model import PartEndEvent
    from zigai.providers._native import NativeStreamDecoder
    from zigai.providers._wire import JsonReader
    from zigai.providers.sse import SseEvent

    class Decoder(NativeStreamDecoder):
        reader = JsonReader(NativeDecodeError)
        terminal = "done"

        def _text(self, payload: dict, path: str, out: list) -> None:
            index = self._keys.get("t")
            if index is None:
                index = self._start(TextPart(""), out, "t")
            self._grow(index, payload["text"], out)

        def _done(self, payload: dict, path: str, out: list) -> None:
            self._complete = True

    Decoder.handlers = {"text": Decoder._text, "done": Decoder._done}
    decoder = Decoder(None, "sample")
    assert decoder.provider_details is None
    assert decoder.feed(SseEvent("message", "")) == [] and decoder.feed(SseEvent("message", "[DONE]")) == []
    assert decoder.feed(SseEvent("message", '{"type":"unknown"}')) == []
    decoder.feed(SseEvent("message", '{"type":"text","text":"a"}'))
    decoder.feed(SseEvent("message", '{"type":"text","text":""}'))
    with pytest.raises(NativeDecodeError, match="before done"):
        decoder.finish()
    decoder.feed(SseEvent("done", "{}"))
    (end,) = decoder.finish()
    assert isinstance(end, PartEndEvent) and end.part == TextPart("a")
    with pytest.raises(NativeDecodeError) as caught:
        decoder.feed(SseEvent("message", "[1]"))
    assert caught.value.path == "$event[5]"
