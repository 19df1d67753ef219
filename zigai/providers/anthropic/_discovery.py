"""Anthropic model discovery: ``GET models`` with ``limit`` / ``after_id`` pagination.

The documented page is ``{"data": [{"type": "model", "id", "display_name", "created_at"}],
"has_more", "first_id", "last_id"}``; the next page is requested with ``after_id=<last_id>``.
Every request carries ``anthropic-version``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from zigai.provider.discovery import ModelPage, check_model_id
from zigai.providers._discovery import opt_display_name

__all__ = ["AnthropicModelListing"]


class AnthropicModelListing:
    def __init__(self, page_size: int, api_version: str) -> None:
        self._page_size = page_size
        self._api_version = api_version

    def path(self, cursor: str | None) -> str:
        base = f"models?limit={self._page_size}"
        return base if cursor is None else f"{base}&after_id={quote(cursor, safe='')}"

    def headers(self) -> tuple[tuple[str, str], ...]:
        return (("anthropic-version", self._api_version),)

    def page(self, value: Any) -> ModelPage:
        if not isinstance(value, dict) or not isinstance(value.get("data"), list):
            raise ValueError("expected a JSON object with a 'data' array")
        has_more = value.get("has_more")
        if not isinstance(has_more, bool):
            raise ValueError("'has_more' must be a boolean")
        if not has_more:
            return ModelPage(value["data"], None)
        cursor = value.get("last_id")
        if not isinstance(cursor, str) or not value["data"]:
            raise ValueError("'has_more' is true but 'last_id' does not name the next page")
        return ModelPage(value["data"], cursor)

    def entry(self, value: dict[str, Any]) -> tuple[str, str, str | None]:
        model_id = check_model_id(value.get("id"), "'id'")
        if value.get("type", "model") != "model":
            raise ValueError(f"'type' is {value.get('type')!r}, not 'model'")
        return model_id, model_id, opt_display_name(value, "display_name")
