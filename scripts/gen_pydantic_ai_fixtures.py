"""Generate the PydanticAI 2.31.0 stable-v2 golden fixtures for ``zigai.codecs.pydantic_ai``.

Run with the peer venv that has the real library installed (never a runtime
dependency of zigai)::

    /work/peer-venv/bin/python scripts/gen_pydantic_ai_fixtures.py [OUT_DIR]

What "stable-v2 JSON" means here
--------------------------------
PydanticAI 2.31.0 has no separately versioned or "stable" serializer for
message history: ``pydantic_ai.messages`` exposes exactly one persistence
entry point, ``ModelMessagesTypeAdapter`` (a ``TypeAdapter(list[ModelMessage])``
configured with ``ser_json_bytes='base64'``), and the library's message-history
documentation stores and loads histories through its ``dump_json`` /
``validate_json``.  So every fixture below is built from real library objects
and serialized with ``ModelMessagesTypeAdapter.dump_json``; nothing is
hand-written JSON.

Coverage is checked, not hoped for: the script reads the request-part,
response-part and user-content unions from the installed library and exits
with status 1 if any member has no fixture builder here.  A typed tool part
(``tool-call`` + ``tool_kind='tool-search'`` ...) is recorded as
``<part_kind>/<tool_kind>``.

Canonical formatting (must match ``zigai.codecs.pydantic_ai.stringify``):
``json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False,
allow_nan=False)`` followed by one ``\\n`` when written to a file.

Outputs ``tests/fixtures/pydantic_ai/<kind>.json`` (one per kind, each a full
message list) plus ``conversation.json`` (everything combined in one history)
and ``MANIFEST.json`` (library version, kinds covered, kind -> fixture file).
Timestamps, ids and generated identifiers are fixed so that regenerating is
deterministic.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, get_args

REQUIRED_VERSION = "2.31.0"
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "pydantic_ai"


def _check_version() -> None:
    try:
        installed = importlib.metadata.version("pydantic-ai-slim")
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed != REQUIRED_VERSION:
        sys.stderr.write(
            f"gen_pydantic_ai_fixtures: needs pydantic-ai-slim=={REQUIRED_VERSION} exactly, "
            f"found {installed or 'none'}; run it with /work/peer-venv/bin/python\n"
        )
        raise SystemExit(2)


_check_version()

import pydantic_ai.messages as m  # noqa: E402  (only after the version gate)
from pydantic_ai.usage import RequestUsage  # noqa: E402

T0 = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
T1 = datetime(2026, 1, 2, 3, 4, 6, tzinfo=UTC)
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"  # contains bytes that differ in base64url


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)


def _request(*parts: Any, **kw: Any) -> m.ModelRequest:
    kw.setdefault("timestamp", T0)
    return m.ModelRequest(parts=list(parts), **kw)


def _response(*parts: Any, **kw: Any) -> m.ModelResponse:
    kw.setdefault("timestamp", T1)
    kw.setdefault("model_name", "test-model")
    return m.ModelResponse(parts=list(parts), **kw)


def _user(content: Any) -> m.ModelRequest:
    return _request(m.UserPromptPart(content, timestamp=T0))


# ---- builders: kind -> message list ---------------------------------------------------------

def b_user_str() -> list[Any]:
    return [_user("plain string prompt with ünïcode ✓ and \"quotes\"")]


def b_text_content() -> list[Any]:
    return [_user(["before", m.TextContent("tagged text", metadata={"source": "app", "n": [1, 2.5]})])]


def b_image_url() -> list[Any]:
    return [_user([m.ImageUrl("https://example.com/cat.png", vendor_metadata={"detail": "high"})])]


def b_audio_url() -> list[Any]:
    return [_user([m.AudioUrl("https://example.com/a.mp3", force_download=True)])]


def b_document_url() -> list[Any]:
    return [_user([m.DocumentUrl("https://example.com/d", media_type="application/pdf",
                                 identifier="doc-1", force_download="allow-local")])]


def b_video_url() -> list[Any]:
    return [_user([m.VideoUrl("https://youtu.be/abc")])]


def b_binary() -> list[Any]:
    return [_user(["look", m.BinaryContent(PNG, media_type="image/png", identifier="img-1")])]


def b_uploaded_file() -> list[Any]:
    return [_user([m.UploadedFile("file-abc123", "openai", media_type="application/pdf")])]


def b_cache_point() -> list[Any]:
    return [_user(["long context", m.CachePoint(ttl="1h"), "question"])]


def b_system_prompt() -> list[Any]:
    return [_request(m.SystemPromptPart("Be terse.", timestamp=T0, dynamic_ref="sys_fn"),
                     m.UserPromptPart("hi", timestamp=T0))]


def b_tool_call_and_return() -> list[Any]:
    return [
        _user("weather?"),
        _response(
            m.ToolCallPart("get_weather", {"city": "Paris", "days": 2}, tool_call_id="call_1"),
            m.ToolCallPart("get_time", '{"tz": "UTC"}', tool_call_id="call_2", id="item_2"),
            m.ToolCallPart("noop", None, tool_call_id="call_3"),
            finish_reason="tool_call",
        ),
        _request(
            m.ToolReturnPart("get_weather", {"temp": 21.5, "sky": ["sun"]}, tool_call_id="call_1",
                             timestamp=T0, metadata={"cached": True}),
            m.ToolReturnPart("get_time", "12:00", tool_call_id="call_2", timestamp=T0, outcome="failed"),
            m.ToolReturnPart("noop", None, tool_call_id="call_3", timestamp=T0, outcome="denied"),
        ),
    ]


def b_tool_return_rich() -> list[Any]:
    rich = [
        "see image",
        m.BinaryContent(PNG, media_type="image/png"),
        m.ImageUrl("https://example.com/x.webp"),
        {"nested": {"doc": m.DocumentUrl("https://example.com/r.pdf")}, "kind": "binary"},
    ]
    return [
        _response(m.ToolCallPart("render", {}, tool_call_id="call_r")),
        _request(m.ToolReturnPart("render", rich, tool_call_id="call_r", timestamp=T0,
                                  outcome="interrupted")),
    ]


def b_retry_prompt() -> list[Any]:
    errors = [
        {"type": "missing", "loc": ("city",), "msg": "Field required", "input": {"c": 1}},
        {"type": "int_parsing", "loc": ("days", 0), "msg": "Input should be a valid integer",
         "input": "x", "ctx": {"error": "bad"}, "url": "https://errors.pydantic.dev/2/v/int_parsing"},
    ]
    return [
        _response(m.ToolCallPart("get_weather", {"c": 1}, tool_call_id="call_9")),
        _request(
            m.RetryPromptPart(errors, tool_name="get_weather", tool_call_id="call_9", timestamp=T0),
            m.RetryPromptPart("Please answer in JSON.", tool_call_id="retry_free", timestamp=T0),
        ),
    ]


def b_tool_availability_delta() -> list[Any]:
    return [_request(m.ToolAvailabilityDeltaPart(tools_added=["a", "b"], tool_call_id="call_s"))]


def b_speech() -> list[Any]:
    return [
        _request(m.SpeechPart(speaker="user", transcript="hello there",
                              audio=m.BinaryContent(b"RIFF\x00\x01", media_type="audio/wav"))),
        _response(m.SpeechPart(speaker="assistant", transcript="hi", interrupted_at_ms=1500,
                               id="sp_1", provider_name="openai", provider_details={"voice": "alloy"}),
                  state="interrupted"),
    ]


def b_text() -> list[Any]:
    return [_response(m.TextPart("Hello!", id="msg_1", provider_name="openai",
                                 provider_details={"logprobs": [-0.1, -2.5]}),
                      finish_reason="stop")]


def b_thinking() -> list[Any]:
    return [_response(m.ThinkingPart("let me think", signature="sig==", id="th_1",
                                     provider_name="anthropic"),
                      m.ThinkingPart(""), m.TextPart("42"))]


def b_compaction() -> list[Any]:
    return [_response(m.CompactionPart(content="summary of earlier turns", id="cmp_1",
                                       provider_name="openai", provider_details={"encrypted": "abc"}))]


def b_file() -> list[Any]:
    return [_response(m.FilePart(m.BinaryContent(PNG, media_type="image/png"), id="f_1",
                                 provider_name="google"))]


def b_builtin_tool() -> list[Any]:
    return [_response(
        m.NativeToolCallPart("web_search", {"query": "zig"}, tool_call_id="bt_1", provider_name="openai"),
        m.NativeToolReturnPart("web_search", [{"title": "Zig", "url": "https://ziglang.org"}],
                               tool_call_id="bt_1", timestamp=T1, provider_name="openai",
                               provider_details={"status": "completed"}),
        m.NativeToolCallPart("code_execution", '{"code": "1+1"}', tool_call_id="bt_2"),
        m.NativeToolReturnPart("code_execution", "2", tool_call_id="bt_2", timestamp=T1,
                               outcome="failed"),
    )]


def b_tool_search() -> list[Any]:
    return [
        _response(m.ToolSearchCallPart(args={"queries": ["weather"]}, tool_call_id="ts_1")),
        _request(m.ToolSearchReturnPart(
            content={"discovered_tools": [{"name": "get_weather"}]}, tool_call_id="ts_1", timestamp=T0)),
    ]


def b_native_tool_search() -> list[Any]:
    return [_response(
        m.NativeToolSearchCallPart(args={"queries": ["time"]}, tool_call_id="nts_1",
                                   provider_name="anthropic"),
        m.NativeToolSearchReturnPart(content={"discovered_tools": [], "message": "no match"},
                                     tool_call_id="nts_1", timestamp=T1, provider_name="anthropic"),
    )]


def b_capability_load() -> list[Any]:
    return [
        _response(m.LoadCapabilityCallPart(args={"id": "billing"}, tool_call_id="cap_1")),
        _request(m.LoadCapabilityReturnPart(content={"instructions": "Use invoices."},
                                            tool_call_id="cap_1", timestamp=T0)),
    ]


def b_request_fields() -> list[Any]:
    return [_request(m.UserPromptPart("hi", timestamp=T0), instructions="Reply in French.",
                     run_id="run-1", conversation_id="conv-1",
                     metadata={"tenant": "acme", "tags": ["a"], "score": 0.5}, state="interrupted")]


def b_request_null_timestamp() -> list[Any]:
    return [m.ModelRequest(parts=[m.UserPromptPart("no request timestamp", timestamp=T0)])]


def b_response_fields() -> list[Any]:
    usage = RequestUsage(input_tokens=120, output_tokens=30, cache_read_tokens=100, cache_write_tokens=7,
                         input_audio_tokens=3, output_audio_tokens=4, cache_audio_read_tokens=2,
                         details={"reasoning_tokens": 12, "accepted_prediction_tokens": 0},
                         cost=Decimal("0.000123"))
    return [_response(m.TextPart("done"), usage=usage, provider_name="openai",
                      provider_url="https://api.openai.com/v1", provider_response_id="resp_1",
                      provider_details={"finish_reason": "stop", "system_fingerprint": None},
                      finish_reason="length", run_id="run-1", conversation_id="conv-1",
                      metadata={"trace": {"id": "t1"}}, state="suspended")]


def b_finish_reasons() -> list[Any]:
    return [_response(m.TextPart(r), finish_reason=r) for r in get_args(m.FinishReason)]


# kind -> (fixture file stem, builder)
BUILDERS: dict[str, tuple[str, Callable[[], list[Any]]]] = {
    "message:request": ("message_request", b_request_fields),
    "message:response": ("message_response", b_response_fields),
    "message:request-null-timestamp": ("message_request_null_timestamp", b_request_null_timestamp),
    "message:response-finish-reasons": ("message_response_finish_reasons", b_finish_reasons),
    "request-part:system-prompt": ("request_part_system_prompt", b_system_prompt),
    "request-part:user-prompt": ("request_part_user_prompt", b_user_str),
    "request-part:tool-return": ("request_part_tool_return", b_tool_call_and_return),
    "request-part:tool-return-rich": ("request_part_tool_return_rich", b_tool_return_rich),
    "request-part:retry-prompt": ("request_part_retry_prompt", b_retry_prompt),
    "request-part:tool-availability-delta": ("request_part_tool_availability_delta",
                                             b_tool_availability_delta),
    "request-part:speech": ("part_speech", b_speech),
    "request-part:tool-return/tool-search": ("part_tool_search", b_tool_search),
    "request-part:tool-return/capability-load": ("part_capability_load", b_capability_load),
    "response-part:text": ("response_part_text", b_text),
    "response-part:tool-call": ("request_part_tool_return", b_tool_call_and_return),
    "response-part:tool-call/tool-search": ("part_tool_search", b_tool_search),
    "response-part:tool-call/capability-load": ("part_capability_load", b_capability_load),
    "response-part:builtin-tool-call": ("response_part_builtin_tool", b_builtin_tool),
    "response-part:builtin-tool-return": ("response_part_builtin_tool", b_builtin_tool),
    "response-part:builtin-tool-call/tool-search": ("response_part_native_tool_search",
                                                    b_native_tool_search),
    "response-part:builtin-tool-return/tool-search": ("response_part_native_tool_search",
                                                      b_native_tool_search),
    "response-part:thinking": ("response_part_thinking", b_thinking),
    "response-part:compaction": ("response_part_compaction", b_compaction),
    "response-part:file": ("response_part_file", b_file),
    "response-part:speech": ("part_speech", b_speech),
    "user-content:string": ("request_part_user_prompt", b_user_str),
    "user-content:text-content": ("user_content_text_content", b_text_content),
    "user-content:image-url": ("user_content_image_url", b_image_url),
    "user-content:audio-url": ("user_content_audio_url", b_audio_url),
    "user-content:document-url": ("user_content_document_url", b_document_url),
    "user-content:video-url": ("user_content_video_url", b_video_url),
    "user-content:binary": ("user_content_binary", b_binary),
    "user-content:uploaded-file": ("user_content_uploaded_file", b_uploaded_file),
    "user-content:cache-point": ("user_content_cache_point", b_cache_point),
}


def _union_members(alias: Any) -> list[Any]:
    """Concrete classes of a (possibly Annotated, tagged) union alias from the library."""
    found: list[Any] = []
    for arg in get_args(alias):
        inner = get_args(arg) or (arg,)
        for candidate in inner:
            if isinstance(candidate, type):
                found.append(candidate)
            elif get_args(candidate):
                found.extend(_union_members(candidate))
    return found


def _kind_of(cls: Any, field_name: str) -> str:
    fields = cls.__dataclass_fields__
    kind = fields[field_name].default
    tool_kind = fields["tool_kind"].default if "tool_kind" in fields else None
    return f"{kind}/{tool_kind}" if isinstance(tool_kind, str) else str(kind)


def library_kinds() -> set[str]:
    """Every message, part and user-content kind the installed library can deserialize."""
    kinds = {"message:request", "message:response", "user-content:string"}
    for cls in _union_members(get_args(m.ModelRequestPart)[0]):
        kinds.add("request-part:" + _kind_of(cls, "part_kind"))
    for cls in _union_members(get_args(m.ModelResponsePart)[0]):
        kinds.add("response-part:" + _kind_of(cls, "part_kind"))
    for cls in m.MULTI_MODAL_CONTENT_TYPES + (m.TextContent, m.CachePoint):
        kinds.add("user-content:" + _kind_of(cls, "kind"))
    return kinds


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    missing = library_kinds() - set(BUILDERS)
    if missing:
        sys.stderr.write(f"no fixture builder for library kinds: {sorted(missing)}\n")
        return 1
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Any] = {}
    conversation: list[Any] = []
    for _kind, (stem, builder) in BUILDERS.items():
        if stem in written:
            continue
        messages = builder()
        raw = m.ModelMessagesTypeAdapter.dump_json(messages)
        value = json.loads(raw)
        # The library must read its own output back to the same objects' JSON.
        again = m.ModelMessagesTypeAdapter.dump_json(m.ModelMessagesTypeAdapter.validate_json(raw))
        if json.loads(again) != value:
            sys.stderr.write(f"library round trip changed {stem}\n")
            return 1
        written[stem] = value
        conversation.extend(messages)
    for stem, value in written.items():
        (out / f"{stem}.json").write_text(canonical(value) + "\n", encoding="utf-8")
    combined = json.loads(m.ModelMessagesTypeAdapter.dump_json(conversation))
    (out / "conversation.json").write_text(canonical(combined) + "\n", encoding="utf-8")
    manifest = {
        "generator": "scripts/gen_pydantic_ai_fixtures.py",
        "library": "pydantic-ai-slim",
        "version": REQUIRED_VERSION,
        "serializer": "pydantic_ai.messages.ModelMessagesTypeAdapter.dump_json",
        "library_kinds": sorted(library_kinds()),
        "kinds": {kind: f"{stem}.json" for kind, (stem, _b) in sorted(BUILDERS.items())},
        "combined": "conversation.json",
    }
    (out / "MANIFEST.json").write_text(canonical(manifest) + "\n", encoding="utf-8")
    print(f"wrote {len(written) + 1} fixtures and MANIFEST.json to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
