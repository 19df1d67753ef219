"""The :class:`Limits` value: four positive integer bounds for one JSON boundary.

Invariant: every field is a plain ``int`` (not ``bool``) greater than zero;
construction with anything else raises ``ValueError``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds applied to one untrusted JSON document before it is decoded.

    * ``max_document_bytes`` -- encoded UTF-8 size of the whole document;
    * ``max_value_bytes`` -- decoded UTF-8 size of any one string (object keys
      included), or encoded size of one number token;
    * ``max_depth`` -- container nesting depth (``[]`` is depth 1, a scalar
      document is depth 0);
    * ``max_items`` -- members of one object or elements of one array.

    Exactly-at-limit is accepted; one more fails with the named error.
    """

    max_document_bytes: int
    max_value_bytes: int
    max_depth: int
    max_items: int

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if type(value) is not int:
                raise ValueError(f"Limits.{field.name} must be an int, got {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"Limits.{field.name} must be greater than zero, got {value}")
