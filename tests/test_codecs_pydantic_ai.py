"""zigai.codecs.pydantic_ai: golden PydanticAI 2.31.0 fixtures round-trip; invalid input is named.

The fixtures under tests/fixtures/pydantic_ai were written by the real library
(scripts/gen_pydantic_ai_fixtures.py); these tests need only those files.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from zigai import json as zjson
from zigai.codecs import pydantic_ai as codec
from zigai.codecs.pydantic_ai import InvalidPydanticAiMessages, Owned, parse, stringify, validate
from zigai.errors import CodecError

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pydantic_ai"
MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text(encoding="utf-8"))
FIXTURE_FILES = sorted(p for p in FIXTURES.glob("*.json") if p.name != "MANIFEST.json")


def _fixture(name: str) -> list[Any]:
    value: list[Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return value


def _kinds(messages: list[Any]) -> set[str]:
    """The manifest's kind names actually present in a message list."""
    found: set[str] = set()
    for message in messages:
        found.add(f"message:{message['kind']}")
        side = "request-part" if message["kind"] == "request" else "response-part"
        for part in message["parts"]:
            tool_kind = part.get("tool_kind")
            suffix = f"/{tool_kind}" if tool_kind else ""
            found.add(f"{side}:{part['part_kind']}{suffix}")
            if part["part_kind"] == "user-prompt":
                content = part["content"]
                items = [content] if isinstance(content, str) else content
                for item in items:
                    found.add("user-content:" + ("string" if isinstance(item, str) else item["kind"]))
    return found


def _raises_at(data: str | bytes, path: str) -> InvalidPydanticAiMessages:
    with pytest.raises(InvalidPydanticAiMessages) as info:
        parse(data)
    assert info.value.path == path
    assert str(info.value).startswith(f"{path}: ")
    return info.value


# ---- golden fixtures -------------------------------------------------------------------------

@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_every_fixture_parses_and_round_trips_byte_stable(path: Path) -> None:
    raw = path.read_bytes()
    with parse(raw) as owned:
        assert owned.value == json.loads(raw)
        assert (stringify(owned) + "\n").encode("utf-8") == raw


def test_round_trip_canonicalizes_compact_unsorted_input() -> None:
    raw = (FIXTURES / "conversation.json").read_text(encoding="utf-8")
    value = json.loads(raw)
    reordered = [dict(reversed(list(message.items()))) for message in value]
    compact = json.dumps(reordered, separators=(",", ":"))
    with parse(compact) as owned:
        assert list(owned.value[0]) == list(reordered[0])  # decoded graph is untouched
        assert stringify(owned) + "\n" == raw


def test_manifest_names_the_library_version_and_its_serializer() -> None:
    assert MANIFEST["version"] == codec.PYDANTIC_AI_VERSION == "2.31.0"
    assert MANIFEST["library"] == "pydantic-ai-slim"
    assert MANIFEST["serializer"] == "pydantic_ai.messages.ModelMessagesTypeAdapter.dump_json"


def test_manifest_covers_every_library_kind_with_an_existing_fixture() -> None:
    assert set(MANIFEST["library_kinds"]) <= set(MANIFEST["kinds"])
    assert len(MANIFEST["library_kinds"]) == 31
    for kind, name in MANIFEST["kinds"].items():
        assert (FIXTURES / name).is_file(), kind


@pytest.mark.parametrize("kind", sorted(MANIFEST["library_kinds"]))
def test_each_manifest_kind_really_occurs_in_its_fixture(kind: str) -> None:
    assert kind in _kinds(_fixture(MANIFEST["kinds"][kind]))


def test_combined_conversation_contains_every_kind() -> None:
    assert set(MANIFEST["library_kinds"]) <= _kinds(_fixture("conversation.json"))


def test_rich_values_are_carried_through_unchanged() -> None:
    raw = (FIXTURES / "request_part_tool_return_rich.json").read_text(encoding="utf-8")
    with parse(raw) as owned:
        content = owned.value[1]["parts"][0]["content"]
    assert content[1] == {
        "data": "iVBORw0KGgoAAAANSUhEUv_-",
        "identifier": "2bf455",
        "kind": "binary",
        "media_type": "image/png",
        "vendor_metadata": None,
    }
    assert content[3]["nested"]["doc"]["kind"] == "document-url"
    with parse((FIXTURES / "message_response.json").read_bytes()) as owned:
        usage = owned.value[0]["usage"]
    assert usage["details"] == {"accepted_prediction_tokens": 0, "reasoning_tokens": 12}
    assert usage["cost"] == "0.000123"


# ---- contract decisions ----------------------------------------------------------------------

def test_unknown_keys_are_accepted_and_preserved() -> None:
    value = _fixture("response_part_text.json")
    value[0]["x_future_field"] = {"nested": [1, 2.5, None]}
    value[0]["parts"][0]["x_part_extra"] = "kept"
    with parse(json.dumps(value)) as owned:
        text = stringify(owned)
    again = json.loads(text)
    assert again[0]["x_future_field"] == {"nested": [1, 2.5, None]}
    assert again[0]["parts"][0]["x_part_extra"] == "kept"


def test_fields_with_library_defaults_may_be_absent() -> None:
    minimal = [
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]},
        {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "t"}]},
    ]
    with parse(json.dumps(minimal)) as owned:
        assert owned.value == minimal
    assert stringify(minimal) == json.dumps(minimal, sort_keys=True, indent=2)


def test_lax_library_coercions_are_not_accepted() -> None:
    value = _fixture("response_part_text.json")
    value[0]["timestamp"] = 1767323046
    _raises_at(json.dumps(value), "$[0].timestamp")
    value = _fixture("response_part_text.json")
    value[0]["usage"]["input_tokens"] = True
    _raises_at(json.dumps(value), "$[0].usage.input_tokens")


# ---- malformed variants ----------------------------------------------------------------------

def _set(path: tuple[Any, ...], new: Any) -> Callable[[Any], None]:
    def mutate(value: Any) -> None:
        for step in path[:-1]:
            value = value[step]
        value[path[-1]] = new
    return mutate


def _delete(path: tuple[Any, ...]) -> Callable[[Any], None]:
    def mutate(value: Any) -> None:
        for step in path[:-1]:
            value = value[step]
        del value[path[-1]]
    return mutate


MALFORMED: list[tuple[str, str, Callable[[Any], None], str]] = [
    ("missing-kind", "response_part_text.json", _delete((0, "kind")), "$[0].kind"),
    ("unknown-kind", "response_part_text.json", _set((0, "kind"), "system"), "$[0].kind"),
    ("kind-not-string", "response_part_text.json", _set((0, "kind"), 1), "$[0].kind"),
    ("missing-parts", "response_part_text.json", _delete((0, "parts")), "$[0].parts"),
    ("parts-not-array", "response_part_text.json", _set((0, "parts"), {}), "$[0].parts"),
    ("missing-part-kind", "response_part_text.json", _delete((0, "parts", 0, "part_kind")),
     "$[0].parts[0].part_kind"),
    ("unknown-part-kind", "response_part_text.json", _set((0, "parts", 0, "part_kind"), "image"),
     "$[0].parts[0].part_kind"),
    ("request-part-on-response", "response_part_text.json",
     _set((0, "parts", 0, "part_kind"), "user-prompt"), "$[0].parts[0].part_kind"),
    ("required-content-wrong-type", "response_part_text.json", _set((0, "parts", 0, "content"), 5),
     "$[0].parts[0].content"),
    ("required-tool-name-missing", "request_part_tool_return.json", _delete((1, "parts", 0, "tool_name")),
     "$[1].parts[0].tool_name"),
    ("tool-args-array", "request_part_tool_return.json", _set((1, "parts", 0, "args"), [1]),
     "$[1].parts[0].args"),
    ("typed-tool-name-mismatch", "part_tool_search.json", _set((0, "parts", 0, "tool_name"), "other"),
     "$[0].parts[0].tool_name"),
    ("typed-args-shape", "part_tool_search.json", _set((0, "parts", 0, "args"), {"queries": "w"}),
     "$[0].parts[0].args.queries"),
    ("unknown-tool-kind", "request_part_tool_return.json", _set((2, "parts", 0, "tool_kind"), "mcp"),
     "$[2].parts[0].tool_kind"),
    ("timestamp-not-iso", "response_part_text.json", _set((0, "timestamp"), "yesterday"), "$[0].timestamp"),
    ("timestamp-out-of-range", "request_part_system_prompt.json",
     _set((0, "parts", 0, "timestamp"), "2026-02-30T00:00:00Z"), "$[0].parts[0].timestamp"),
    ("response-timestamp-null", "response_part_text.json", _set((0, "timestamp"), None), "$[0].timestamp"),
    ("finish-reason-unknown", "response_part_text.json", _set((0, "finish_reason"), "done"),
     "$[0].finish_reason"),
    ("usage-detail-float", "message_response.json", _set((0, "usage", "details", "reasoning_tokens"), 1.5),
     "$[0].usage.details.reasoning_tokens"),
    ("usage-cost-not-decimal", "message_response.json", _set((0, "usage", "cost"), "cheap"),
     "$[0].usage.cost"),
    ("retry-error-missing-msg", "request_part_retry_prompt.json",
     _delete((1, "parts", 0, "content", 0, "msg")), "$[1].parts[0].content[0].msg"),
    ("retry-error-loc-float", "request_part_retry_prompt.json",
     _set((1, "parts", 0, "content", 1, "loc", 1), 0.5), "$[1].parts[0].content[1].loc[1]"),
    ("user-content-missing-kind", "user_content_image_url.json",
     _delete((0, "parts", 0, "content", 0, "kind")), "$[0].parts[0].content[0].kind"),
    ("user-content-unknown-kind", "user_content_image_url.json",
     _set((0, "parts", 0, "content", 0, "kind"), "gif-url"), "$[0].parts[0].content[0].kind"),
    ("binary-data-not-base64", "user_content_binary.json",
     _set((0, "parts", 0, "content", 1, "data"), "not base64!"), "$[0].parts[0].content[1].data"),
    ("uploaded-file-provider", "user_content_uploaded_file.json",
     _set((0, "parts", 0, "content", 0, "provider_name"), "acme"), "$[0].parts[0].content[0].provider_name"),
    ("force-download-string", "user_content_audio_url.json",
     _set((0, "parts", 0, "content", 0, "force_download"), "yes"), "$[0].parts[0].content[0].force_download"),
    ("speaker-unknown", "part_speech.json", _set((1, "parts", 0, "speaker"), "narrator"),
     "$[1].parts[0].speaker"),
    ("provider-details-array", "response_part_text.json", _set((0, "parts", 0, "provider_details"), []),
     "$[0].parts[0].provider_details"),
    ("message-metadata-string", "message_request.json", _set((0, "metadata"), "m"), "$[0].metadata"),
    ("file-part-content-null", "response_part_file.json", _set((0, "parts", 0, "content"), None),
     "$[0].parts[0].content"),
    ("odd-key-path-quoted", "message_response.json", _set((0, "usage", "details", "a b"), "x"),
     "$[0].usage.details['a b']"),
]


@pytest.mark.parametrize(("fixture", "mutate", "path"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_variant_is_rejected_naming_its_path(
    fixture: str, mutate: Callable[[Any], None], path: str
) -> None:
    value = copy.deepcopy(_fixture(fixture))
    mutate(value)
    _raises_at(json.dumps(value), path)
    with pytest.raises(InvalidPydanticAiMessages):
        stringify(value)


def test_non_list_top_level_is_rejected_at_the_root() -> None:
    for text in ('{"kind": "request", "parts": []}', '"x"', "null", "3"):
        error = _raises_at(text, "$")
        assert error.reason.startswith("expected an array of messages")


def test_unknown_part_kind_message_lists_the_known_kinds() -> None:
    error = _raises_at('[{"kind": "request", "parts": [{"part_kind": "text", "content": "x"}]}]',
                       "$[0].parts[0].part_kind")
    assert error.reason == (
        "unknown part_kind 'text' for a request part (known: 'system-prompt', 'user-prompt', 'speech', "
        "'tool-return', 'retry-prompt', 'tool-availability-delta')"
    )


@pytest.mark.parametrize("text", ['[{"kind": "request", "parts": [', '[{"kind"', "", "[1,]", "[]x"])
def test_truncated_or_malformed_json_is_rejected_at_the_root(text: str) -> None:
    error = _raises_at(text, "$")
    assert isinstance(error.__cause__, zjson.JsonError)


def test_invalid_utf8_is_rejected() -> None:
    _raises_at(b'[{"kind": "request", "parts": [], "run_id": "\xff"}]', "$")


def test_empty_history_is_valid() -> None:
    with parse(b"[]") as owned:
        assert owned.value == []
        assert stringify(owned) == "[]"


# ---- history profile bounds ------------------------------------------------------------------

def _nested_metadata(depth: int) -> str:
    """A message list whose total container depth is exactly ``depth``."""
    inner_depth = depth - 2  # the list and the message object hold the metadata chain
    inner = "{}"
    for _ in range(inner_depth - 1):
        inner = '{"a":' + inner + "}"
    return '[{"kind":"request","parts":[],"metadata":' + inner + "}]"


def test_depth_exactly_at_history_limit_is_accepted_and_one_more_is_rejected() -> None:
    limit = zjson.defaults.history.max_depth
    with parse(_nested_metadata(limit)) as owned:
        assert owned.value[0]["kind"] == "request"
    error = _raises_at(_nested_metadata(limit + 1), "$")
    assert isinstance(error.__cause__, zjson.NestingTooDeep)


def test_document_size_exactly_at_history_limit_is_accepted_and_one_byte_more_is_rejected() -> None:
    limit = zjson.defaults.history.max_document_bytes
    with parse(b"[" + b" " * (limit - 2) + b"]") as owned:
        assert owned.value == []
    error = _raises_at(b"[" + b" " * (limit - 1) + b"]", "$")
    assert isinstance(error.__cause__, zjson.DocumentTooLarge)


def test_string_exactly_at_history_value_limit_is_accepted_and_one_byte_more_is_rejected() -> None:
    limit = zjson.defaults.history.max_value_bytes

    def text_of(size: int) -> str:
        return json.dumps([{"kind": "response", "parts": [{"part_kind": "text", "content": "x" * size}]}])

    with parse(text_of(limit)) as owned:
        assert len(owned.value[0]["parts"][0]["content"]) == limit
    error = _raises_at(text_of(limit + 1), "$")
    assert isinstance(error.__cause__, zjson.ValueTooLarge)


def test_items_exactly_at_history_limit_are_accepted_and_one_more_is_rejected() -> None:
    limit = zjson.defaults.history.max_items

    def metadata_of(count: int) -> str:
        metadata = {f"k{i}": i for i in range(count)}
        return json.dumps([{"kind": "request", "parts": [], "metadata": metadata}])

    with parse(metadata_of(limit)) as owned:
        assert len(owned.value[0]["metadata"]) == limit
    error = _raises_at(metadata_of(limit + 1), "$")
    assert isinstance(error.__cause__, zjson.TooManyItems)


# ---- ownership and errors --------------------------------------------------------------------

def test_owned_is_a_context_manager_and_rejects_use_after_close() -> None:
    owned = parse((FIXTURES / "response_part_text.json").read_bytes())
    assert isinstance(owned, Owned)
    assert len(owned) == 1 and not owned.closed
    with owned as entered:
        assert entered is owned
    assert owned.closed
    with pytest.raises(ValueError, match="after close"):
        _ = owned.value
    with pytest.raises(ValueError, match="after close"):
        stringify(owned)
    with pytest.raises(ValueError, match="after close"):
        owned.__enter__()
    owned.close()  # idempotent
    assert repr(owned) == "<codecs.pydantic_ai.Owned closed>"


def test_deinit_is_an_alias_of_close() -> None:
    owned = parse(b"[]")
    owned.deinit()
    assert owned.closed


def test_parse_accepts_only_str_or_bytes() -> None:
    data = bytearray((FIXTURES / "response_part_text.json").read_bytes())
    with pytest.raises(TypeError, match="str or bytes"):
        parse(data)  # type: ignore[arg-type]


def test_error_derives_from_codec_error_and_pickles_with_its_path() -> None:
    error = _raises_at('[{"kind": 1, "parts": []}]', "$[0].kind")
    assert isinstance(error, CodecError)
    clone = pickle.loads(pickle.dumps(error))
    assert type(clone) is InvalidPydanticAiMessages
    assert (str(clone), clone.path, clone.reason) == (str(error), "$[0].kind", error.reason)


def test_stringify_rejects_values_json_cannot_represent() -> None:
    value = _fixture("message_request.json")
    value[0]["metadata"]["score"] = float("nan")
    with pytest.raises(InvalidPydanticAiMessages, match=r"^\$: value is not representable"):
        stringify(value)


def test_validate_accepts_a_fixture_graph_and_rejects_a_bad_one() -> None:
    validate(_fixture("conversation.json"))
    with pytest.raises(InvalidPydanticAiMessages, match=r"^\$\[0\]\.kind: "):
        validate([{"parts": []}])


# ---- optional: the real library reads our output ---------------------------------------------

def _library_messages() -> Any:
    return pytest.importorskip(
        "pydantic_ai.messages", reason="pydantic_ai is a dev-only peer; install pydantic-ai-slim==2.31.0"
    )


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_library_loads_our_stringify_output(path: Path) -> None:
    messages = _library_messages()
    with parse(path.read_bytes()) as owned:
        text = stringify(owned)
    loaded = messages.ModelMessagesTypeAdapter.validate_json(text)
    assert json.loads(messages.ModelMessagesTypeAdapter.dump_json(loaded)) == json.loads(text)
