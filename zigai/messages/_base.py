"""Shared validation helpers and the construction error of the message contract.

Every message value validates itself in ``__post_init__`` through these helpers,
so a value that exists is a valid value.  Failures raise :class:`InvalidMessagePart`
naming the class and field that was wrong.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from zigai.errors import MessageError

__all__ = ["InvalidMessagePart"]


class InvalidMessagePart(MessageError):
    """A message or part was constructed with a wrong type, empty identifier or wrong role."""


def owner(value: object) -> str:
    return type(value).__name__


def set_field(value: object, name: str, new: object) -> None:
    """Normalize a field of a frozen dataclass from inside ``__post_init__``."""
    object.__setattr__(value, name, new)


def require_str(value: object, name: str, *, allow_empty: bool = False) -> None:
    text = getattr(value, name)
    if not isinstance(text, str):
        raise InvalidMessagePart(f"{owner(value)}.{name} must be a str, got {type(text).__name__}")
    if not allow_empty and not text:
        raise InvalidMessagePart(f"{owner(value)}.{name} must not be empty")


def optional_str(value: object, name: str, *, allow_empty: bool = False) -> None:
    if getattr(value, name) is not None:
        require_str(value, name, allow_empty=allow_empty)


def require_media_type(value: object, name: str, *, optional: bool = False) -> None:
    media_type = getattr(value, name)
    if media_type is None and optional:
        return
    require_str(value, name)
    main, slash, sub = media_type.partition("/")
    if not slash or not main or not sub or any(c.isspace() for c in media_type):
        raise InvalidMessagePart(
            f"{owner(value)}.{name} must look like 'type/subtype', got {media_type!r}"
        )


def require_instance(value: object, name: str, types: type | tuple[type, ...], *,
                     optional: bool = False) -> None:
    item = getattr(value, name)
    if item is None and optional:
        return
    if not isinstance(item, types):
        raise InvalidMessagePart(
            f"{owner(value)}.{name} must be {_type_names(types)}, got {type(item).__name__}"
        )


def require_bool(value: object, name: str) -> None:
    if not isinstance(getattr(value, name), bool):
        raise InvalidMessagePart(f"{owner(value)}.{name} must be a bool")


def require_bytes(value: object, name: str) -> None:
    data = getattr(value, name)
    if isinstance(data, (bytearray, memoryview)):
        set_field(value, name, bytes(data))
    elif not isinstance(data, bytes):
        raise InvalidMessagePart(f"{owner(value)}.{name} must be bytes, got {type(data).__name__}")


def require_tuple(value: object, name: str, types: type | tuple[type, ...], *,
                  allow_empty: bool = True, what: str | None = None) -> None:
    """Normalize a sequence field to a tuple and check every element's type."""
    items = getattr(value, name)
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise InvalidMessagePart(f"{owner(value)}.{name} must be a sequence")
    items = tuple(items)
    for index, item in enumerate(items):
        if not isinstance(item, types):
            raise InvalidMessagePart(
                f"{owner(value)}.{name}[{index}] must be {what or _type_names(types)}, "
                f"got {type(item).__name__}"
            )
        if isinstance(item, str) and not item:
            raise InvalidMessagePart(f"{owner(value)}.{name}[{index}] must not be empty")
    if not allow_empty and not items:
        raise InvalidMessagePart(f"{owner(value)}.{name} must not be empty")
    set_field(value, name, items)


def require_timestamp(value: object, name: str = "timestamp") -> None:
    """Optional timestamps must be timezone-aware; they are normalized to UTC."""
    stamp = getattr(value, name)
    if stamp is None:
        return
    if not isinstance(stamp, datetime):
        raise InvalidMessagePart(
            f"{owner(value)}.{name} must be a datetime, got {type(stamp).__name__}"
        )
    if stamp.tzinfo is UTC:
        return  # already normalized (fromisoformat gives UTC for "Z" and "+00:00")
    if stamp.tzinfo is None or stamp.utcoffset() is None:
        raise InvalidMessagePart(f"{owner(value)}.{name} must be timezone-aware")
    set_field(value, name, stamp.astimezone(UTC))


def require_literal(value: object, name: str, expected: str) -> None:
    if getattr(value, name) != expected:
        raise InvalidMessagePart(f"{owner(value)}.{name} must be {expected!r}")


def coerce_enum(value: object, name: str, enum_type: Any, *, optional: bool = False) -> None:
    item = getattr(value, name)
    if item is None and optional:
        return
    if isinstance(item, enum_type):
        return
    try:
        set_field(value, name, enum_type(item))
    except (ValueError, TypeError):
        allowed = ", ".join(repr(m.value) for m in enum_type)
        raise InvalidMessagePart(
            f"{owner(value)}.{name} must be one of {allowed}, got {item!r}"
        ) from None


def _type_names(types: type | tuple[type, ...]) -> str:
    if isinstance(types, type):
        return types.__name__
    return " | ".join(t.__name__ for t in types)
