"""Key validation and the bounded-JSON round trip shared by the in-memory runtime stores.

Invariant: a stored payload is its canonical JSON text, checked against the store's limits
before anything changes; every read decodes a fresh value, so callers never share state with
the store or with each other.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from zigai import json as zjson
from zigai.runtime.errors import InvalidRuntimeRecord

__all__ = ["KEY_PATTERN", "check_key", "encode_payload", "decode_payload"]

KEY_PATTERN = re.compile(r"[A-Za-z0-9_.:@/-]+")


def check_key(value: Any, what: str, max_chars: int) -> str:
    """``value`` when it is a non-empty ``[A-Za-z0-9_.:@/-]`` string of at most ``max_chars``."""
    if not isinstance(value, str) or not KEY_PATTERN.fullmatch(value):
        raise InvalidRuntimeRecord(f"{what} {value!r} must be a non-empty string of [A-Za-z0-9_.:@/-]")
    if len(value) > max_chars:
        raise InvalidRuntimeRecord(f"{what} is {len(value)} characters; the limit is {max_chars}")
    return value


def encode_payload(value: Any, limits: zjson.Limits, what: str, too_large: Callable[..., Exception]) -> str:
    """Canonical JSON text of ``value`` within ``limits`` (``too_large(message, limit=...)`` if not)."""
    try:
        text = zjson.dumps(value)
    except zjson.ValidationError as exc:
        raise InvalidRuntimeRecord(f"{what} is not a JSON value ({exc})") from None
    try:
        zjson.validate(text, limits)
    except zjson.JsonLimitExceeded as exc:
        raise too_large(f"{what} exceeds its JSON limits ({exc})", limit=exc.limit or 0) from None
    return text


def decode_payload(text: str) -> Any:
    """A fresh value from text :func:`encode_payload` produced (already within its limits)."""
    return zjson.parse(text, _TRUSTED)


_TRUSTED = zjson.Limits(1 << 40, 1 << 40, 1 << 20, 1 << 40)
