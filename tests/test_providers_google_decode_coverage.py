"""Google GenerateContent decoding edges: finish reasons, audio token counts, inline data,
signature-only parts and malformed part fields, each with its documented neutral form."""

from __future__ import annotations

import base64

import pytest

from zigai.messages import BytesSource, FilePart, TextPart
from zigai.model import FinishReason
from zigai.providers import google as G
from zigai.providers.google._decode import decode_usage


def _parts(*parts: dict[str, object], finish: str | None = "STOP") -> dict[str, object]:
    candidate: dict[str, object] = {"content": {"role": "model", "parts": list(parts)}}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate]}


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (None, None),
        ("MALFORMED_FUNCTION_CALL", FinishReason.error),
        ("UNEXPECTED_TOOL_CALL", FinishReason.error),
        ("IMAGE_SAFETY", FinishReason.content_filter),
        ("LANGUAGE", FinishReason.other),
        ("SOMETHING_NEW", FinishReason.other),
    ],
)
def test_finish_reasons_map_to_the_neutral_reason(raw: str | None, reason: FinishReason | None) -> None:
    assert G.finish_reason(raw) is reason


def test_audio_tokens_count_only_audio_modalities_and_are_capped() -> None:
    usage = decode_usage({
        "promptTokenCount": 30, "candidatesTokenCount": 8,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 10},
                                {"modality": "AUDIO", "tokenCount": 20},
                                {"modality": "AUDIO", "tokenCount": True},  # not a count
                                "junk"],
        "candidatesTokensDetails": [{"modality": "AUDIO", "tokenCount": 50}],  # more than 8
    })
    assert (usage.input_audio_tokens, usage.output_audio_tokens) == (20, 8)
    assert decode_usage(None).input_tokens == 0


def test_inline_data_becomes_a_file_part_and_bad_base64_is_a_named_error() -> None:
    png = b"\x89PNG\r\n"
    inline = {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(png).decode()}}
    (part,) = G.decode_response(_parts(inline)).parts
    assert isinstance(part, FilePart) and part.source == BytesSource(png, "image/png")
    with pytest.raises(G.GoogleDecodeError) as info:
        G.decode_response(_parts({"inlineData": {"mimeType": "image/png", "data": "@@not base64@@"}}))
    assert info.value.path == "$.candidates[0].content.parts[0].inlineData.data"


def test_function_call_arguments_must_be_an_object() -> None:
    with pytest.raises(G.GoogleDecodeError) as info:
        G.decode_response(_parts({"functionCall": {"name": "f", "args": [1, 2]}}))
    assert info.value.path == "$.candidates[0].content.parts[0].functionCall.args"


def test_a_signature_only_part_attaches_to_the_text_before_it() -> None:
    response = G.decode_response(_parts({"text": "Hi"}, {"thoughtSignature": "SIG"}))
    (part,) = response.parts
    assert isinstance(part, TextPart) and part.content == "Hi"
    assert part.provider is not None and dict(part.provider.details or {}) == {"thought_signature": "SIG"}


def test_empty_text_without_a_signature_adds_no_part() -> None:
    assert G.decode_response(_parts({"text": ""}, {"text": "x"})).parts == (TextPart("x"),)


def test_a_candidate_without_content_still_reports_its_finish() -> None:
    response = G.decode_response({"candidates": [{"finishReason": "MAX_TOKENS"}]})
    assert response.parts == () and response.finish_reason is FinishReason.length


def test_unknown_part_kinds_are_kept_verbatim_in_provider_details() -> None:
    response = G.decode_response(_parts({"text": "a"}, {"videoMetadata": {"fps": 2}}))
    assert response.parts == (TextPart("a"),)
    assert response.provider_details is not None
    (kept,) = response.provider_details["parts"]
    assert dict(kept) == {"videoMetadata": {"fps": 2}}
