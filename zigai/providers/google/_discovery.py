"""Gemini model discovery on Google AI Studio and Vertex AI, with resource names normalized.

AI Studio: ``GET models?pageSize=N&pageToken=T`` returns ``{"models": [{"name":
"models/gemini-2.5-flash", "displayName", ...}], "nextPageToken"}``.  Vertex AI (Model Garden,
``v1beta1``): ``GET publishers/google/models?pageSize=N&pageToken=T`` returns
``{"publisherModels": [{"name": "publishers/google/models/gemini-2.5-flash", ...}],
"nextPageToken"}``.  In both, the stable id is the last resource segment — exactly what the
Gemini client takes — and the full resource name stays on the descriptor.  An absent or empty
``nextPageToken`` ends the listing.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from zigai.provider.discovery import ModelPage, check_model_id
from zigai.providers._discovery import opt_display_name

__all__ = ["GeminiModelListing", "VertexModelListing"]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")


def _page(value: Any, key: str) -> ModelPage:
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object with a '{key}' array")
    entries = value.get(key, [])
    if not isinstance(entries, list):
        raise ValueError(f"'{key}' must be an array")
    token = value.get("nextPageToken")
    if token is not None and not isinstance(token, str):
        raise ValueError("'nextPageToken' must be a string")
    return ModelPage(entries, token or None)


def _id(name: Any, prefix: str) -> tuple[str, str]:
    resource = check_model_id(name, "'name'")
    if not resource.startswith(prefix):
        raise ValueError(f"resource name {resource!r} does not start with {prefix!r}")
    model_id = resource[len(prefix):]
    if not _ID.match(model_id):
        raise ValueError(f"resource name {resource!r} does not end in a plain model id")
    return model_id, resource


class _PagedByToken:
    collection = ""
    items = ""
    prefix = ""

    def __init__(self, page_size: int) -> None:
        self._page_size = page_size

    def path(self, cursor: str | None) -> str:
        base = f"{self.collection}?pageSize={self._page_size}"
        return base if cursor is None else f"{base}&pageToken={quote(cursor, safe='')}"

    def headers(self) -> tuple[tuple[str, str], ...]:
        return ()

    def page(self, value: Any) -> ModelPage:
        return _page(value, self.items)

    def entry(self, value: dict[str, Any]) -> tuple[str, str, str | None]:
        model_id, resource = _id(value.get("name"), self.prefix)
        return model_id, resource, opt_display_name(value, "displayName")


class GeminiModelListing(_PagedByToken):
    """Google AI Studio ``models.list``."""

    collection, items, prefix = "models", "models", "models/"


class VertexModelListing(_PagedByToken):
    """Vertex AI ``publishers.models.list`` for Google's publisher."""

    collection, items, prefix = "publishers/google/models", "publisherModels", "publishers/google/models/"
