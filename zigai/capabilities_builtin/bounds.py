"""The bounds every built-in capability applies before a result reaches the model.

Invariants:

* text is cut at its limit (counted in characters) and a one-line marker says how much was
  dropped, so the model knows the result is partial; text at exactly the limit is unchanged;
* lists are cut at their limit the same way (one marker entry names the number dropped);
* limits are ints >= 1, checked at construction.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["BuiltinLimits", "bounded_text", "bounded_list"]


@dataclass(frozen=True, slots=True)
class BuiltinLimits:
    """What the built-in tools may fetch and return (characters, bytes, entries).

    ``max_page_bytes`` bounds a page's download, ``max_page_chars`` the text returned from it;
    ``max_redirects`` the redirects a browser backend follows, each checked by the URL policy.
    ``max_file_bytes`` bounds one repository or skill file read (larger files are returned
    in parts through ``offset``); ``max_search_files`` and ``max_search_matches`` bound one
    repository search and ``max_line_chars`` each matching line it shows.
    """

    max_page_bytes: int = 2 * 1024 * 1024
    max_page_chars: int = 64 * 1024
    max_redirects: int = 5
    max_file_bytes: int = 256 * 1024
    max_listing_entries: int = 1_000
    max_search_files: int = 5_000
    max_search_matches: int = 200
    max_line_chars: int = 400
    max_skills: int = 256
    max_skill_chars: int = 64 * 1024
    max_description_chars: int = 2_048
    max_image_bytes: int = 4 * 1024 * 1024

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"BuiltinLimits.{item.name} must be an int >= 1, got {value!r}")


def bounded_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, followed by a marker naming how many were dropped."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[truncated: {len(text) - limit} more characters]"


def bounded_list(items: list[str], limit: int, what: str) -> list[str]:
    """``items`` cut to ``limit`` entries, followed by one entry naming how many were dropped."""
    if len(items) <= limit:
        return items
    return items[:limit] + [f"[{len(items) - limit} more {what} not shown]"]
