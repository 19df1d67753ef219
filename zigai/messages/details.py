"""Opaque structured data carried by messages: provider replay data, app metadata, file owners.

* :class:`ProviderDetails` — a JSON *object* graph a provider returned and may need
  back unchanged (unknown fields preserved).  Build it with
  :meth:`ProviderDetails.from_value`, which validates JSON-ness and deep-copies;
  malformed JSON is impossible by construction (:class:`InvalidProviderDetails`).
  It is immutable; :meth:`~ProviderDetails.to_value` returns a fresh deep copy.
  Equality and hash are by canonical JSON.
* :class:`Metadata` — the same shape but a distinct type: application-only data
  that is persisted in history and never sent to a model.
* :class:`ProviderPart` — identity and replay data of a provider-generated part
  (``provider_name``, optional ``id``, optional ``details``).
* :class:`UploadedFile` — a file handle qualified by the provider that owns it.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar

from zigai.errors import MessageError
from zigai.messages._base import (
    optional_str,
    require_instance,
    require_literal,
    require_media_type,
    require_str,
)
from zigai.messages.json_value import (
    FrozenDict,
    NotAdoptable,
    adopt_parsed_json,
    canonical_json,
    freeze_json,
    thaw_json,
)

__all__ = [
    "InvalidProviderDetails",
    "Metadata",
    "ProviderDetails",
    "ProviderPart",
    "UploadedFile",
]


class InvalidProviderDetails(MessageError):
    """ProviderDetails or Metadata was given something that is not a JSON object graph."""


_T = TypeVar("_T", bound="_JsonObject")


class _JsonObject(Mapping[str, Any]):
    """An immutable JSON object; nested containers are FrozenDict / tuple."""

    __slots__ = ("_root", "_canonical")

    _root: FrozenDict
    _canonical: str | None
    _label: ClassVar[str] = "JSON object"

    def __init__(self, value: Mapping[str, Any] | None = None) -> None:
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            raise InvalidProviderDetails(
                f"{type(self).__name__} must be a JSON object, got {type(value).__name__}"
            )
        root = freeze_json(value, self._error)
        object.__setattr__(self, "_root", root)
        object.__setattr__(self, "_canonical", None)  # computed on first use (to_json, ==, hash)

    @classmethod
    def _error(cls, message: str) -> Exception:
        return InvalidProviderDetails(f"{cls.__name__}: {message}")

    @classmethod
    def from_value(cls: type[_T], value: Mapping[str, Any]) -> _T:
        """Validate and deep-copy a JSON object (``dict`` with ``str`` keys)."""
        if not isinstance(value, Mapping):
            raise InvalidProviderDetails(
                f"{cls.__name__} must be a JSON object, got {type(value).__name__}"
            )
        return cls(value)

    @classmethod
    def _adopt_parsed(cls: type[_T], value: dict[str, Any]) -> _T:
        """``from_value`` for a dict a JSON decoder just built, reused in place.

        See :func:`~zigai.messages.json_value.adopt_parsed_json`: the caller hands the
        dict over; :class:`~zigai.messages.json_value.NotAdoptable` means "use from_value".
        """
        if type(value) is not dict:
            raise NotAdoptable
        made = object.__new__(cls)
        object.__setattr__(made, "_root", adopt_parsed_json(value))
        object.__setattr__(made, "_canonical", None)
        return made

    def to_value(self) -> dict[str, Any]:
        """A fresh mutable deep copy; changing it never affects this value."""
        return thaw_json(self._root)  # type: ignore[no-any-return,unused-ignore]

    def to_json(self) -> str:
        """Canonical JSON text (sorted keys, no whitespace)."""
        canonical = self._canonical
        if canonical is None:
            canonical = canonical_json(self._root)
            object.__setattr__(self, "_canonical", canonical)
        return canonical

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __getitem__(self, key: str) -> Any:
        return self._root[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._root)

    def __len__(self) -> int:
        return len(self._root)

    def items(self) -> ItemsView[str, Any]:
        """The items as a C-level view (same set semantics, no Python generator per item)."""
        return self._root.items()

    def __eq__(self, other: object) -> bool:
        if type(other) is type(self):
            return self.to_json() == other.to_json()
        if isinstance(other, _JsonObject):
            return False
        if isinstance(other, Mapping):
            return self.to_value() == thaw_json(other)  # JSON equality: a list equals a frozen array
        return NotImplemented

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.to_json()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_json()})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.to_value(),))


class ProviderDetails(_JsonObject):
    """Opaque provider replay data: an immutable JSON object graph, unknown fields preserved."""

    __slots__ = ()


class Metadata(_JsonObject):
    """Application-only JSON object stored with history; never sent to a model."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class ProviderPart:
    """Identity and replay data of a part a provider generated (or must receive back)."""

    provider_name: str
    id: str | None = None
    details: ProviderDetails | None = None

    def __post_init__(self) -> None:
        require_str(self, "provider_name")
        optional_str(self, "id")
        require_instance(self, "details", ProviderDetails, optional=True)


@dataclass(frozen=True, slots=True)
class UploadedFile:
    """A provider-stored file, qualified by the provider that owns the ``file_id``."""

    provider_name: str
    file_id: str
    media_type: str | None = None
    kind: Literal["uploaded-file"] = "uploaded-file"

    def __post_init__(self) -> None:
        require_str(self, "provider_name")
        require_str(self, "file_id")
        require_media_type(self, "media_type", optional=True)
        require_literal(self, "kind", "uploaded-file")
