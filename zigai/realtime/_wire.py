"""Bounded frame reading shared by the realtime codecs: JSON objects, typed fields, base64."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from zigai import json as zjson
from zigai.errors import JsonError
from zigai.json import JsonLimitExceeded
from zigai.realtime.events import RealtimeCodecError, RealtimeFrameTooLarge


@dataclass(frozen=True, slots=True)
class FrameLimits:
    """Bounds of one received frame: its bytes, its JSON shape, and its decoded audio."""

    max_frame_bytes: int = 16 * 1024 * 1024
    max_string_bytes: int = 16 * 1024 * 1024
    max_depth: int = 64
    max_items: int = 10_000
    max_audio_bytes: int = 8 * 1024 * 1024

    def json_limits(self) -> zjson.Limits:
        return zjson.Limits(self.max_frame_bytes, self.max_string_bytes, self.max_depth, self.max_items)


def parse_object(frame: str | bytes, limits: FrameLimits, provider: str) -> dict[str, Any]:
    raw = frame.encode() if isinstance(frame, str) else bytes(frame)
    if len(raw) > limits.max_frame_bytes:
        raise RealtimeFrameTooLarge(f"a {provider} frame of {len(raw)} bytes exceeds max_frame_bytes "
                                    f"({limits.max_frame_bytes})")
    try:
        value = zjson.parse(raw, limits.json_limits())
    except JsonLimitExceeded as exc:
        raise RealtimeFrameTooLarge(f"a {provider} frame exceeds the JSON bounds: {exc}") from None
    except JsonError as exc:
        raise RealtimeCodecError(f"a {provider} frame is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise RealtimeCodecError(f"a {provider} frame must be a JSON object")
    return value


class Fields:
    """Typed access to one frame object; every miss names the frame and the field."""

    def __init__(self, value: dict[str, Any], where: str) -> None:
        self.value = value
        self.where = where

    def _fail(self, key: str, expected: str) -> RealtimeCodecError:
        return RealtimeCodecError(f"{self.where}: field {key!r} must be {expected}")

    def text(self, key: str) -> str:
        value = self.value.get(key)
        if not isinstance(value, str):
            raise self._fail(key, "a string")
        return value

    def opt_text(self, key: str) -> str | None:
        value = self.value.get(key)
        if value is not None and not isinstance(value, str):
            raise self._fail(key, "a string")
        return value

    def obj(self, key: str) -> Fields:
        value = self.value.get(key)
        if not isinstance(value, dict):
            raise self._fail(key, "an object")
        return Fields(value, f"{self.where}.{key}")

    def opt_obj(self, key: str) -> Fields | None:
        return None if self.value.get(key) is None else self.obj(key)

    def array(self, key: str) -> list[Any]:
        value = self.value.get(key)
        if not isinstance(value, list):
            raise self._fail(key, "an array")
        return value

    def count(self, key: str) -> int:
        value = self.value.get(key, 0)
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self._fail(key, "a non-negative integer")
        return value

    def flag(self, key: str) -> bool:
        value = self.value.get(key, False)
        if not isinstance(value, bool):
            raise self._fail(key, "a boolean")
        return value


def decode_audio(text: str, limits: FrameLimits, where: str) -> bytes:
    # base64 grows data by 4/3: refuse before decoding anything larger than the bound allows
    if len(text) > (limits.max_audio_bytes + 2) // 3 * 4:
        raise RealtimeFrameTooLarge(f"{where}: decoded audio would exceed max_audio_bytes "
                                    f"({limits.max_audio_bytes})")
    try:
        audio = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise RealtimeCodecError(f"{where}: audio is not valid base64") from None
    if len(audio) > limits.max_audio_bytes:  # the length check above allows up to two bytes more
        raise RealtimeFrameTooLarge(f"{where}: decoded audio exceeds max_audio_bytes")
    return audio


def encode_audio(audio: bytes) -> str:
    return base64.b64encode(audio).decode("ascii")


def dump(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
