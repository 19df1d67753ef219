"""Model discovery: bounded, paginated ``list_models`` results owned by the caller.

Job
    The values and the shared page loop behind ``Provider.list_models``.  A provider module
    supplies a :class:`ModelListing` dialect (the relative path of each page, how a page
    names its entries and its next cursor, and how one entry becomes a
    :class:`ProviderModelDescriptor`); :func:`collect_models` runs the authenticated GET
    requests through the provider boundary and returns an :class:`OwnedProviderModels`.

Invariants
    * Bounds hold before growth: a next page is never requested once ``max_pages`` pages were
      read (:class:`DiscoveryLimitExceeded`, ``limit_name="max_pages"``), and a page whose
      entries would take the total past ``max_models`` is refused before any entry of it is
      kept.  Exactly ``max_pages`` pages / ``max_models`` models are accepted.  Each page is
      parsed with the provider-response JSON limits.
    * A malformed page or entry raises :class:`InvalidModelListing` naming the page and entry;
      the same stable id twice raises :class:`DuplicateDiscoveredModel`; a cursor that repeats
      (a server looping) is malformed.  Nothing is silently dropped or collapsed.
    * Descriptors carry a stable ``id`` usable with the provider's client, the provider's raw
      ``resource_name`` and the whole entry as frozen, *uninterpreted* ``metadata``.  Nothing
      in a descriptor is a trusted capability: see :mod:`zigai.models.catalog`.
    * The result owns copies only; after :meth:`OwnedProviderModels.close` every accessor
      raises :class:`DiscoveryResultClosed`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from zigai._owner import Owner
from zigai.control import RunControl
from zigai.errors import ProviderError
from zigai.messages.json_value import FrozenDict, freeze_json

__all__ = [
    "DEFAULT_DISCOVERY_LIMITS",
    "MAX_CURSOR_CHARS",
    "MAX_MODEL_ID_CHARS",
    "DiscoveryLimitExceeded",
    "DiscoveryLimits",
    "DiscoveryResultClosed",
    "DuplicateDiscoveredModel",
    "InvalidModelListing",
    "ModelDiscoveryError",
    "ModelListing",
    "ModelPage",
    "OwnedProviderModels",
    "ProviderModelDescriptor",
    "check_model_id",
    "collect_models",
]

MAX_MODEL_ID_CHARS = 256
"""The longest stable model id (and resource name) a listing may report."""
MAX_CURSOR_CHARS = 2048
"""The longest pagination cursor a listing may hand back."""

_MODEL_ID = re.compile(r"^[\x21-\x7e]+$")


class ModelDiscoveryError(ProviderError):
    """Model discovery failed locally: a bound, a malformed listing, or a closed result."""


class DiscoveryLimitExceeded(ModelDiscoveryError):
    """A listing needs more pages or models than ``DiscoveryLimits`` allow.

    ``limit_name`` is ``"max_pages"`` or ``"max_models"``; ``limit`` is the configured bound.
    """

    def __init__(self, message: str, *, limit_name: str = "", limit: int = 0) -> None:
        super().__init__(message)
        self.limit_name = limit_name
        self.limit = limit


class InvalidModelListing(ModelDiscoveryError):
    """A listing page or one of its entries does not have the documented shape.

    ``page`` is the 1-based page number and ``entry`` the 0-based entry index (None when the
    page itself is malformed).
    """

    def __init__(self, message: str, *, page: int = 0, entry: int | None = None) -> None:
        super().__init__(message)
        self.page = page
        self.entry = entry


class DuplicateDiscoveredModel(ModelDiscoveryError):
    """One listing reported the same stable model id twice (``model_id``)."""

    def __init__(self, message: str, *, model_id: str = "") -> None:
        super().__init__(message)
        self.model_id = model_id


class DiscoveryResultClosed(ModelDiscoveryError):
    """An :class:`OwnedProviderModels` was used after ``close()``."""


@dataclass(frozen=True, slots=True)
class DiscoveryLimits:
    """Bounds for one ``list_models`` call.

    ``max_pages`` and ``max_models`` bound the whole listing; ``page_size`` is the page size
    requested from APIs that take one (Anthropic ``limit``, Google ``pageSize``; both accept
    at most 1000).
    """

    max_pages: int = 20
    max_models: int = 10_000
    page_size: int = 1000

    def __post_init__(self) -> None:
        for name in ("max_pages", "max_models", "page_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"DiscoveryLimits.{name} must be a positive int")
        if self.page_size > 1000:
            raise ValueError("DiscoveryLimits.page_size must be at most 1000")


DEFAULT_DISCOVERY_LIMITS = DiscoveryLimits()


@dataclass(frozen=True, slots=True)
class ProviderModelDescriptor:
    """One discovered model: identity plus the provider's raw, untrusted description.

    ``id`` is the stable id to pass to the provider's ``Client``; ``resource_name`` is the name
    the provider reported (``models/gemini-2.5-flash``, ``publishers/google/models/...`` or
    the id itself); ``metadata`` is the complete entry, frozen and uninterpreted.
    """

    provider_name: str
    id: str
    resource_name: str
    display_name: str | None
    metadata: FrozenDict

    def metadata_value(self) -> dict[str, Any]:
        """A fresh mutable copy of the raw entry."""
        from zigai.messages.json_value import thaw_json

        value: dict[str, Any] = thaw_json(self.metadata)
        return value


@dataclass(frozen=True, slots=True)
class ModelPage:
    """What a dialect found on one page: the raw entries and the next cursor (None: last)."""

    entries: Sequence[Any]
    next_cursor: str | None


class ModelListing(Protocol):
    """A provider's list-models contract (one per wire dialect)."""

    def path(self, cursor: str | None) -> str:
        """The relative GET path of the first page (``cursor`` None) or of a later page."""
        ...

    def headers(self) -> tuple[tuple[str, str], ...]:
        """Adapter headers every page request carries (``anthropic-version`` ...)."""
        ...

    def page(self, value: Any) -> ModelPage:
        """The entries and next cursor of one decoded page; raise ``ValueError`` if malformed."""
        ...

    def entry(self, value: Any) -> tuple[str, str, str | None]:
        """``(id, resource_name, display_name)`` of one entry; raise ``ValueError`` if malformed."""
        ...


def check_model_id(value: Any, what: str = "model id") -> str:
    """``value`` when it is a plausible stable id (visible ASCII, bounded); else ValueError."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string")
    if len(value) > MAX_MODEL_ID_CHARS or not _MODEL_ID.match(value):
        raise ValueError(
            f"{what} must be at most {MAX_MODEL_ID_CHARS} visible ASCII characters"
        )
    return value


class OwnedProviderModels(Owner):
    """The models one ``list_models`` call found, in listing order; close it after use."""

    __slots__ = ("_provider_name", "_models", "_by_id", "_pages")

    _closed_error = DiscoveryResultClosed

    def __init__(
        self, provider_name: str, models: Sequence[ProviderModelDescriptor], pages: int
    ) -> None:
        super().__init__()
        by_id: dict[str, ProviderModelDescriptor] = {}
        for descriptor in models:
            if descriptor.provider_name != provider_name:
                raise InvalidModelListing(
                    f"descriptor {descriptor.id!r} names provider {descriptor.provider_name!r}, "
                    f"not {provider_name!r}"
                )
            if descriptor.id in by_id:
                raise DuplicateDiscoveredModel(
                    f"{provider_name} listed model {descriptor.id!r} twice",
                    model_id=descriptor.id,
                )
            by_id[descriptor.id] = descriptor
        self._provider_name = provider_name
        self._models = tuple(models)
        self._by_id = by_id
        self._pages = pages

    def _release(self) -> None:
        self._models = ()
        self._by_id = {}

    @property
    def provider_name(self) -> str:
        self._check()
        return self._provider_name

    @property
    def models(self) -> tuple[ProviderModelDescriptor, ...]:
        self._check()
        return self._models

    @property
    def pages(self) -> int:
        """How many pages the listing took."""
        self._check()
        return self._pages

    def ids(self) -> tuple[str, ...]:
        self._check()
        return tuple(d.id for d in self._models)

    def get(self, model_id: str) -> ProviderModelDescriptor | None:
        """The descriptor with exactly this id (case-sensitive), or None."""
        self._check()
        return self._by_id.get(model_id)

    def __iter__(self) -> Iterator[ProviderModelDescriptor]:
        self._check()
        return iter(self._models)

    def __len__(self) -> int:
        self._check()
        return len(self._models)

    def __repr__(self) -> str:
        if self._closed:
            return "OwnedProviderModels(closed)"
        return f"OwnedProviderModels({self._provider_name!r}, {len(self._models)} models)"


def collect_models(
    provider: Any,
    listing: ModelListing,
    *,
    limits: DiscoveryLimits = DEFAULT_DISCOVERY_LIMITS,
    control: RunControl | None = None,
    deadline: float | None = None,
) -> OwnedProviderModels:
    """Read every page of ``listing`` through ``provider.send`` within the limits.

    ``provider`` is the authenticated boundary (its ``name`` scopes the descriptors).
    """
    from zigai.provider.http_request import ProviderHttpRequest

    if not isinstance(limits, DiscoveryLimits):
        raise TypeError("discovery limits must be a DiscoveryLimits value")
    bounds = limits
    provider_name = str(provider.name)
    found: list[ProviderModelDescriptor] = []
    seen: set[str] = set()
    cursors: set[str] = set()
    cursor: str | None = None
    pages = 0
    while True:
        if pages >= bounds.max_pages:
            raise DiscoveryLimitExceeded(
                f"{provider_name} has more than {bounds.max_pages} pages of models; raise "
                "DiscoveryLimits.max_pages to read further",
                limit_name="max_pages", limit=bounds.max_pages,
            )
        response = provider.send(ProviderHttpRequest(
            listing.path(cursor), method="GET", headers=listing.headers(), control=control,
            deadline=deadline,
        ))
        pages += 1
        value = response.json()
        try:
            page = listing.page(value)
        except ValueError as exc:
            raise InvalidModelListing(
                f"{provider_name} model listing page {pages} is malformed: {exc}", page=pages
            ) from None
        if len(found) + len(page.entries) > bounds.max_models:
            raise DiscoveryLimitExceeded(
                f"{provider_name} lists more than {bounds.max_models} models; raise "
                "DiscoveryLimits.max_models to keep them all",
                limit_name="max_models", limit=bounds.max_models,
            )
        for index, raw in enumerate(page.entries):
            where = f"{provider_name} model listing page {pages} entry {index}"
            if not isinstance(raw, dict):
                raise InvalidModelListing(f"{where} is not a JSON object", page=pages, entry=index)
            try:
                model_id, resource_name, display_name = listing.entry(raw)
                metadata = freeze_json(raw, ValueError)
            except ValueError as exc:
                raise InvalidModelListing(f"{where} is malformed: {exc}", page=pages,
                                          entry=index) from None
            if model_id in seen:
                raise DuplicateDiscoveredModel(
                    f"{where} repeats model id {model_id!r}", model_id=model_id
                )
            seen.add(model_id)
            found.append(ProviderModelDescriptor(
                provider_name, model_id, resource_name, display_name, metadata
            ))
        cursor = page.next_cursor
        if cursor is None:
            return OwnedProviderModels(provider_name, found, pages)
        if not isinstance(cursor, str) or not cursor or len(cursor) > MAX_CURSOR_CHARS:
            raise InvalidModelListing(
                f"{provider_name} model listing page {pages} has an unusable next-page cursor",
                page=pages,
            )
        if cursor in cursors:
            raise InvalidModelListing(
                f"{provider_name} model listing page {pages} repeats an earlier cursor",
                page=pages,
            )
        cursors.add(cursor)
