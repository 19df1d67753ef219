"""Formatted scalars and pydantic models for reflection (private).

JSON has no date, UUID, decimal, set or bytes values, so each travels as a documented JSON
form and is checked on the way in:

======================  =====================================================  ===============
Python type             JSON Schema                                            JSON value
======================  =====================================================  ===============
``datetime``            ``{"type": "string", "format": "date-time"}``          ISO 8601
``date`` / ``time``     ``format: "date"`` / ``format: "time"``                ISO 8601
``timedelta``           ``format: "duration"``                                 ISO 8601 (``P1DT2H``); seconds accepted
``UUID``                ``format: "uuid"``                                     canonical text
``Decimal``             ``anyOf`` number / string (checked when decoded)       exact string
``bytes``               ``{"type": "string", "format": "base64"}``             standard base64
``set[T]``, ``frozenset[T]``  ``array`` with ``uniqueItems: true``             array
pydantic ``BaseModel``  the model's own ``model_json_schema()``                ``model_dump(mode="json")``
======================  =====================================================  ===============

pydantic is optional: a model class can only exist once pydantic is imported, so it is looked
up in ``sys.modules`` and never imported here.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import decimal
import math
import re
import sys
import uuid
from typing import Any

__all__ = [
    "FORMATTED_TYPES", "FormatError", "decode_formatted", "encode_formatted", "formatted_schema",
    "is_pydantic_model", "is_pydantic_value",
]

#: Formatted scalar types and their shape kind (exact types: ``datetime`` before ``date``).
FORMATTED_TYPES: dict[type, str] = {
    datetime.datetime: "datetime", datetime.date: "date", datetime.time: "time",
    datetime.timedelta: "timedelta", uuid.UUID: "uuid", decimal.Decimal: "decimal", bytes: "bytes",
}

_DECIMAL_TEXT = r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$"
_SCHEMAS: dict[str, dict[str, Any]] = {
    "datetime": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"},
    "time": {"type": "string", "format": "time"},
    "timedelta": {"type": "string", "format": "duration"},
    "uuid": {"type": "string", "format": "uuid"},
    "decimal": {"anyOf": [{"type": "number"}, {"type": "string"}]},
    "bytes": {"type": "string", "format": "base64"},
}
_DURATION = re.compile(
    r"^(?P<sign>-)?P(?:(?P<weeks>\d+(?:\.\d+)?)W)?(?:(?P<days>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<hours>\d+(?:\.\d+)?)H)?(?:(?P<minutes>\d+(?:\.\d+)?)M)?"
    r"(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$"
)
_ISO_NAMES = {"datetime": "an ISO 8601 date-time", "date": "an ISO 8601 date (YYYY-MM-DD)",
              "time": "an ISO 8601 time (HH:MM[:SS])",
              "timedelta": "an ISO 8601 duration (e.g. PT1H30M) or a number of seconds",
              "uuid": "a UUID string", "decimal": "a decimal number or decimal string",
              "bytes": "a base64 string"}


def formatted_schema(kind: str) -> dict[str, Any]:
    """A fresh schema for a formatted scalar kind."""
    import copy

    return copy.deepcopy(_SCHEMAS[kind])


def is_pydantic_model(tp: Any) -> bool:
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(tp, type) and issubclass(tp, pydantic.BaseModel)


def is_pydantic_value(value: Any) -> bool:
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(value, pydantic.BaseModel)


class FormatError(ValueError):
    """A JSON value is not the documented form of a formatted scalar (message: what was expected)."""


def expected(kind: str) -> str:
    return _ISO_NAMES[kind]


def decode_formatted(kind: str, value: Any) -> Any:
    """The Python value of ``value`` for ``kind``; raises :class:`FormatError`."""
    try:
        result = _decode(kind, value)
    except (ValueError, TypeError, ArithmeticError, binascii.Error):
        result = None
    if result is None:
        raise FormatError(f"expected {expected(kind)}")
    return result


def _decode(kind: str, value: Any) -> Any:
    if kind == "decimal":
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return decimal.Decimal(value)
        if isinstance(value, float):
            return decimal.Decimal(repr(value)) if math.isfinite(value) else None
        if isinstance(value, str) and re.match(_DECIMAL_TEXT, value):
            return decimal.Decimal(value)
        return None
    if kind == "timedelta":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return datetime.timedelta(seconds=value) if math.isfinite(value) else None
        return _parse_duration(value) if isinstance(value, str) else None
    if not isinstance(value, str):
        return None
    if kind == "datetime":
        return datetime.datetime.fromisoformat(value)
    if kind == "date":
        return datetime.date.fromisoformat(value) if len(value) == 10 else None
    if kind == "time":
        return datetime.time.fromisoformat(value)
    if kind == "uuid":
        return uuid.UUID(value)
    return base64.b64decode(value.encode("ascii"), validate=True)  # bytes


def _parse_duration(text: str) -> datetime.timedelta | None:
    match = _DURATION.match(text)
    if match is None or text in ("P", "-P") or text.endswith("T"):
        return None
    parts = {k: float(v) for k, v in match.groupdict().items() if v and k != "sign"}
    delta = datetime.timedelta(**parts)
    return -delta if match.group("sign") else delta


def _format_duration(delta: datetime.timedelta) -> str:
    sign = "-" if delta < datetime.timedelta(0) else ""
    delta = abs(delta)
    seconds = delta.seconds + delta.microseconds / 1_000_000
    text = f"{sign}P{delta.days}D" if delta.days else f"{sign}P"
    if seconds or not delta.days:
        shown = f"{seconds:.6f}".rstrip("0").rstrip(".")
        text += f"T{shown}S"
    return text


def encode_formatted(value: Any) -> Any:
    """The JSON form of a formatted scalar, pydantic model, set or frozenset (else ``NotImplemented``)."""
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return _format_duration(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise FormatError(f"{value} is not a finite decimal")
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if is_pydantic_value(value):
        return value.model_dump(mode="json")
    return NotImplemented
