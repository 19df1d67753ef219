"""Tool arguments and outputs beyond plain JSON (issue 12): dates and times, durations, UUIDs,
decimals, sets, bytes and pydantic models — schema, decoding at the boundary, encoding back."""

from __future__ import annotations

import datetime
import decimal
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from zigai.json_schema import is_valid, validate_schema
from zigai.reflect import DecodeError, EncodeError, decode, encode, json_schema, tool

UTC = datetime.UTC


@dataclass
class Booking:
    when: datetime.datetime
    guests: frozenset[str]
    deposit: decimal.Decimal


CASES: list[tuple[Any, Any, Any]] = [
    (datetime.datetime, "2026-12-03T08:00:00+00:00", datetime.datetime(2026, 12, 3, 8, tzinfo=UTC)),
    (datetime.date, "2026-12-03", datetime.date(2026, 12, 3)),
    (datetime.time, "08:30:00", datetime.time(8, 30)),
    (datetime.timedelta, "P1DT2H", datetime.timedelta(days=1, hours=2)),
    (uuid.UUID, "12345678-1234-5678-1234-567812345678", uuid.UUID("12345678-1234-5678-1234-567812345678")),
    (decimal.Decimal, "0.10", decimal.Decimal("0.10")),
    (bytes, "aGVsbG8=", b"hello"),
]


@pytest.mark.parametrize(("tp", "wire", "value"), CASES, ids=[c[0].__name__ for c in CASES])
def test_formatted_scalars_round_trip_and_match_their_schema(tp: Any, wire: Any, value: Any) -> None:
    schema = json_schema(tp)
    validate_schema(schema)
    assert is_valid(wire, schema)
    assert decode(tp, wire) == value
    encoded = encode(value)
    assert decode(tp, encoded) == value and is_valid(encoded, schema)


@pytest.mark.parametrize(("tp", "bad"), [
    (datetime.datetime, "yesterday"), (datetime.date, "2026-12-03T08:00"), (datetime.time, 830),
    (datetime.timedelta, "P"), (datetime.timedelta, "1 day"), (uuid.UUID, "not-a-uuid"),
    (decimal.Decimal, "1,5"), (decimal.Decimal, True), (decimal.Decimal, float("nan")),
    (bytes, "***"),
])
def test_wrong_forms_are_refused_naming_the_expected_form(tp: Any, bad: Any) -> None:
    with pytest.raises(DecodeError, match="expected"):
        decode(tp, bad)


def test_durations_accept_seconds_and_signs_and_encode_as_iso() -> None:
    assert decode(datetime.timedelta, 90) == datetime.timedelta(seconds=90)
    assert decode(datetime.timedelta, "-PT1.5S") == -datetime.timedelta(seconds=1.5)
    assert decode(datetime.timedelta, "P2W") == datetime.timedelta(weeks=2)
    assert encode(datetime.timedelta(days=1, seconds=5)) == "P1DT5S"
    assert encode(datetime.timedelta(0)) == "PT0S"
    assert encode(-datetime.timedelta(minutes=1)) == "-PT60S"


def test_decimals_stay_exact_and_numbers_are_accepted() -> None:
    assert decode(decimal.Decimal, 0.1) == decimal.Decimal("0.1")
    assert decode(decimal.Decimal, 3) == decimal.Decimal(3)
    assert encode(decimal.Decimal("1.10")) == "1.10"
    with pytest.raises(EncodeError, match="finite"):
        encode(decimal.Decimal("NaN"))


def test_sets_are_unique_arrays() -> None:
    schema = json_schema(set[str])
    assert schema == {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    assert decode(frozenset[int], [3, 1]) == frozenset({1, 3})
    assert isinstance(decode(set[int], [1]), set)
    with pytest.raises(DecodeError, match="duplicate"):
        decode(set[int], [1, 1])
    with pytest.raises(DecodeError, match="array"):
        decode(set[int], "1")
    assert encode({"b", "a"}) == ["a", "b"]
    with pytest.raises(Exception, match="set"):
        json_schema(set)


def test_a_tool_receives_typed_values_and_its_output_is_encoded() -> None:
    def book(booking: Booking) -> dict[str, Any]:
        """Book a table."""
        return {"id": uuid.UUID(int=1), "on": booking.when.date(), "paid": booking.deposit}

    made = tool("book", None, book)
    props = made.parameters_json_schema["properties"]
    assert props["when"]["format"] == "date-time" and props["guests"]["uniqueItems"] is True
    booking = made.validate_arguments(
        '{"when": "2026-12-24T19:30:00", "guests": ["ann", "bo"], "deposit": "25.00"}').value
    assert isinstance(booking, Booking) and booking.when.hour == 19
    assert booking.deposit == decimal.Decimal("25.00") and booking.guests == {"ann", "bo"}
    assert encode(book(booking)) == {"id": str(uuid.UUID(int=1)), "on": "2026-12-24", "paid": "25.00"}


def test_pydantic_models_use_their_own_schema_and_validation() -> None:
    pydantic = pytest.importorskip("pydantic", reason="pydantic is in the dev extra: pip install -e '.[dev]'")

    class Address(pydantic.BaseModel):
        city: str

    class Person(pydantic.BaseModel):
        name: str
        age: int = 0
        home: Address

    schema = json_schema(list[Person])
    validate_schema(schema)
    assert schema["items"]["title"] == "Person" and set(schema["$defs"]) == {"Address"}
    assert schema["items"]["properties"]["home"] == {"$ref": "#/$defs/Address"}
    people = decode(list[Person], [{"name": "Ann", "home": {"city": "Oslo"}}])
    assert people == [Person(name="Ann", home=Address(city="Oslo"))]
    assert encode(people[0]) == {"name": "Ann", "age": 0, "home": {"city": "Oslo"}}
    with pytest.raises(DecodeError, match="Person rejected the value"):
        decode(Person, {"name": "Ann"})
