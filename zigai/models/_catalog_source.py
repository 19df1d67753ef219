"""The built-in catalog's source format, its validation, and the generated module's rows.

Job
    :func:`rows_from_source` validates the parsed ``data/model_catalog.json`` document (shape,
    sorted order, HTTPS provenance, limits, enum sets, then every :class:`ModelCatalog`
    invariant) and returns the static rows; :func:`render_module` turns them into the text of
    ``zigai/models/_catalog_data.py``.  The run-time reader of those rows is
    :func:`zigai.models.catalog.entries_from_rows`.  ``scripts/gen_model_catalog.py`` reads the
    JSON file and calls these; the runtime never parses JSON.

Source document::

    {"schema": 1, "version": "<catalog version>", "updated_at": "YYYY-MM-DD",
     "entries": [{"provider": "...", "id": "...", "source": "https://...",
                  "aliases": [...], "limits": {"context_window_tokens": N,
                  "max_output_tokens": N}, "deprecation": {"deprecated_on": "YYYY-MM-DD",
                  "shutdown_on": "YYYY-MM-DD", "replacement": "<id>"}, "profile": {...}}]}

``provider``, ``id`` and ``source`` are required; entries are sorted by (provider, id) and
aliases and profile sets are sorted lists without repeats.  A ``profile`` names every
:class:`~zigai.model.ModelProfile` field (``idempotency_header`` may be left out); its sets use
only known values (content kinds, provider-managed tools, portable settings).

Row (one tuple per entry, in source order)::

    (provider, id, aliases, context_window_tokens, max_output_tokens,
     deprecated_on, shutdown_on, replacement, profile_items | None, source)

where ``profile_items`` is a tuple of ``(field, value)`` pairs in field order, sets as tuples.
"""

from __future__ import annotations

import re
from dataclasses import fields
from datetime import date
from typing import Any

from zigai.model import ALL_CONTENT_KINDS, MANAGED_TOOL_KINDS, ModelProfile
from zigai.models.catalog import (
    InvalidCatalogSource,
    ModelCatalog,
    UnsortedCatalogSource,
    check_source_link,
    entries_from_rows,
)

__all__ = ["SCHEMA", "render_module", "rows_from_source"]

SCHEMA = 1
_DOCUMENT_KEYS = {"schema", "version", "updated_at", "entries"}
_ENTRY_KEYS = {"provider", "id", "source", "aliases", "limits", "deprecation", "profile"}
_LIMIT_KEYS = {"context_window_tokens", "max_output_tokens"}
_DEPRECATION_KEYS = {"deprecated_on", "shutdown_on", "replacement"}
_TOKEN = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$")

Row = tuple[Any, ...]


def _settings_fields() -> frozenset[str]:
    from dataclasses import fields as dataclass_fields

    from zigai.settings import ModelSettings

    return frozenset(f.name for f in dataclass_fields(ModelSettings))


def _profile_enums() -> dict[str, frozenset[str] | None]:
    """The allowed values of each set field (None: any lowercase token)."""
    return {
        "provider_managed_tools": MANAGED_TOOL_KINDS,
        "content_kinds": ALL_CONTENT_KINDS,
        "settings": _settings_fields(),
        "reasoning_efforts": None,
        "service_tiers": None,
    }


def _keys(value: Any, required: set[str], allowed: set[str], where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidCatalogSource(f"{where} must be a JSON object")
    missing, extra = required - set(value), set(value) - allowed
    if missing or extra:
        raise InvalidCatalogSource(
            f"{where}: missing keys {sorted(missing)}, unknown keys {sorted(extra)}"
        )
    return value


def _sorted_strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidCatalogSource(f"{where} must be a list of strings")
    if value != sorted(set(value)):
        raise UnsortedCatalogSource(f"{where} must be sorted and without repeats")
    return tuple(value)


def _profile(value: Any, where: str) -> tuple[tuple[str, Any], ...]:
    names = [f.name for f in fields(ModelProfile)]
    data = _keys(value, set(names) - {"idempotency_header"}, set(names), where)
    enums = _profile_enums()
    items: list[tuple[str, Any]] = []
    for f in fields(ModelProfile):
        item = data.get(f.name)
        label = f"{where}.{f.name}"
        if f.name == "idempotency_header":
            if item is not None and (not isinstance(item, str) or not item):
                raise InvalidCatalogSource(f"{label} must be a header name")
            items.append((f.name, item))
        elif f.name in enums:
            values = _sorted_strings(item, label)
            allowed = enums[f.name]
            bad = [v for v in values if (v not in allowed if allowed is not None
                                         else not _TOKEN.match(v))]
            if bad:
                raise InvalidCatalogSource(f"{label} has values outside its enum set: {bad}")
            items.append((f.name, values))
        else:
            if not isinstance(item, bool):
                raise InvalidCatalogSource(f"{label} must be true or false")
            items.append((f.name, item))
    return tuple(items)


def _row(raw: Any, index: int) -> Row:
    where = f"entries[{index}]"
    data = _keys(raw, {"provider", "id", "source"}, _ENTRY_KEYS, where)
    for key in ("provider", "id"):
        if not isinstance(data[key], str):
            raise InvalidCatalogSource(f"{where}.{key} must be a string")
    source = check_source_link(data["source"])
    aliases = _sorted_strings(data.get("aliases", []), f"{where}.aliases")
    limits = _keys(data.get("limits", {}), set(), _LIMIT_KEYS, f"{where}.limits")
    deprecation = data.get("deprecation")
    dates: tuple[Any, Any, Any] = (None, None, None)
    if deprecation is not None:
        found = _keys(deprecation, set(), _DEPRECATION_KEYS, f"{where}.deprecation")
        dates = (found.get("deprecated_on"), found.get("shutdown_on"), found.get("replacement"))
    profile = None if data.get("profile") is None else _profile(data["profile"], f"{where}.profile")
    return (data["provider"], data["id"], aliases, limits.get("context_window_tokens"),
            limits.get("max_output_tokens"), *dates, profile, source)


def rows_from_source(document: Any) -> tuple[str, str, list[Row]]:
    """``(version, updated_at, rows)`` of a parsed source document, fully validated."""
    data = _keys(document, _DOCUMENT_KEYS, _DOCUMENT_KEYS, "the catalog source")
    if data["schema"] != SCHEMA or isinstance(data["schema"], bool):
        raise InvalidCatalogSource(f"schema must be {SCHEMA}, got {data['schema']!r}")
    version = data["version"]
    if not isinstance(version, str) or not _VERSION.match(version):
        raise InvalidCatalogSource("version must be a short version string")
    updated = data["updated_at"]
    try:
        if not isinstance(updated, str) or date.fromisoformat(updated).isoformat() != updated:
            raise ValueError
    except ValueError:
        raise InvalidCatalogSource("updated_at must be a YYYY-MM-DD date") from None
    raw_entries = data["entries"]
    if not isinstance(raw_entries, list) or not raw_entries:
        raise InvalidCatalogSource("entries must be a non-empty list")
    rows = [_row(raw, index) for index, raw in enumerate(raw_entries)]
    keys = [(row[0], row[1]) for row in rows]
    if keys != sorted(keys):
        first = next(i for i in range(1, len(keys)) if keys[i] < keys[i - 1])
        raise UnsortedCatalogSource(
            f"entries[{first}] ({keys[first][0]} {keys[first][1]!r}) is out of (provider, id) order"
        )
    ModelCatalog(entries_from_rows(rows))  # every core invariant (collisions, replacements ...)
    return version, updated, rows


def render_module(document: Any, source_name: str = "data/model_catalog.json") -> str:
    """The exact text of ``zigai/models/_catalog_data.py`` for a source document."""
    version, updated, rows = rows_from_source(document)
    lines = [
        '"""Built-in model catalog snapshot -- GENERATED, do not edit.',
        "",
        f"Generated by scripts/gen_model_catalog.py from {source_name}.  Each row is one",
        "ModelCatalogEntry (see zigai.models._catalog_source for the row layout); every entry",
        "links the provider page its facts come from.",
        '"""',
        "",
        "from typing import Any",
        "",
        f"VERSION = {version!r}",
        f"UPDATED_AT = {updated!r}",
        "",
        "ENTRIES: tuple[tuple[Any, ...], ...] = (",
        *(f"    {row!r}," for row in rows),
        ")",
        "",
    ]
    return "\n".join(lines)


