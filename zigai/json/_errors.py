"""Named errors of bounded JSON: one malformed-input error and four limit errors.

Invariants: every class derives from :class:`zigai.errors.JsonError`; constructors
pass only the message positionally to ``Exception`` and keep structured data
(``limit``, ``observed``, ``offset``, ``kind``) as attributes, so every error
pickles losslessly.  ``offset`` is a byte offset into the UTF-8 document.
"""

from __future__ import annotations

from zigai.errors import JsonError

__all__ = [
    "MalformedJson",
    "JsonLimitExceeded",
    "DocumentTooLarge",
    "ValueTooLarge",
    "NestingTooDeep",
    "TooManyItems",
]


class MalformedJson(JsonError):
    """The input is not exactly one well-formed JSON document (or not UTF-8).

    ``offset`` is the byte offset of the problem when it is known, else ``None``.
    """

    def __init__(self, message: str, *, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset


class JsonLimitExceeded(JsonError):
    """A document exceeded one of its :class:`zigai.json.Limits`.

    ``limit`` is the configured bound; ``observed`` is the measured size when the
    scan measured it exactly (``None`` when only "more than ``limit``" is known).
    """

    def __init__(
        self, message: str, *, limit: int | None = None, observed: int | None = None
    ) -> None:
        super().__init__(message)
        self.limit = limit
        self.observed = observed


class DocumentTooLarge(JsonLimitExceeded):
    """The encoded UTF-8 document is longer than ``max_document_bytes``."""


class ValueTooLarge(JsonLimitExceeded):
    """One string (decoded, in UTF-8 bytes) or number token exceeds ``max_value_bytes``.

    ``kind`` is ``"string"`` or ``"number"``; ``offset`` is the byte offset of the
    token when the scan located it, else ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        limit: int | None = None,
        observed: int | None = None,
        kind: str | None = None,
        offset: int | None = None,
    ) -> None:
        super().__init__(message, limit=limit, observed=observed)
        self.kind = kind
        self.offset = offset


class NestingTooDeep(JsonLimitExceeded):
    """Arrays and objects nest deeper than ``max_depth`` (``[]`` is depth 1)."""


class TooManyItems(JsonLimitExceeded):
    """One array has more elements, or one object more members, than ``max_items``."""
