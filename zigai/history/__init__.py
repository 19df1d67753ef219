"""ZigAI history: version-2 serialization, version-1 migration, and view processors.

* :func:`stringify` writes the deterministic version-2 envelope
  ``{"version": 2, "messages": [...]}`` (``kind`` / ``part_kind`` discriminators,
  every field of every part, bytes as base64, timestamps ISO-8601 UTC).
* :func:`parse` reads version 2, migrates version 1 (see ``zigai.history.v1``
  for the exact role-based shape) and returns an :class:`Owned` that owns the
  messages until ``close()``.  All input is bounded by the history JSON profile;
  every failure is a :class:`zigai.errors.HistoryError` subclass.
* Processors (``trim_old_messages``, ``compact_adjacent_text``,
  ``summarize_prefix``, ``remove_orphaned_tool_traffic``, ``apply_processors``)
  transform a provider-facing view tuple; the canonical history is never mutated.

Round trip invariant: ``parse(stringify(ms)).messages == tuple(ms)`` and
``stringify`` of the result is byte-identical.
"""

from __future__ import annotations

from zigai.history.encode import HISTORY_VERSION, stringify
from zigai.history.errors import (
    HistoryClosed,
    HistoryTooLarge,
    InvalidHistory,
    InvalidHistoryProcessor,
    UnsupportedHistoryVersion,
)
from zigai.history.owned import Owned, parse
from zigai.history.processors import (
    Processor,
    apply_processors,
    compact_adjacent_text,
    remove_orphaned_tool_traffic,
    summarize_prefix,
    trim_old_messages,
)

__all__ = [
    "HISTORY_VERSION",
    "HistoryClosed",
    "HistoryTooLarge",
    "InvalidHistory",
    "InvalidHistoryProcessor",
    "Owned",
    "Processor",
    "UnsupportedHistoryVersion",
    "apply_processors",
    "compact_adjacent_text",
    "parse",
    "remove_orphaned_tool_traffic",
    "stringify",
    "summarize_prefix",
    "trim_old_messages",
]
