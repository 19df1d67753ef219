"""zigai.history speed paths: each must give exactly what the general path gives, errors too."""

from __future__ import annotations

import collections
import enum
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from _message_samples import every_kind_history

from zigai import history
from zigai import messages as m
from zigai.errors import HistoryError, MessageError
from zigai.history import encode
from zigai.usage import RequestUsage


def _reference_text(messages: tuple[m.Message, ...] | list[m.Message]) -> str:
    body = ",".join(json.dumps(encode.encode_message(message), sort_keys=True,
                               ensure_ascii=False, separators=(",", ":"))
                    for message in messages)
    return '{"version":2,"messages":[' + body + "]}"


# -- stringify's text emitters -------------------------------------------------------------

class _Colour(enum.Enum):
    red = "red"


class _Level(enum.IntEnum):
    high = 3


class _Tag(enum.StrEnum):
    alpha = "alpha"


class _Text(str):
    pass


@dataclass(frozen=True)
class _Inner:
    b: int
    a: str


@dataclass(frozen=True)
class _Everything:
    text: str
    subclass_text: _Text
    number: int
    ratio: float
    flag: bool
    nothing: None
    colour: _Colour
    level: _Level
    tag: _Tag
    items: tuple[Any, ...]
    listed: list[Any]
    plain: dict[str, Any]
    ordered: collections.OrderedDict[str, Any]
    inner: _Inner
    stamp: datetime
    blob: bytes
    details: m.ProviderDetails


def test_emitters_write_exactly_what_the_c_encoder_writes_for_every_value_type() -> None:
    value = _Everything(
        text='quote " backslash \\ newline \n café 🙂', subclass_text=_Text("sub"),
        number=-12, ratio=2.5, flag=False, nothing=None, colour=_Colour.red,
        level=_Level.high, tag=_Tag.alpha, items=(1, "two", None, True, (3.5,)),
        listed=[{"z": 1, "a": [False]}], plain={"b": 1, "a": {"d": None, "c": 0.1}},
        ordered=collections.OrderedDict(y=1, x=2), inner=_Inner(2, "x"),
        stamp=datetime(2025, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2))),
        blob=b"\x00\xff", details=m.ProviderDetails.from_value({"k": [1, {"j": "v"}]}),
    )
    assert encode._emit(value) == encode._MESSAGE_ENCODER.encode(value)
    assert encode._emit(True) == "true"
    assert encode._emit([]) == "[]"
    for stamp in (datetime(2025, 1, 2, tzinfo=UTC), value.stamp):  # outside a dataclass too
        assert encode._emit(stamp) == encode._MESSAGE_ENCODER.encode(stamp)


class _OwnRequest(m.RequestMessage):
    __slots__ = ()


def test_stringify_writes_a_message_subclass_like_its_base() -> None:
    own = _OwnRequest([m.UserPromptPart("hi")], instructions="be brief")
    assert history.stringify([own]) == history.stringify([m.RequestMessage(
        [m.UserPromptPart("hi")], instructions="be brief")]) == _reference_text([own])


def test_emitters_refuse_what_the_c_encoder_refuses() -> None:
    with pytest.raises(ValueError, match="Out of range float"):
        encode._emit(float("inf"))
    with pytest.raises(ValueError, match="Out of range float"):
        encode._emit(float("nan"))
    with pytest.raises(history.InvalidHistory, match="cannot serialize a set"):
        encode._emit({1, 2})


class _SubclassedDetails(m.ProviderDetails):
    __slots__ = ()


def test_stringify_of_every_kind_and_unusual_values_equals_the_plain_dict_encoding() -> None:
    base = datetime(2025, 3, 4, 5, 6, 7, 890, tzinfo=UTC)
    later = base + timedelta(microseconds=1)
    messages = (
        *every_kind_history(),
        # equal and unequal timestamps in a row: the last-timestamp cache must not leak
        m.RequestMessage([m.UserPromptPart("a", timestamp=base),
                          m.UserPromptPart("b", timestamp=base + timedelta(0)),
                          m.UserPromptPart("c", timestamp=later),
                          m.UserPromptPart("d", timestamp=base.astimezone(timezone(timedelta(hours=-3))))],
                         timestamp=later),
        m.ResponseMessage([m.TextPart("x")], provider_details=_SubclassedDetails({"b": 1, "a": 2}),
                          finish_reason=m.FinishReason.length),
    )
    text = history.stringify(messages)
    assert text == _reference_text(messages)
    assert '"timestamp":"2025-03-04T05:06:07.000891Z"' in text
    with history.parse(text) as owned:
        assert history.stringify(owned.messages) == text


def test_stringify_maps_a_non_json_value_inside_a_message_to_invalid_history() -> None:
    # frozen messages cannot hold one through their constructors; force one past them
    part = m.TextPart("x")
    object.__setattr__(part, "id", float("nan"))
    with pytest.raises(history.InvalidHistory, match="not representable as JSON"):
        history.stringify([m.ResponseMessage([part])])


# -- parse's exact-shape fast records ------------------------------------------------------

_CANDIDATES: tuple[Any, ...] = (
    None, "", "x", "error", "stop", "bored", 0, 3, -1, True, 2.5, [], {}, {"a": 1},
    {"a": [1, 1e999]}, "2025-01-01T00:00:00Z", "2025-01-01T02:00:00+02:00",
    {"provider_name": "openai", "id": None, "details": None},
)


def _variants() -> list[tuple[str, dict[str, Any]]]:
    """One-field mutations of every message and part of the every-kind history."""
    stamp = datetime(2025, 1, 1, tzinfo=UTC)
    exact_shapes = (  # what agents mostly write: every exact-shape condition holds here
        m.RequestMessage([m.SystemPromptPart("s", timestamp=stamp), m.UserPromptPart("u"),
                          m.ToolReturnPart("f", "c", {"a": [1]}, timestamp=stamp)],
                         instructions="i", timestamp=stamp),
        m.ResponseMessage([m.ThinkingPart("t", signature="sig"), m.TextPart("x"),
                           m.ToolCallPart("f", "{}", "c", id="fc")],
                          usage=RequestUsage(input_tokens=5, output_tokens=4, cache_read_tokens=2,
                                             cache_write_tokens=1, input_audio_tokens=1,
                                             output_audio_tokens=1, reasoning_tokens=2),
                          model_name="m", provider_name="p", provider_response_id="r",
                          finish_reason="stop", raw_finish_reason="stop", timestamp=stamp,
                          provider_details=m.ProviderDetails.from_value({"k": "v"})),
    )
    base = json.loads(history.stringify((*exact_shapes, *every_kind_history())))["messages"]
    found: list[tuple[str, dict[str, Any]]] = []
    for message in base:
        targets = [message, *message["parts"]]
        if message["kind"] == "response":
            targets.append(message["usage"])
        for target in targets:
            for field in list(target):
                if field in ("kind", "part_kind"):
                    continue
                for candidate in _CANDIDATES:
                    saved = target[field]
                    target[field] = candidate
                    found.append((f"{field}={candidate!r}", json.loads(json.dumps(message))))
                    target[field] = saved
    return found


def test_fast_records_build_what_the_constructors_build_or_fail_the_same_way() -> None:
    # The fast records against the checked decoder and the constructors: each field of each
    # kind, set to valid and invalid values, decodes to an identical value (repr compares
    # timezones and enum members too) or fails with the same error.
    from zigai.history import decode

    variants = _variants()
    assert len(variants) > 1000
    for label, item in variants:
        fresh = json.loads(json.dumps(item))  # the fast path adopts (rewrites) its tree
        try:
            expected: Any = repr(decode._message(json.loads(json.dumps(item)), "messages[0]"))
        except (HistoryError, MessageError) as exc:  # or a constructor's own error
            expected = (type(exc).__name__, getattr(exc, "path", None), str(exc))
        try:
            got: Any = repr(decode.decode_message(fresh, "messages[0]"))
        except (HistoryError, MessageError) as exc:
            got = (type(exc).__name__, getattr(exc, "path", None), str(exc))
        assert got == expected, label


def test_parse_rejects_a_non_finite_number_in_tool_content_with_the_checked_error() -> None:
    text = ('{"version":2,"messages":[{"kind":"request","parts":[{"part_kind":"tool-return",'
            '"tool_name":"f","tool_call_id":"c","content":{"a":[1,1e999]}}]}]}')
    with pytest.raises(history.InvalidHistory, match="finite") as caught:
        history.parse(text)
    assert caught.value.path == "messages[0].parts[0]"


def test_a_non_finite_number_in_provider_details_names_its_path() -> None:
    text = ('{"version":2,"messages":[{"kind":"response","parts":[],'
            '"provider_details":{"a":[1e999]}}]}')
    with pytest.raises(history.InvalidHistory, match="finite") as caught:
        history.parse(text)
    assert caught.value.path == "messages[0].provider_details"


def test_adopted_content_is_deeply_frozen() -> None:
    content = {"k": [{"a": [1, 2.5, None]}, "s", True], "e": {}}
    doc = {"version": 2, "messages": [{"kind": "request", "parts": [{
        "part_kind": "tool-return", "tool_name": "f", "tool_call_id": "c", "content": content,
        "metadata": None, "outcome": "success", "timestamp": None}],
        "instructions": None, "metadata": None, "timestamp": None}]}
    with history.parse(json.dumps(doc)) as owned:
        value = owned[0].parts[0].content
    assert value == m.ToolReturnPart("f", "c", content).content
    assert isinstance(value, m.json_value.FrozenDict)
    assert isinstance(value["k"], tuple) and isinstance(value["k"][0]["a"], tuple)
    assert isinstance(value["e"], m.json_value.FrozenDict)


def test_adopt_parsed_json_keeps_the_depth_limit_and_a_half_adopted_tree_still_freezes() -> None:
    from zigai.messages.json_value import NotAdoptable, adopt_parsed_json, freeze_json

    def nest(levels: int) -> Any:
        value: Any = 1
        for _ in range(levels):
            value = [value]
        return value

    assert adopt_parsed_json(nest(m.json_value.MAX_DEPTH)) == freeze_json(
        nest(m.json_value.MAX_DEPTH), ValueError)
    with pytest.raises(NotAdoptable):
        adopt_parsed_json(nest(m.json_value.MAX_DEPTH + 1))
    with pytest.raises(NotAdoptable):
        adopt_parsed_json({"a": {"b": float("nan")}})
    with pytest.raises(NotAdoptable):
        adopt_parsed_json({1, 2})
    assert adopt_parsed_json(2.5) == 2.5
    half = {"done": [1, {"x": [2]}], "bad": [float("inf")]}
    with pytest.raises(NotAdoptable):
        adopt_parsed_json(half)  # "done" is converted before "bad" refuses
    assert isinstance(half["done"], tuple)
    with pytest.raises(ValueError, match=r"\$\.bad\[0\]: JSON numbers must be finite"):
        freeze_json(half, ValueError)
    del half["bad"]
    assert freeze_json(half, ValueError) == freeze_json({"done": [1, {"x": [2]}]}, ValueError)


def test_only_a_frozen_dict_this_module_built_is_kept_as_it_is() -> None:
    from zigai.messages.json_value import FrozenDict, adopt_parsed_json, freeze_json

    adopted = adopt_parsed_json({"a": [1, {"b": 2}]})
    assert freeze_json(adopted, ValueError) is adopted  # already the frozen copy
    handmade = FrozenDict({"a": [1, 2]})  # a caller's values: not known to be frozen
    frozen = freeze_json(handmade, ValueError)
    assert frozen is not handmade and frozen["a"] == (1, 2)
    with pytest.raises(ValueError, match="finite"):
        freeze_json(FrozenDict({"x": float("nan")}), ValueError)
    part = m.ToolReturnPart("f", "c", adopted)
    assert part.content is adopted
