"""Gemini GenerateContent responses -> neutral values (pure functions and a stream state machine).

Part rule (identical for buffered and streamed answers, so both give the same message):
consecutive text parts of one kind (thought / not thought) merge into one neutral part; a
``thoughtSignature`` attaches to the part being built (a second signature starts a new part).
Thought parts become ``ThinkingPart`` with ``signature``; text and function calls keep their
signature in ``ProviderPart.details["thought_signature"]`` under the client's provider name.
A function call without an ``id`` gets ``google-call-<n>`` (``n`` counts calls in the response);
that id is what the next request sends back.

Code execution (the managed ``code_execution`` tool): ``executableCode`` becomes a
``NativeToolCallPart`` named ``code_execution`` with ``{"language", "code"}`` arguments and
``codeExecutionResult`` the matching ``NativeToolReturnPart`` with ``{"outcome", "output"}``
content (outcome ``success`` only for ``OUTCOME_OK``).  A result without an ``id`` belongs to
the code part before it; ids Gemini did not send are synthesized as ``google-code-<n>`` and
marked so that replay never sends them back.

Nothing else is dropped either: the candidate's ``groundingMetadata`` (search queries and
sources), ``citationMetadata`` (citation sources, gathered across streamed chunks) and
``urlContextMetadata`` go to ``ResponseMessage.provider_details`` as ``grounding_metadata``,
``citation_metadata`` and ``url_context_metadata``; parts of kinds without a neutral form are
kept verbatim there under ``parts``.

Usage: ``promptTokenCount`` (+ ``toolUsePromptTokenCount``) is input and already includes
``cachedContentTokenCount`` (cache reads); Gemini reports ``thoughtsTokenCount`` SEPARATELY
from ``candidatesTokenCount``, so output = candidates + thoughts and reasoning = thoughts.
Audio modality counts become audio subsets.  Finish reasons: ``STOP`` with a function call is
``tool_call``; safety-family reasons are ``content_filter``; the raw value is kept.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace
from typing import Any

from zigai import json as zjson
from zigai.messages import (
    BytesSource,
    FilePart,
    FinishReason,
    NativeToolCallPart,
    NativeToolReturnPart,
    ProviderDetails,
    ProviderPart,
    ResponseMessage,
    ResponsePart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolOutcome,
)
from zigai.model import (
    ModelStreamEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    ReplacePartDelta,
    TextPartDelta,
    ThinkingPartDelta,
)
from zigai.model.stream import GrowingParts
from zigai.providers._wire import JsonReader, details_or_none
from zigai.providers.google._encode import CODE_EXECUTION, SIGNATURE_KEY, SYNTHESIZED_ID_KEY
from zigai.providers.google._errors import GoogleDecodeError
from zigai.providers.sse import SseEvent
from zigai.usage import RequestUsage, UsageDetails

__all__ = ["PartBuilder", "StreamDecoder", "decode_response", "decode_usage", "finish_reason"]

_read = JsonReader(GoogleDecodeError)

# Candidate fields kept in ``ResponseMessage.provider_details`` (wire name, details key).
_METADATA_KEYS = (
    ("groundingMetadata", "grounding_metadata"),
    ("citationMetadata", "citation_metadata"),
    ("urlContextMetadata", "url_context_metadata"),
)

_FILTERED = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
             "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION"}


def finish_reason(raw: str | None, has_tool_call: bool = False) -> FinishReason | None:
    if raw is None:
        return None
    if raw == "STOP":
        return FinishReason.tool_call if has_tool_call else FinishReason.stop
    if raw == "MAX_TOKENS":
        return FinishReason.length
    if raw in _FILTERED:
        return FinishReason.content_filter
    if raw in ("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"):
        return FinishReason.error
    return FinishReason.other


def _modality(details: list[Any] | None, modality: str) -> int:
    total = 0
    for item in details or ():
        if isinstance(item, dict) and item.get("modality") == modality:
            count = item.get("tokenCount")
            if isinstance(count, int) and not isinstance(count, bool) and count > 0:
                total += count
    return total


def decode_usage(meta: dict[str, Any] | None, path: str = "$.usageMetadata") -> RequestUsage:
    if meta is None:
        return RequestUsage()
    prompt = _read.opt_int(meta, "promptTokenCount", path) or 0
    tool_prompt = _read.opt_int(meta, "toolUsePromptTokenCount", path) or 0
    cached = _read.opt_int(meta, "cachedContentTokenCount", path) or 0
    candidates = _read.opt_int(meta, "candidatesTokenCount", path) or 0
    thoughts = _read.opt_int(meta, "thoughtsTokenCount", path) or 0
    input_tokens = prompt + tool_prompt
    details = {"toolUsePromptTokenCount": tool_prompt} if tool_prompt else {}
    return RequestUsage(
        input_tokens=input_tokens,
        output_tokens=candidates + thoughts,
        cache_read_tokens=min(cached, input_tokens),
        input_audio_tokens=min(_modality(meta.get("promptTokensDetails"), "AUDIO"), input_tokens),
        output_audio_tokens=min(_modality(meta.get("candidatesTokensDetails"), "AUDIO"), candidates),
        reasoning_tokens=thoughts,
        details=UsageDetails(details),
    )


class PartBuilder:
    """Turns Gemini parts (in order, across chunks) into neutral part events."""

    def __init__(self, provider_name: str) -> None:
        self.provider_name = provider_name
        self.parts = GrowingParts()
        self._open: int | None = None  # index of the text/thinking part still growing
        self._calls = 0
        self._code_runs = 0
        self._last_code: tuple[str, bool] | None = None  # (id, synthesized) of the last code part
        self.unknown: list[dict[str, Any]] = []  # parts of kinds with no neutral form, verbatim

    def _details(self, signature: str | None) -> ProviderPart | None:
        if signature is None:
            return None
        return ProviderPart(self.provider_name, details=ProviderDetails({SIGNATURE_KEY: signature}))

    def _code_provider(self, signature: str | None, synthesized: bool) -> ProviderPart:
        details: dict[str, Any] = {}
        if signature is not None:
            details[SIGNATURE_KEY] = signature
        if synthesized:
            details[SYNTHESIZED_ID_KEY] = True
        return ProviderPart(self.provider_name, details=details_or_none(details))

    def _code_call(self, item: dict[str, Any], signature: str | None, path: str) -> ResponsePart:
        code = _read.field_obj(item, "executableCode", path)
        where = f"{path}.executableCode"
        call_id = _read.opt_str(code, "id", where)
        synthesized = not call_id
        if not call_id:
            call_id = f"google-code-{self._code_runs}"
        self._code_runs += 1
        self._last_code = (call_id, synthesized)
        args = {"language": _read.opt_str(code, "language", where) or "PYTHON",
                "code": _read.str_(code, "code", where)}
        return NativeToolCallPart(CODE_EXECUTION, call_id, self._code_provider(signature, synthesized),
                                  args=zjson.dumps(args))

    def _code_result(self, item: dict[str, Any], signature: str | None, path: str) -> ResponsePart:
        result = _read.field_obj(item, "codeExecutionResult", path)
        where = f"{path}.codeExecutionResult"
        outcome = _read.str_(result, "outcome", where)
        content: dict[str, Any] = {"outcome": outcome}
        output = _read.opt_str(result, "output", where)
        if output is not None:
            content["output"] = output
        call_id = _read.opt_str(result, "id", where)
        synthesized = False
        if not call_id:
            if self._last_code is None:
                raise _read.fail(where, "a code execution result without a code part before it")
            call_id, synthesized = self._last_code
        return NativeToolReturnPart(
            CODE_EXECUTION, call_id, self._code_provider(signature, synthesized), content=content,
            outcome=ToolOutcome.success if outcome == "OUTCOME_OK" else ToolOutcome.error,
        )

    def _close(self, out: list[ModelStreamEvent]) -> None:
        if self._open is not None:
            out.append(PartEndEvent(self._open, self.parts[self._open]))
            self._open = None

    def _start(self, part: ResponsePart, out: list[ModelStreamEvent], *, keep_open: bool) -> None:
        self._close(out)
        index = self.parts.append(part)
        out.append(PartStartEvent(index, part))
        if keep_open:
            self._open = index
        else:
            out.append(PartEndEvent(index, part))

    def feed(self, raw: Any, path: str) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        item = _read.obj(raw, path)
        signature = _read.opt_str(item, "thoughtSignature", path) or None
        text = _read.opt_str(item, "text", path)
        if text is not None:
            thought = item.get("thought") is True
            self._text(text, thought, signature, out)
        elif "functionCall" in item:
            call = _read.field_obj(item, "functionCall", path)
            args = call.get("args")
            if args is not None and not isinstance(args, dict):
                raise _read.fail(f"{path}.functionCall.args", "expected an object")
            call_id = _read.opt_str(call, "id", f"{path}.functionCall") or f"google-call-{self._calls}"
            self._calls += 1
            part: ResponsePart = ToolCallPart(
                tool_name=_read.str_(call, "name", f"{path}.functionCall"),
                args=zjson.dumps(args or {}), tool_call_id=call_id,
                provider=self._details(signature),
            )
            self._start(part, out, keep_open=False)
        elif "inlineData" in item:
            blob = _read.field_obj(item, "inlineData", path)
            try:
                data = base64.b64decode(_read.str_(blob, "data", f"{path}.inlineData"), validate=True)
            except (binascii.Error, ValueError):
                raise _read.fail(f"{path}.inlineData.data", "invalid base64") from None
            part = FilePart(BytesSource(data, _read.str_(blob, "mimeType", f"{path}.inlineData")),
                            provider=self._details(signature))
            self._start(part, out, keep_open=False)
        elif "executableCode" in item:
            self._start(self._code_call(item, signature, path), out, keep_open=False)
        elif "codeExecutionResult" in item:
            self._start(self._code_result(item, signature, path), out, keep_open=False)
        elif signature is not None and len(item) == 1:
            self._text("", False, signature, out)
        else:  # a part kind with no neutral form: kept verbatim in provider_details["parts"]
            self.unknown.append(item)
        return out

    def _text(self, text: str, thought: bool, signature: str | None,
              out: list[ModelStreamEvent]) -> None:
        current = self.parts.base(self._open) if self._open is not None else None
        kind = ThinkingPart if thought else TextPart
        if isinstance(current, kind) and self._open is not None:
            existing = (current.signature if isinstance(current, ThinkingPart)
                        else _signature_of(current))
            if signature is None or existing is None:
                index = self._open
                if text:
                    delta: Any = (ThinkingPartDelta(text) if thought else TextPartDelta(text))
                    out.append(PartDeltaEvent(index, delta))
                    self.parts.grow(index, text)
                if signature is not None:
                    grown: Any = self.parts[index]
                    updated = (replace(grown, signature=signature) if thought
                               else replace(grown, provider=self._details(signature)))
                    self.parts[index] = updated
                    out.append(PartDeltaEvent(index, ReplacePartDelta(updated)))
                return
        if not thought and not text and signature is None:
            return
        part: ResponsePart
        if thought:
            part = ThinkingPart(text, signature=signature, provider=ProviderPart(self.provider_name))
        else:
            part = TextPart(text, provider=self._details(signature))
        self._start(part, out, keep_open=True)

    def finish(self) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        self._close(out)
        return out

    @property
    def has_tool_call(self) -> bool:
        return any(isinstance(self.parts.base(i), ToolCallPart) for i in self.parts)


def _signature_of(part: TextPart) -> str | None:
    if part.provider is None or part.provider.details is None:
        return None
    value = part.provider.details.get(SIGNATURE_KEY)
    return value if isinstance(value, str) else None


class _Chunks:
    """State shared by buffered and streamed decoding of GenerateContent documents."""

    def __init__(self, provider_name: str, model_name: str | None) -> None:
        self.builder = PartBuilder(provider_name)
        self.model_name = model_name
        self.response_id: str | None = None
        self.usage = RequestUsage()
        self.finish_reason: FinishReason | None = None
        self.raw_finish_reason: str | None = None
        self.blocked: str | None = None
        self.metadata: dict[str, Any] = {}  # candidate grounding / citation / URL-context data

    @property
    def provider_details(self) -> ProviderDetails | None:
        """Candidate metadata and unknown parts; the same for buffered and streamed answers."""
        details = dict(self.metadata)
        if self.builder.unknown:
            details["parts"] = self.builder.unknown
        return details_or_none(details)

    def _keep_metadata(self, candidate: dict[str, Any], where: str) -> None:
        for key, name in _METADATA_KEYS:
            value = _read.opt_obj(candidate, key, where)
            if value is None:
                continue
            if key == "citationMetadata":  # streamed answers cite per chunk: gather them all
                sources = _read.opt_arr(value, "citationSources", f"{where}.{key}") or []
                kept = self.metadata.setdefault(name, {"citationSources": []})
                kept["citationSources"].extend(sources)
            else:  # grounding and URL context describe the whole answer: the latest wins
                self.metadata[name] = value

    def chunk(self, value: Any, path: str) -> list[ModelStreamEvent]:
        body = _read.obj(value, path)
        out: list[ModelStreamEvent] = []
        candidates = _read.opt_arr(body, "candidates", path)
        if candidates:
            candidate = _read.obj(candidates[0], f"{path}.candidates[0]")
            where = f"{path}.candidates[0]"
            content = _read.opt_obj(candidate, "content", where)
            if content is not None:
                parts = _read.opt_arr(content, "parts", f"{where}.content") or []
                for index, item in enumerate(parts):
                    out.extend(self.builder.feed(item, f"{where}.content.parts[{index}]"))
            raw = _read.opt_str(candidate, "finishReason", where)
            if raw is not None:
                self.raw_finish_reason = raw
            self._keep_metadata(candidate, where)
        feedback = _read.opt_obj(body, "promptFeedback", path)
        if feedback is not None:
            self.blocked = _read.opt_str(feedback, "blockReason", f"{path}.promptFeedback")
        meta = _read.opt_obj(body, "usageMetadata", path)
        if meta is not None:
            self.usage = decode_usage(meta, f"{path}.usageMetadata")
        self.response_id = _read.opt_str(body, "responseId", path) or self.response_id
        self.model_name = _read.opt_str(body, "modelVersion", path) or self.model_name
        self._finish()
        return out

    def _finish(self) -> None:
        if self.raw_finish_reason is not None:
            self.finish_reason = finish_reason(self.raw_finish_reason, self.builder.has_tool_call)
        elif self.blocked is not None:
            self.raw_finish_reason = self.blocked
            self.finish_reason = FinishReason.content_filter


def decode_response(
    value: Any, *, provider_name: str = "gcp.gen_ai", model_name: str | None = None
) -> ResponseMessage:
    """A buffered GenerateContent response (already JSON-decoded) as a ResponseMessage."""
    body = _read.obj(value, "$")
    if not body.get("candidates") and not isinstance(body.get("promptFeedback"), dict):
        _read.arr(body.get("candidates"), "$.candidates")
        raise _read.fail("$.candidates", "no candidate and no prompt feedback")
    state = _Chunks(provider_name, model_name)
    state.chunk(body, "$")
    state.builder.finish()
    return ResponseMessage(
        parts=tuple(state.builder.parts.values()),
        usage=state.usage,
        model_name=state.model_name,
        provider_name=provider_name,
        provider_response_id=state.response_id,
        finish_reason=state.finish_reason,
        raw_finish_reason=state.raw_finish_reason,
        provider_details=state.provider_details,
    )


class StreamDecoder(_Chunks):
    """``streamGenerateContent?alt=sse`` chunks -> model stream events (pure: no I/O)."""

    def __init__(self, provider_name: str = "gcp.gen_ai", model_name: str | None = None) -> None:
        super().__init__(provider_name, model_name)
        self._seen = False

    def feed(self, event: SseEvent) -> list[ModelStreamEvent]:
        self._seen = True
        return self.chunk(_read.parse(event.data, "$chunk"), "$chunk")

    def finish(self) -> list[ModelStreamEvent]:
        if not self._seen:
            raise _read.fail("$stream", "stream ended without any chunk")
        out = self.builder.finish()
        self._finish()
        return out
