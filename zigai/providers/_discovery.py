"""The list-models dialects shared by several providers, and the one-call helper they use.

Job
    :class:`OpenAIStyleListing` reads ``GET models`` as OpenAI documents it (``{"object":
    "list", "data": [{"id": ...}, ...]}``) and follows the cursor convention of OpenAI's list
    endpoints when a server paginates (``has_more`` with ``last_id``, next page
    ``models?after=<id>``).  OpenAI, every OpenAI-compatible provider and the named
    compatible modules use it.  :func:`list_models_with` resolves the limits and runs the
    shared bounded page loop (:func:`zigai.provider.discovery.collect_models`).

Invariants: dialects only interpret shape; bounds, duplicates and ownership live in
:mod:`zigai.provider.discovery`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from zigai.control import RunControl
from zigai.provider.discovery import (
    DEFAULT_DISCOVERY_LIMITS,
    DiscoveryLimits,
    ModelListing,
    ModelPage,
    OwnedProviderModels,
    check_model_id,
    collect_models,
)

__all__ = ["OpenAIStyleListing", "list_models_with", "opt_display_name"]


def opt_display_name(entry: dict[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be a string")
    return value


class OpenAIStyleListing:
    """``GET models``; pages only when the server says ``has_more``."""

    def path(self, cursor: str | None) -> str:
        return "models" if cursor is None else f"models?after={quote(cursor, safe='')}"

    def headers(self) -> tuple[tuple[str, str], ...]:
        return ()

    def page(self, value: Any) -> ModelPage:
        if not isinstance(value, dict):
            raise ValueError("expected a JSON object with a 'data' array")
        if value.get("object", "list") != "list":
            raise ValueError(f"'object' is {value.get('object')!r}, not 'list'")
        data = value.get("data")
        if not isinstance(data, list):
            raise ValueError("'data' must be an array")
        has_more = value.get("has_more", False)
        if not isinstance(has_more, bool):
            raise ValueError("'has_more' must be a boolean")
        if not has_more:
            return ModelPage(data, None)
        cursor = value.get("last_id")
        if cursor is None and data and isinstance(data[-1], dict):
            cursor = data[-1].get("id")
        if not isinstance(cursor, str) or not data:
            raise ValueError("'has_more' is true but no 'last_id' names the next page")
        return ModelPage(data, cursor)

    def entry(self, value: dict[str, Any]) -> tuple[str, str, str | None]:
        model_id = check_model_id(value.get("id"), "'id'")
        if value.get("object", "model") != "model":
            raise ValueError(f"'object' is {value.get('object')!r}, not 'model'")
        return model_id, model_id, None


def list_models_with(
    provider: Any,
    make_listing: Callable[[DiscoveryLimits], ModelListing],
    *,
    limits: DiscoveryLimits | None,
    default_limits: DiscoveryLimits | None,
    control: RunControl | None,
    deadline: float | None,
) -> OwnedProviderModels:
    """Resolve the bounds (call argument, then the provider option, then the default) and read
    the listing ``make_listing(bounds)`` describes through ``provider``."""
    bounds = limits if limits is not None else default_limits
    if bounds is None:
        bounds = DEFAULT_DISCOVERY_LIMITS
    if not isinstance(bounds, DiscoveryLimits):
        raise TypeError("discovery limits must be a DiscoveryLimits value")
    return collect_models(provider, make_listing(bounds), limits=bounds, control=control,
                          deadline=deadline)
