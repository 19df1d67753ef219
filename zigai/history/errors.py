"""Named errors of ``zigai.history`` (all derive from :class:`zigai.errors.HistoryError`).

Constructors pass only the message to ``Exception``; extra data lives in keyword
attributes so every error pickles with it.
"""

from __future__ import annotations

from zigai.errors import HistoryError

__all__ = [
    "HistoryClosed",
    "HistoryTooLarge",
    "InvalidHistory",
    "InvalidHistoryProcessor",
    "UnsupportedHistoryVersion",
]


class InvalidHistory(HistoryError):
    """The document is not valid history; ``path`` names the offending JSON location."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


class UnsupportedHistoryVersion(HistoryError):
    """The document's ``version`` is not one this parser reads (1 and 2)."""

    def __init__(self, message: str, *, version: object = None) -> None:
        super().__init__(message)
        self.version = version


class HistoryTooLarge(HistoryError):
    """The document exceeds the history JSON limits (document, value, depth or items)."""


class HistoryClosed(HistoryError):
    """A closed :class:`~zigai.history.Owned` was used."""


class InvalidHistoryProcessor(HistoryError):
    """A processor was misconfigured or returned something other than messages."""
