"""The model catalog: trusted, validated facts about models, kept apart from live discovery.

Job
    :class:`ModelCatalog` holds :class:`ModelCatalogEntry` values — a provider-scoped canonical
    id, its aliases, :class:`ModelCatalogLimits`, a :class:`ModelDeprecation` with an optional
    replacement, a trusted :class:`~zigai.model.ModelProfile` and the HTTPS page the facts come
    from.  :meth:`ModelCatalog.resolve` maps a requested id to a :class:`ResolvedModel`.
    :func:`merge_model_discovery` joins a live :class:`~zigai.provider.OwnedProviderModels`
    with the catalog into an :class:`OwnedDiscoveredCatalog`.  :func:`builtin_model_catalog` is
    the generated snapshot (``data/model_catalog.json`` -> ``_catalog_data.py``).

Invariants
    * Validation happens once, at construction: ids and aliases share one namespace per
      provider, so any repeat is :class:`ModelCatalogCollision`; replacements must name another
      canonical id of the same provider and never form a cycle
      (:class:`InvalidCatalogReplacement`); limits are positive and coherent, dates ISO and
      ordered, provider names and ids plain (:class:`InvalidCatalogEntry`); source links are
      absolute HTTPS URLs (:class:`InvalidCatalogSourceLink`).
    * Resolution is exact and case-sensitive: no prefix matching, no normalization, no
      fallback to another provider.  Unknown ids resolve to None.
    * Discovery never widens trust: a merged item's :meth:`DiscoveredModel.trusted_profile`,
      ``limits`` and ``deprecation`` come only from the catalog entry; the provider's raw
      descriptor stays available, uninterpreted.  Unknown discovered ids are kept (with no
      capabilities); two discovered ids that resolve to one canonical id raise
      :class:`DuplicateCanonicalModel` instead of being collapsed.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any
from urllib.parse import urlsplit

from zigai._owner import Owner
from zigai.errors import ModelError
from zigai.model import ModelProfile
from zigai.provider.discovery import OwnedProviderModels, ProviderModelDescriptor

__all__ = [
    "DiscoveredModel",
    "DuplicateCanonicalModel",
    "DiscoveredCatalogClosed",
    "InvalidCatalogEntry",
    "InvalidCatalogReplacement",
    "InvalidCatalogSource",
    "InvalidCatalogSourceLink",
    "ModelCatalog",
    "ModelCatalogCollision",
    "ModelCatalogEntry",
    "ModelCatalogError",
    "ModelCatalogLimits",
    "ModelDeprecation",
    "OwnedDiscoveredCatalog",
    "ResolvedModel",
    "UnsortedCatalogSource",
    "builtin_model_catalog",
    "entries_from_rows",
    "merge_model_discovery",
]

_PROVIDER = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_ID = re.compile(r"^[\x21-\x7e]{1,256}$")


class ModelCatalogError(ModelError):
    """A model catalog, its source or a discovery merge broke a catalog invariant."""


class InvalidCatalogEntry(ModelCatalogError):
    """An entry has an unusable provider name, id, alias, limit, date or profile."""


class ModelCatalogCollision(ModelCatalogError):
    """Two names of one provider collide (a canonical id or alias used twice): the catalog
    would be ambiguous.  ``provider_name`` and ``model_id`` name the collision."""

    def __init__(self, message: str, *, provider_name: str = "", model_id: str = "") -> None:
        super().__init__(message)
        self.provider_name = provider_name
        self.model_id = model_id


class InvalidCatalogReplacement(ModelCatalogError):
    """A deprecation names a replacement that is not another canonical id of the same
    provider, or replacements form a cycle."""


class InvalidCatalogSourceLink(ModelCatalogError):
    """An entry's primary-source link is not an absolute ``https://`` URL."""


class DuplicateCanonicalModel(ModelCatalogError):
    """One discovery result holds two models with the same canonical id (``canonical_id``),
    e.g. an alias and its canonical id."""

    def __init__(self, message: str, *, canonical_id: str = "") -> None:
        super().__init__(message)
        self.canonical_id = canonical_id


class DiscoveredCatalogClosed(ModelCatalogError):
    """An :class:`OwnedDiscoveredCatalog` was used after ``close()``."""


class InvalidCatalogSource(ModelCatalogError):
    """The reviewable catalog source (``data/model_catalog.json``) does not have the
    documented shape: unknown or missing keys, wrong types, values outside an enum set."""


class UnsortedCatalogSource(InvalidCatalogSource):
    """The catalog source's entries (by provider, then id) or an entry's aliases or sets are
    not in sorted order, so a review diff would not show one change in one place."""


def _positive(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidCatalogEntry(f"{what} must be a positive int")
    return value


def _iso_date(value: Any, what: str) -> date | None:
    if value is None:
        return None
    if not isinstance(value, str) or not re.match(r"^\d{4}-\d{2}-\d{2}$", value):
        raise InvalidCatalogEntry(f"{what} must be a YYYY-MM-DD date")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise InvalidCatalogEntry(f"{what} {value!r} is not a calendar date") from None


@dataclass(frozen=True, slots=True)
class ModelCatalogLimits:
    """Token limits: the context window and the most output tokens one response may have."""

    context_window_tokens: int | None = None
    max_output_tokens: int | None = None

    def __post_init__(self) -> None:
        window = _positive(self.context_window_tokens, "context_window_tokens")
        output = _positive(self.max_output_tokens, "max_output_tokens")
        if window is not None and output is not None and output > window:
            raise InvalidCatalogEntry("max_output_tokens cannot exceed context_window_tokens")


@dataclass(frozen=True, slots=True)
class ModelDeprecation:
    """A model's retirement: the dates (YYYY-MM-DD) and the canonical id that replaces it."""

    deprecated_on: str | None = None
    shutdown_on: str | None = None
    replacement: str | None = None

    def __post_init__(self) -> None:
        deprecated = _iso_date(self.deprecated_on, "deprecated_on")
        shutdown = _iso_date(self.shutdown_on, "shutdown_on")
        if deprecated is not None and shutdown is not None and shutdown < deprecated:
            raise InvalidCatalogEntry("shutdown_on is before deprecated_on")
        if self.replacement is not None and (
            not isinstance(self.replacement, str) or not _ID.match(self.replacement)
        ):
            raise InvalidCatalogEntry("replacement must be a plain model id")


def check_source_link(url: Any) -> str:
    """``url`` when it is an absolute HTTPS URL with a host; else InvalidCatalogSourceLink."""
    if not isinstance(url, str) or any(c.isspace() for c in url):
        raise InvalidCatalogSourceLink(f"source link {url!r} is not a URL")
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.username or parts.password:
        raise InvalidCatalogSourceLink(f"source link {url!r} must be an absolute https:// URL")
    return url


@dataclass(frozen=True, slots=True)
class ModelCatalogEntry:
    """One model of one provider, as the catalog's author vouches for it.

    ``provider_name`` is the provider identity (``Provider.name``: ``openai``,
    ``anthropic``, ``gcp.gen_ai`` ...); ``canonical_id`` is the id to construct clients with;
    ``aliases`` are other exact names for the same model; ``profile`` is a trusted capability
    profile (None: the catalog makes no capability claim); ``source_url`` is the primary source.
    """

    provider_name: str
    canonical_id: str
    aliases: tuple[str, ...] = ()
    limits: ModelCatalogLimits | None = None
    deprecation: ModelDeprecation | None = None
    profile: ModelProfile | None = None
    source_url: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.provider_name, str) or not _PROVIDER.match(self.provider_name):
            raise InvalidCatalogEntry(f"provider name {self.provider_name!r} is not a provider identity")
        if not isinstance(self.canonical_id, str) or not _ID.match(self.canonical_id):
            raise InvalidCatalogEntry(f"canonical id {self.canonical_id!r} is not a plain model id")
        if isinstance(self.aliases, str):
            raise InvalidCatalogEntry("aliases must be a sequence of ids, not one string")
        object.__setattr__(self, "aliases", tuple(self.aliases))
        for alias in self.aliases:
            if not isinstance(alias, str) or not _ID.match(alias):
                raise InvalidCatalogEntry(f"alias {alias!r} of {self.canonical_id!r} is not a plain id")
        for name, kind in (("limits", ModelCatalogLimits), ("deprecation", ModelDeprecation),
                           ("profile", ModelProfile)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise InvalidCatalogEntry(f"{name} of {self.canonical_id!r} must be a {kind.__name__}")
        if self.source_url is not None:
            check_source_link(self.source_url)


@dataclass(frozen=True, slots=True)
class ResolvedModel:
    """The result of one resolution: the entry, the id that was asked for, and the
    replacement entry when the model is deprecated in favour of another."""

    entry: ModelCatalogEntry
    requested_id: str
    replacement_entry: ModelCatalogEntry | None = None

    @property
    def canonical_id(self) -> str:
        """The id to construct the provider client with."""
        return self.entry.canonical_id

    @property
    def was_alias(self) -> bool:
        return self.requested_id != self.entry.canonical_id

    def replacement(self) -> ModelCatalogEntry | None:
        """The validated replacement entry of a deprecated model (None otherwise)."""
        return self.replacement_entry


class ModelCatalog:
    """Validated entries with exact, case-sensitive, provider-scoped resolution."""

    __slots__ = ("_entries", "_names", "_canonical")

    def __init__(self, entries: Sequence[ModelCatalogEntry]) -> None:
        if isinstance(entries, (str, bytes)) or not isinstance(entries, Sequence):
            raise InvalidCatalogEntry("a ModelCatalog takes a sequence of ModelCatalogEntry values")
        values = tuple(entries)
        names: dict[tuple[str, str], ModelCatalogEntry] = {}
        canonical: dict[tuple[str, str], ModelCatalogEntry] = {}
        for entry in values:
            if not isinstance(entry, ModelCatalogEntry):
                raise InvalidCatalogEntry(f"{type(entry).__name__} is not a ModelCatalogEntry")
            for name in (entry.canonical_id, *entry.aliases):
                key = (entry.provider_name, name)
                if key in names:
                    raise ModelCatalogCollision(
                        f"{entry.provider_name} model name {name!r} is used twice (as "
                        f"{names[key].canonical_id!r} and {entry.canonical_id!r})",
                        provider_name=entry.provider_name, model_id=name,
                    )
                names[key] = entry
            canonical[(entry.provider_name, entry.canonical_id)] = entry
        for entry in values:
            target = entry.deprecation.replacement if entry.deprecation else None
            if target is None:
                continue
            if (entry.provider_name, target) not in canonical or target == entry.canonical_id:
                raise InvalidCatalogReplacement(
                    f"{entry.provider_name} {entry.canonical_id!r} names replacement {target!r}, "
                    "which is not another canonical id of the same provider"
                )
            seen = {entry.canonical_id}
            step: ModelCatalogEntry | None = canonical[(entry.provider_name, target)]
            while step is not None:
                if step.canonical_id in seen:
                    raise InvalidCatalogReplacement(
                        f"{entry.provider_name} replacements starting at "
                        f"{entry.canonical_id!r} form a cycle"
                    )
                seen.add(step.canonical_id)
                nxt = step.deprecation.replacement if step.deprecation else None
                step = None if nxt is None else canonical[(entry.provider_name, nxt)]
        self._entries = values
        self._names = names
        self._canonical = canonical

    @property
    def entries(self) -> tuple[ModelCatalogEntry, ...]:
        return self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[ModelCatalogEntry]:
        return iter(self._entries)

    def providers(self) -> tuple[str, ...]:
        return tuple(sorted({entry.provider_name for entry in self._entries}))

    def resolve(self, provider_name: str, requested_id: str) -> ResolvedModel | None:
        """The entry ``requested_id`` names for ``provider_name`` (exactly), or None."""
        entry = self._names.get((provider_name, requested_id))
        if entry is None:
            return None
        target = entry.deprecation.replacement if entry.deprecation else None
        replacement = None if target is None else self._canonical[(provider_name, target)]
        return ResolvedModel(entry, requested_id, replacement)

    def __repr__(self) -> str:
        return f"ModelCatalog({len(self._entries)} entries, providers={list(self.providers())})"


# --------------------------------------------------------------------------- discovery merge


@dataclass(frozen=True, slots=True)
class DiscoveredModel:
    """One discovered model joined with the catalog; trusted and untrusted data stay apart."""

    descriptor: ProviderModelDescriptor
    entry: ModelCatalogEntry | None
    canonical_id: str

    @property
    def known(self) -> bool:
        return self.entry is not None

    @property
    def was_alias(self) -> bool:
        return self.descriptor.id != self.canonical_id

    def trusted_profile(self) -> ModelProfile | None:
        """The catalog's profile; never anything the provider reported."""
        return None if self.entry is None else self.entry.profile

    def limits(self) -> ModelCatalogLimits | None:
        return None if self.entry is None else self.entry.limits

    def deprecation(self) -> ModelDeprecation | None:
        return None if self.entry is None else self.entry.deprecation


class OwnedDiscoveredCatalog(Owner):
    """The joined index of one discovery result; close it after use."""

    __slots__ = ("_provider_name", "_items", "_by_canonical")

    _closed_error = DiscoveredCatalogClosed

    def __init__(self, provider_name: str, items: Sequence[DiscoveredModel]) -> None:
        super().__init__()
        self._provider_name = provider_name
        self._items = tuple(items)
        self._by_canonical = {item.canonical_id: item for item in self._items}

    def _release(self) -> None:
        self._items = ()
        self._by_canonical = {}

    @property
    def provider_name(self) -> str:
        self._check()
        return self._provider_name

    @property
    def items(self) -> tuple[DiscoveredModel, ...]:
        self._check()
        return self._items

    def get(self, canonical_id: str) -> DiscoveredModel | None:
        self._check()
        return self._by_canonical.get(canonical_id)

    def known(self) -> tuple[DiscoveredModel, ...]:
        """Items the catalog has an entry for."""
        self._check()
        return tuple(item for item in self._items if item.entry is not None)

    def unknown(self) -> tuple[DiscoveredModel, ...]:
        """Items the catalog knows nothing about (kept, with no capabilities)."""
        self._check()
        return tuple(item for item in self._items if item.entry is None)

    def __iter__(self) -> Iterator[DiscoveredModel]:
        self._check()
        return iter(self._items)

    def __len__(self) -> int:
        self._check()
        return len(self._items)

    def __repr__(self) -> str:
        if self._closed:
            return "OwnedDiscoveredCatalog(closed)"
        return f"OwnedDiscoveredCatalog({self._provider_name!r}, {len(self._items)} models)"


def merge_model_discovery(
    catalog: ModelCatalog, discovered: OwnedProviderModels
) -> OwnedDiscoveredCatalog:
    """Join ``discovered`` with ``catalog`` (by the discovery's provider name), in listing order."""
    if not isinstance(catalog, ModelCatalog):
        raise TypeError("merge_model_discovery needs a ModelCatalog")
    if not isinstance(discovered, OwnedProviderModels):
        raise TypeError("merge_model_discovery needs the OwnedProviderModels of list_models()")
    provider_name = discovered.provider_name
    items: list[DiscoveredModel] = []
    seen: dict[str, str] = {}
    for descriptor in discovered.models:
        resolved = catalog.resolve(provider_name, descriptor.id)
        canonical = descriptor.id if resolved is None else resolved.canonical_id
        if canonical in seen:
            raise DuplicateCanonicalModel(
                f"{provider_name} listed {seen[canonical]!r} and {descriptor.id!r}, which are the "
                f"same model {canonical!r}",
                canonical_id=canonical,
            )
        seen[canonical] = descriptor.id
        items.append(DiscoveredModel(descriptor, None if resolved is None else resolved.entry,
                                     canonical))
    return OwnedDiscoveredCatalog(provider_name, items)


# --------------------------------------------------------------------------- built-in snapshot


def entries_from_rows(rows: Iterable[tuple[Any, ...]]) -> list[ModelCatalogEntry]:
    """The catalog entries the static rows of ``_catalog_data`` describe (the row layout is
    documented in :mod:`zigai.models._catalog_source`)."""
    entries = []
    for (provider, model_id, aliases, window, output, deprecated_on, shutdown_on, replacement,
         profile, source) in rows:
        limits = None if window is None and output is None else ModelCatalogLimits(window, output)
        deprecation = None
        if (deprecated_on, shutdown_on, replacement) != (None, None, None):
            deprecation = ModelDeprecation(deprecated_on, shutdown_on, replacement)
        trusted = None if profile is None else ModelProfile(**dict(profile))
        entries.append(ModelCatalogEntry(provider, model_id, tuple(aliases), limits, deprecation,
                                         trusted, source))
    return entries


_builtin_lock = threading.Lock()
_builtin: ModelCatalog | None = None


def builtin_model_catalog() -> ModelCatalog:
    """The generated snapshot (loaded on first call, then shared; it is immutable)."""
    global _builtin
    with _builtin_lock:
        if _builtin is None:
            from zigai.models import _catalog_data

            _builtin = ModelCatalog(entries_from_rows(_catalog_data.ENTRIES))
        return _builtin


def __getattr__(name: str) -> Any:
    if name in ("builtin_model_catalog_version", "builtin_model_catalog_updated_at"):
        from zigai.models import _catalog_data

        return _catalog_data.VERSION if name.endswith("version") else _catalog_data.UPDATED_AT
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
