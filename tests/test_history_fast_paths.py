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
from zigai.history import encode


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
