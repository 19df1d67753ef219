"""zigai.history: v2 round trip, v1 migration, bounded parsing, Owned and processors."""

from __future__ import annotations

import collections
import json
import pickle
from typing import Any

import pytest
from _message_samples import STAMP, every_kind_history
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zigai import history
from zigai import messages as m
from zigai.errors import HistoryError, JsonError
from zigai.usage import RequestUsage

MIB = 1024 * 1024


def _doc(messages: list[dict[str, Any]], version: object = 2) -> str:
    return json.dumps({"version": version, "messages": messages})


# -- version 2 round trip ------------------------------------------------------------------

def test_round_trip_of_every_part_kind_is_equal_and_byte_identical() -> None:
    original = every_kind_history()
    text = history.stringify(original)
    with history.parse(text) as owned:
        assert owned.messages == original
        assert owned.source_version == 2
        assert history.stringify(owned.messages) == text
    assert history.parse(text.encode("utf-8")).messages == original


def test_stringify_exact_wire_json() -> None:
    messages = (
        m.RequestMessage([m.UserPromptPart("hi", timestamp=STAMP)]),
        m.ResponseMessage(
            [m.ToolCallPart("f", '{"a":1}', "c1")],
            usage=RequestUsage(input_tokens=3, output_tokens=2, details={"x": 1}),
            finish_reason="tool_call",
        ),
    )
    assert history.stringify(messages) == (
        '{"version":2,"messages":['
        '{"instructions":null,"kind":"request","metadata":null,"parts":[{"content":"hi",'
        '"part_kind":"user-prompt","timestamp":"2025-01-02T03:04:05.678000Z"}],'
        '"timestamp":null},'
        '{"finish_reason":"tool_call","kind":"response","metadata":null,"model_name":null,'
        '"parts":[{"args":"{\\"a\\":1}","id":null,"part_kind":"tool-call","provider":null,'
        '"tool_call_id":"c1","tool_name":"f"}],"provider_details":null,"provider_name":null,'
        '"provider_response_id":null,"raw_finish_reason":null,"timestamp":null,'
        '"usage":{"cache_read_tokens":0,"cache_write_tokens":0,"details":{"x":1},'
        '"input_audio_tokens":0,"input_tokens":3,"output_audio_tokens":0,'
        '"output_tokens":2,"reasoning_tokens":0}}]}'
    )


def test_stringify_fast_path_writes_exactly_the_encode_message_text() -> None:
    # stringify lets the C encoder walk the messages; encode_message (used by paused
    # states) builds plain dicts.  Both must give the same bytes for every kind.
    from zigai.history.encode import encode_message

    original = every_kind_history()
    body = ",".join(json.dumps(encode_message(message), sort_keys=True, ensure_ascii=False,
                               separators=(",", ":")) for message in original)
    assert history.stringify(original) == '{"version":2,"messages":[' + body + "]}"


def test_every_kind_decodes_on_the_fast_path_to_the_checked_value() -> None:
    # The fast decoders must accept every valid message (no silent fallback) and build
    # the same value as the path-tracking decoders.
    from zigai.history import decode

    for item in json.loads(history.stringify(every_kind_history()))["messages"]:
        assert decode._fast_message(item) == decode._message(item, "messages[0]")


def test_fast_path_failures_fall_back_to_the_checked_error() -> None:
    # A value the fast path refuses (an int subclass where an int belongs, here a bool
    # count) still gets the checked decoder's exact error and path.
    doc = json.loads(history.stringify([m.ResponseMessage([m.TextPart("x")])]))
    doc["messages"][0]["usage"]["input_tokens"] = True
    with pytest.raises(history.InvalidHistory) as caught:
        history.parse(json.dumps(doc))
    assert caught.value.path == "messages[0].usage.input_tokens"


def test_non_finite_and_too_deep_content_are_rejected_by_the_fast_freeze() -> None:
    with pytest.raises(m.InvalidMessagePart, match=r"\$\.a\[1\]: JSON numbers must be finite"):
        m.ToolReturnPart("f", "c", {"a": [1, float("inf")]})
    deep: Any = 1
    for _ in range(m.json_value.MAX_DEPTH):
        deep = [deep]
    assert m.ToolReturnPart("f", "c", deep).content is not None
    with pytest.raises(m.InvalidMessagePart, match="nesting deeper"):
        m.ToolReturnPart("f", "c", [deep])
    ordered = collections.OrderedDict(b=[True, None], a=2.5)  # not a plain dict: checked path
    assert m.ToolReturnPart("f", "c", ordered).content == {"a": 2.5, "b": (True, None)}


def test_bytes_are_base64_and_equal_values_serialize_identically() -> None:
    one = m.ResponseMessage([m.FilePart(m.BytesSource(b"\x00\xff", "image/png"))],
                            provider_details=m.ProviderDetails.from_value({"b": 1, "a": 2}))
    two = m.ResponseMessage([m.FilePart(m.BytesSource(b"\x00\xff", "image/png"))],
                            provider_details=m.ProviderDetails.from_value({"a": 2, "b": 1}))
    assert history.stringify([one]) == history.stringify([two])
    assert '"data":"AP8="' in history.stringify([one])


def test_empty_history_round_trips() -> None:
    assert history.stringify([]) == '{"version":2,"messages":[]}'
    assert history.parse('{"version":2,"messages":[]}').messages == ()


def test_stringify_rejects_non_messages() -> None:
    with pytest.raises(history.InvalidHistory):
        history.stringify([m.TextPart("x")])  # type: ignore[list-item]


def test_optional_fields_may_be_omitted_in_v2() -> None:
    text = _doc([{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]},
                 {"kind": "response", "parts": [{"part_kind": "text", "content": "yo"}]}])
    assert history.parse(text).messages == (m.RequestMessage.user("hi"),
                                            m.ResponseMessage.from_text("yo"))


# -- structural errors name their JSON path -------------------------------------------------

_REQ = {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]}


@pytest.mark.parametrize(
    ("messages", "path"),
    [
        ([_REQ, {"kind": "response", "parts": [
            {"part_kind": "tool-call", "tool_name": "f", "args": "{}"}]}],
         "messages[1].parts[0].tool_call_id"),
        ([_REQ, {"kind": "response", "parts": [
            {"part_kind": "tool-call", "tool_name": "f", "args": "{}", "tool_call_id": 7}]}],
         "messages[1].parts[0].tool_call_id"),
        ([{"kind": "response", "parts": [{"part_kind": "tool-return", "tool_name": "f",
                                          "tool_call_id": "c"}]}],
         "messages[0].parts[0].part_kind"),
        ([{"kind": "request", "parts": [{"part_kind": "text", "content": "x"}]}],
         "messages[0].parts[0].part_kind"),
        ([{"kind": "moderation", "parts": []}], "messages[0].kind"),
        ([{"parts": []}], "messages[0].kind"),
        ([_REQ, "nope"], "messages[1]"),
        ([{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": [
            {"kind": "image", "source": {"kind": "bytes", "data": "!!", "media_type": "a/b"}}]}]}],
         "messages[0].parts[0].content[0].source.data"),
        ([{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "x",
                                         "timestamp": "2025-01-01T00:00:00"}]}],
         "messages[0].parts[0].timestamp"),
        ([{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "x",
                                         "timestamp": "yesterday"}]}],
         "messages[0].parts[0].timestamp"),
        ([{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "x",
                                         "colour": "red"}]}],
         "messages[0].parts[0].colour"),
        ([{"kind": "request", "parts": []}], "messages[0]"),
        ([{"kind": "response", "parts": [], "usage": {"input_tokens": 1,
                                                      "cache_read_tokens": 2}}],
         "messages[0].usage"),
        ([{"kind": "response", "parts": [], "usage": {"input_tokens": "1"}}],
         "messages[0].usage.input_tokens"),
        ([{"kind": "response", "parts": [], "finish_reason": "bored"}], "messages[0]"),
        ([{"kind": "response", "parts": [], "provider_details": [1]}],
         "messages[0].provider_details"),
        ([{"kind": "response", "parts": [{"part_kind": "native-tool-call",
                                          "tool_name": "web", "tool_call_id": "c"}]}],
         "messages[0].parts[0].provider"),
    ],
)
def test_structural_errors_name_the_json_path(messages: list[Any], path: str) -> None:
    with pytest.raises(history.InvalidHistory) as info:
        history.parse(_doc(messages))
    assert info.value.path == path
    assert str(info.value).startswith(path)


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('{"messages": []}', "version"),
        ('{"version": 2}', "messages"),
        ('{"version": 2, "messages": {}}', "messages"),
        ('{"version": 2, "messages": [], "extra": 1}', "extra"),
        ("[]", "$"),
    ],
)
def test_envelope_errors(text: str, path: str) -> None:
    with pytest.raises(history.InvalidHistory) as info:
        history.parse(text)
    assert info.value.path == path


@pytest.mark.parametrize("version", [0, 3, "2", 2.0, None, True, [2]])
def test_unknown_version_is_unsupported(version: object) -> None:
    with pytest.raises(history.UnsupportedHistoryVersion) as info:
        history.parse(_doc([], version=version))
    assert info.value.version == version


@pytest.mark.parametrize("text", ["", "{", "nul", '{"version":2,"messages":[]} x', b"\xff\xfe",
                                  '{"version":2,"version":2,"messages":[]}'])
def test_malformed_json_is_invalid_history_chained_to_the_json_error(text: str | bytes) -> None:
    with pytest.raises(history.InvalidHistory) as info:
        history.parse(text)
    assert isinstance(info.value.__cause__, JsonError)


def test_non_text_input_is_invalid_history() -> None:
    with pytest.raises(history.InvalidHistory):
        history.parse(123)  # type: ignore[arg-type]


# -- history JSON profile limits ------------------------------------------------------------

def test_document_exactly_at_the_size_limit_parses_and_one_byte_more_fails() -> None:
    base = history.stringify([m.RequestMessage.user("hi")])
    exact = base + " " * (16 * MIB - len(base))
    assert len(exact.encode()) == 16 * MIB
    assert history.parse(exact).messages == (m.RequestMessage.user("hi"),)
    with pytest.raises(history.HistoryTooLarge) as info:
        history.parse(exact + " ")
    assert isinstance(info.value.__cause__, JsonError)


def test_value_exactly_at_the_limit_round_trips_and_one_byte_more_fails() -> None:
    exact = [m.RequestMessage.user("a" * MIB)]
    assert history.parse(history.stringify(exact)).messages == tuple(exact)
    with pytest.raises(history.HistoryTooLarge):
        history.stringify([m.RequestMessage.user("a" * (MIB + 1))])
    with pytest.raises(history.HistoryTooLarge):
        history.parse(_doc([{"kind": "request", "parts": [
            {"part_kind": "user-prompt", "content": "a" * (MIB + 1)}]}]))


def test_too_deep_tool_content_is_rejected() -> None:
    deep: Any = "x"
    for _ in range(70):
        deep = [deep]
    text = _doc([{"kind": "request", "parts": [{"part_kind": "tool-return", "tool_name": "f",
                                                "tool_call_id": "c", "content": deep}]}])
    with pytest.raises(history.HistoryTooLarge):
        history.parse(text)


# -- fuzzing: only HistoryError subclasses escape ---------------------------------------------

_VALID = json.loads(history.stringify(every_kind_history()))
_JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False),
                       st.text(max_size=6), st.sampled_from(["", "text", "request", "Zm9v",
                                                             "2025-01-01T00:00:00Z"]))
_JSON = st.recursive(_JSON_LEAF, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=6)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


_ALL_PATHS = _paths(_VALID)


def _mutate(document: Any, path: tuple[Any, ...], action: str, new: Any) -> Any:
    clone = json.loads(json.dumps(document))
    if not path:
        return new
    parent = clone
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if action == "delete":
        del parent[last]
    elif action == "rename" and isinstance(parent, dict):
        parent[f"{last}_x"] = parent.pop(last)
    else:
        parent[last] = new
    return clone


def _parse_only_history_errors(text: str | bytes) -> None:
    try:
        owned = history.parse(text)
    except HistoryError:
        return
    # whatever parsed must serialize and parse back to the same messages
    assert history.parse(history.stringify(owned.messages)).messages == owned.messages


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    path=st.sampled_from(_ALL_PATHS),
    action=st.sampled_from(["replace", "delete", "rename"]),
    new=_JSON,
)
def test_structural_mutations_raise_only_history_errors(
    path: tuple[Any, ...], action: str, new: Any
) -> None:
    _parse_only_history_errors(json.dumps(_mutate(_VALID, path, action, new)))


_VALID_BYTES = json.dumps(_VALID).encode()


@settings(max_examples=200, deadline=None)
@given(
    position=st.integers(0, len(_VALID_BYTES) - 1),
    edit=st.sampled_from(["flip", "cut", "insert", "delete"]),
    byte=st.integers(0, 255),
)
def test_byte_mutations_raise_only_history_errors(position: int, edit: str, byte: int) -> None:
    data = bytearray(_VALID_BYTES)
    if edit == "flip":
        data[position] = byte
    elif edit == "cut":
        del data[position:]
    elif edit == "insert":
        data.insert(position, byte)
    else:
        del data[position]
    _parse_only_history_errors(bytes(data))


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=64) | st.text(max_size=64))
def test_arbitrary_input_raises_only_history_errors(data: str | bytes) -> None:
    _parse_only_history_errors(data)


# -- version 1 migration -------------------------------------------------------------------

def test_v1_role_based_history_migrates_to_v2_messages() -> None:
    text = _doc([
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "c1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
            {"id": "c2", "name": "get_time", "arguments": {"tz": "CET"}},
            {"id": "c3", "name": "noop"},
        ]},
        {"role": "tool", "tool_call_id": "c1", "name": "get_weather", "content": {"t": 21}},
        {"role": "tool", "tool_call_id": "c2", "content": "12:00"},
        {"role": "tool", "tool_call_id": "c3", "content": None},
        {"role": "assistant", "content": "Sunny, 21C."},
        {"role": "user", "content": "Thanks"},
        {"role": "assistant", "content": None},
    ], version=1)
    owned = history.parse(text)
    assert owned.source_version == 1
    assert owned.messages == (
        m.RequestMessage([m.SystemPromptPart("Be brief."), m.UserPromptPart("Weather in Paris?")]),
        m.ResponseMessage([
            m.TextPart("Checking."),
            m.ToolCallPart("get_weather", '{"city": "Paris"}', "c1"),
            m.ToolCallPart("get_time", '{"tz":"CET"}', "c2"),
            m.ToolCallPart("noop", "{}", "c3"),
        ]),
        m.RequestMessage([
            m.ToolReturnPart("get_weather", "c1", {"t": 21}),
            m.ToolReturnPart("get_time", "c2", "12:00"),
            m.ToolReturnPart("noop", "c3", None),
        ]),
        m.ResponseMessage([m.TextPart("Sunny, 21C.")]),
        m.RequestMessage([m.UserPromptPart("Thanks")]),
        m.ResponseMessage([]),
    )
    # migrated history is written back as version 2
    assert history.stringify(owned.messages).startswith('{"version":2,')


@pytest.mark.parametrize(
    ("messages", "path"),
    [
        ([{"role": "robot", "content": "x"}], "messages[0].role"),
        ([{"content": "x"}], "messages[0].role"),
        ([{"role": "user"}], "messages[0].content"),
        ([{"role": "user", "content": ["x"]}], "messages[0].content"),
        ([{"role": "user", "content": "x", "name": "bob"}], "messages[0].name"),
        ([{"role": "tool", "tool_call_id": "zz", "content": "x"}], "messages[0].name"),
        ([{"role": "tool", "content": "x", "name": "f"}], "messages[0].tool_call_id"),
        ([{"role": "assistant", "tool_calls": {}}], "messages[0].tool_calls"),
        ([{"role": "assistant", "tool_calls": [{"id": "c", "name": ""}]}],
         "messages[0].tool_calls[0]"),
        ([{"role": "assistant", "tool_calls": [{"id": "c", "name": "f", "arguments": 3}]}],
         "messages[0].tool_calls[0].arguments"),
        ([{"role": "assistant", "tool_calls": [{"name": "f"}]}], "messages[0].tool_calls[0].id"),
        (["x"], "messages[0]"),
    ],
)
def test_v1_errors_name_the_json_path(messages: list[Any], path: str) -> None:
    with pytest.raises(history.InvalidHistory) as info:
        history.parse(_doc(messages, version=1))
    assert info.value.path == path


# -- Owned ---------------------------------------------------------------------------------

def test_owned_is_a_context_manager_and_refuses_use_after_close() -> None:
    text = history.stringify([m.RequestMessage.user("hi")])
    with history.parse(text) as owned:
        assert len(owned) == 1
        assert list(owned) == [m.RequestMessage.user("hi")]
        assert owned[0] == m.RequestMessage.user("hi")
    assert owned.closed
    for use in (lambda: owned.messages, lambda: len(owned), lambda: owned[0],
                lambda: owned.source_version, lambda: owned.__enter__()):
        with pytest.raises(history.HistoryClosed):
            use()
    owned.close()  # idempotent
    other = history.parse(text)
    other.deinit()
    with pytest.raises(history.HistoryClosed):
        other.messages  # noqa: B018
    assert "closed" in repr(other)


def test_history_errors_pickle_with_their_attributes() -> None:
    for error in (history.InvalidHistory("bad", path="messages[0]"),
                  history.UnsupportedHistoryVersion("v", version=9)):
        clone = pickle.loads(pickle.dumps(error))
        assert str(clone) == str(error)
        assert clone.__dict__ == error.__dict__


# -- processors ----------------------------------------------------------------------------

def _call(call_id: str, name: str = "f", args: str = "{}") -> m.ResponseMessage:
    return m.ResponseMessage([m.ToolCallPart(name, args, call_id)])


def _ret(call_id: str, name: str = "f") -> m.RequestMessage:
    return m.RequestMessage([m.ToolReturnPart(name, call_id, "ok")])


CONVERSATION: tuple[m.Message, ...] = (
    m.RequestMessage.system_and_user("sys", "q1"),  # 0
    _call("c1"),                                   # 1
    _ret("c1"),                                    # 2
    m.ResponseMessage.from_text("a1"),             # 3
    m.RequestMessage.user("q2"),                   # 4
    _call("c2"),                                   # 5
    _ret("c2"),                                    # 6
    m.ResponseMessage.from_text("a2"),             # 7
    m.RequestMessage.user("q3"),                   # 8
)


def test_trim_keeps_the_last_messages_when_the_cut_is_clean() -> None:
    view = history.trim_old_messages(5)(CONVERSATION)
    assert tuple(view) == CONVERSATION[4:]


def test_trim_never_starts_with_a_response_or_an_orphaned_return() -> None:
    # the last 4 would start with the response c2; the last 3 with c2's return
    assert tuple(history.trim_old_messages(4)(CONVERSATION)) == CONVERSATION[8:]
    assert tuple(history.trim_old_messages(3)(CONVERSATION)) == CONVERSATION[8:]
    mixed = (*CONVERSATION[:6],
             m.RequestMessage([m.ToolReturnPart("f", "c2", "ok"), m.UserPromptPart("more")]))
    assert tuple(history.trim_old_messages(1)(mixed)) == (m.RequestMessage.user("more"),)


def test_trim_returns_short_views_unchanged_and_validates_keep_last() -> None:
    assert tuple(history.trim_old_messages(50)(CONVERSATION)) == CONVERSATION
    for bad in (0, -1, True, 1.5, "3"):
        with pytest.raises(history.InvalidHistoryProcessor):
            history.trim_old_messages(bad)  # type: ignore[arg-type]


def test_compact_adjacent_text_merges_only_plain_text() -> None:
    provider = m.ProviderPart("openai", id="msg_1")
    view = (
        m.RequestMessage([m.UserPromptPart("a"), m.UserPromptPart("b"),
                          m.UserPromptPart("c", timestamp=STAMP)]),
        m.ResponseMessage([m.TextPart("x"), m.TextPart("y"), m.ThinkingPart("t"),
                           m.TextPart("z"), m.TextPart("w", provider=provider)],
                          model_name="m1"),
        m.ResponseMessage.from_text("untouched"),
    )
    result = history.compact_adjacent_text()(view)
    assert tuple(result) == (
        m.RequestMessage([m.UserPromptPart("a\n\nb"), m.UserPromptPart("c", timestamp=STAMP)]),
        m.ResponseMessage([m.TextPart("x\n\ny"), m.ThinkingPart("t"), m.TextPart("z"),
                           m.TextPart("w", provider=provider)], model_name="m1"),
        m.ResponseMessage.from_text("untouched"),
    )
    assert result[2] is view[2]
    assert history.compact_adjacent_text("")(view)[1].parts[0] == m.TextPart("xy")


def test_summarize_prefix_replaces_the_older_prefix_with_one_request() -> None:
    seen: list[tuple[m.Message, ...]] = []

    def summarize(prefix: tuple[m.Message, ...]) -> str:
        seen.append(prefix)
        return f"summary of {len(prefix)}"

    result = history.summarize_prefix(3, summarize)(CONVERSATION)
    # the last 3 start with c2's return, so the cut moves forward to message 8
    assert seen == [CONVERSATION[:8]]
    assert tuple(result) == (m.RequestMessage([m.UserPromptPart("summary of 8")]),
                             CONVERSATION[8])
    as_system = history.summarize_prefix(5, summarize, as_system_prompt=True)(CONVERSATION)
    assert tuple(as_system) == (m.RequestMessage([m.SystemPromptPart("summary of 4")]),
                                *CONVERSATION[4:])
    assert history.summarize_prefix(20, summarize)(CONVERSATION) == CONVERSATION
    with pytest.raises(history.InvalidHistoryProcessor):
        history.summarize_prefix(2, lambda _: 3)(CONVERSATION)  # type: ignore[arg-type, return-value]


def test_summarize_callback_errors_pass_through_unwrapped() -> None:
    def boom(prefix: tuple[m.Message, ...]) -> str:
        raise KeyError("app")

    with pytest.raises(KeyError):
        history.summarize_prefix(1, boom)(CONVERSATION)


def test_remove_orphaned_tool_traffic() -> None:
    provider = m.ProviderPart("openai")
    view = (
        m.RequestMessage.user("q"),
        m.ResponseMessage([m.TextPart("calling"), m.ToolCallPart("f", "{}", "ok1"),
                           m.ToolCallPart("f", "{}", "lonely"),
                           m.ToolCallPart("f", "{not json", "bad"),
                           m.NativeToolCallPart("web", "n1", provider),
                           m.NativeToolReturnPart("web", "n1", provider, "r"),
                           m.NativeToolCallPart("web", "n2", provider)]),
        m.RequestMessage([m.ToolReturnPart("f", "ok1", 1), m.ToolReturnPart("f", "ghost", 2),
                          m.RetryPromptPart("bad args", tool_name="f", tool_call_id="bad")]),
        m.RequestMessage([m.ToolReturnPart("f", "ghost2", 3)]),
        m.ResponseMessage([m.ToolCallPart("g", "{}", "late")]),
    )
    result = history.remove_orphaned_tool_traffic()(view)
    assert tuple(result) == (
        m.RequestMessage.user("q"),
        m.ResponseMessage([m.TextPart("calling"), m.ToolCallPart("f", "{}", "ok1"),
                           m.NativeToolCallPart("web", "n1", provider),
                           m.NativeToolReturnPart("web", "n1", provider, "r")]),
        m.RequestMessage([m.ToolReturnPart("f", "ok1", 1)]),
    )


def test_apply_processors_runs_left_to_right_and_never_touches_the_canonical_history() -> None:
    canonical = CONVERSATION
    snapshot = history.stringify(canonical)
    order: list[str] = []

    def tag(name: str) -> history.Processor:
        def process(view: tuple[m.Message, ...]) -> list[m.Message]:
            order.append(name)
            return list(view)
        return process

    view = history.apply_processors(canonical, [
        tag("first"), history.trim_old_messages(5), tag("second"),
        history.compact_adjacent_text(), history.remove_orphaned_tool_traffic(),
    ])
    assert order == ["first", "second"]
    assert view == CONVERSATION[4:]
    assert isinstance(view, tuple)
    assert history.stringify(canonical) == snapshot
    assert history.apply_processors(canonical, []) == canonical


def test_apply_processors_rejects_a_processor_returning_non_messages() -> None:
    with pytest.raises(history.InvalidHistoryProcessor, match="position 0"):
        history.apply_processors(CONVERSATION, [lambda view: [m.TextPart("x")]])
    with pytest.raises(history.InvalidHistoryProcessor):
        history.apply_processors(CONVERSATION, [lambda view: None])  # type: ignore[arg-type, return-value]
