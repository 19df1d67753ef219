"""OpenRouter through Chat Completions, with a typed routing object and metadata opt-in.

``Client(routing=Routing(...))`` sends OpenRouter's ``provider`` preferences object:
``order``, ``allow_fallbacks``, ``require_parameters``, ``data_collection`` (allow/deny),
``zdr``, ``only`` (allowlist), ``ignore`` (denylist), ``quantizations``, ``sort`` (a simple
``price``/``throughput``/``latency`` or :class:`Sort` with a cross-model ``partition``),
``max_price`` (:class:`MaxPrice`), ``preferred_min_throughput`` and
``preferred_max_latency`` (a number or :class:`Percentiles`).  Invalid names, duplicates,
conflicting allow/deny rules, empty price or percentile objects and non-finite or negative
limits raise :class:`InvalidRouting` at construction, before any HTTP.

``include_router_metadata=True`` sends ``X-OpenRouter-Metadata: enabled``; the returned
``openrouter_metadata`` (and the serving ``provider``) stay structured in
``ModelResponse.provider_details`` for buffered and streamed calls.  Raw OpenRouter-only
fields use ``ProviderExtraBody(tag="openrouter")`` and cannot replace ``provider``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from zigai.errors import ProviderError
from zigai.model import ModelRequest
from zigai.providers import profiles
from zigai.providers.http import AuthStyle
from zigai.providers.openai_compatible import client as _compatible
from zigai.providers.openai_compatible.encode import ChatOptions

__all__ = [
    "API_BASE", "AUTH", "DEFAULTS", "METADATA_HEADER", "Client", "InvalidRouting", "MaxPrice",
    "Percentiles", "Provider", "Routing", "Sort", "profile_lookup",
]

API_BASE = "https://openrouter.ai/api/v1"
AUTH = AuthStyle.bearer()
METADATA_HEADER = "X-OpenRouter-Metadata"
profile_lookup = profiles.openrouter
DEFAULTS = _compatible.NamedDefaults(
    name="openrouter", api_base=API_BASE, auth=AUTH, builtin_lookup=profile_lookup,
    options=ChatOptions(extra_body_tag="openrouter"),
)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$")
_QUANTIZATIONS = frozenset({"int4", "int8", "fp4", "fp6", "fp8", "fp16", "bf16", "fp32",
                            "unknown"})
_SORTS = frozenset({"price", "throughput", "latency"})


class InvalidRouting(ProviderError):
    """An OpenRouter routing preference is malformed or contradicts another one."""


def _limit(name: str, value: Any) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidRouting(f"{name} must be a finite number")
    if value < 0:
        raise InvalidRouting(f"{name} must not be negative")
    return value


def _names(field: str, values: Any) -> tuple[str, ...] | None:
    if values is None:
        return None
    if isinstance(values, str):
        raise InvalidRouting(f"{field} must be a sequence of provider names")
    items = tuple(values)
    for item in items:
        if not isinstance(item, str) or not _NAME.match(item):
            raise InvalidRouting(f"{field} contains an invalid provider name {item!r}")
    if len(set(items)) != len(items):
        raise InvalidRouting(f"{field} repeats a provider name")
    return items


@dataclass(frozen=True, slots=True)
class Percentiles:
    """Latency or throughput cutoffs by percentile; at least one must be set."""

    p50: float | None = None
    p75: float | None = None
    p90: float | None = None
    p99: float | None = None

    def __post_init__(self) -> None:
        values = {k: getattr(self, k) for k in ("p50", "p75", "p90", "p99")}
        if all(v is None for v in values.values()):
            raise InvalidRouting("a percentile preference needs at least one percentile")
        for key, value in values.items():
            if value is not None:
                _limit(key, value)

    def to_wire(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("p50", "p75", "p90", "p99")
                if getattr(self, k) is not None}


@dataclass(frozen=True, slots=True)
class MaxPrice:
    """USD-per-million-token (or per-request/image) price ceilings; at least one set."""

    prompt: float | None = None
    completion: float | None = None
    request: float | None = None
    image: float | None = None

    def __post_init__(self) -> None:
        values = {k: getattr(self, k) for k in ("prompt", "completion", "request", "image")}
        if all(v is None for v in values.values()):
            raise InvalidRouting("max_price needs at least one price")
        for key, value in values.items():
            if value is not None:
                _limit(f"max_price.{key}", value)

    def to_wire(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("prompt", "completion", "request", "image")
                if getattr(self, k) is not None}


@dataclass(frozen=True, slots=True)
class Sort:
    """Sorting with an explicit partition: ``model`` (per model) or ``none`` (across models)."""

    by: Literal["price", "throughput", "latency"]
    partition: Literal["model", "none"] | None = None

    def __post_init__(self) -> None:
        if self.by not in _SORTS:
            raise InvalidRouting(f"sort must be one of {', '.join(sorted(_SORTS))}")
        if self.partition is not None and self.partition not in ("model", "none"):
            raise InvalidRouting("sort partition must be 'model' or 'none'")

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"by": self.by}
        if self.partition is not None:
            out["partition"] = self.partition
        return out


@dataclass(frozen=True, slots=True)
class Routing:
    """OpenRouter provider-routing preferences (the request's ``provider`` object)."""

    order: tuple[str, ...] | None = None
    allow_fallbacks: bool | None = None
    require_parameters: bool | None = None
    data_collection: Literal["allow", "deny"] | None = None
    zdr: bool | None = None
    only: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    quantizations: tuple[str, ...] | None = None
    sort: str | Sort | None = None
    max_price: MaxPrice | None = None
    preferred_min_throughput: float | Percentiles | None = None
    preferred_max_latency: float | Percentiles | None = None

    def __post_init__(self) -> None:
        for field in ("order", "only", "ignore"):
            object.__setattr__(self, field, _names(field, getattr(self, field)))
        for flag in ("allow_fallbacks", "require_parameters", "zdr"):
            value = getattr(self, flag)
            if value is not None and not isinstance(value, bool):
                raise InvalidRouting(f"{flag} must be a bool")
        if self.data_collection is not None and self.data_collection not in ("allow", "deny"):
            raise InvalidRouting("data_collection must be 'allow' or 'deny'")
        denied = set(self.ignore or ())
        for field in ("order", "only"):
            clash = sorted(denied & set(getattr(self, field) or ()))
            if clash:
                raise InvalidRouting(f"{field} and ignore both name {', '.join(clash)}")
        if self.quantizations is not None:
            if isinstance(self.quantizations, str):
                raise InvalidRouting("quantizations must be a sequence")
            items = tuple(self.quantizations)
            unknown = sorted(set(items) - _QUANTIZATIONS)
            if unknown or len(set(items)) != len(items):
                raise InvalidRouting(f"invalid or repeated quantizations: {unknown or items}")
            object.__setattr__(self, "quantizations", items)
        if isinstance(self.sort, str) and self.sort not in _SORTS:
            raise InvalidRouting(f"sort must be one of {', '.join(sorted(_SORTS))}")
        if self.sort is not None and not isinstance(self.sort, (str, Sort)):
            raise InvalidRouting("sort must be a string or a Sort")
        if self.max_price is not None and not isinstance(self.max_price, MaxPrice):
            raise InvalidRouting("max_price must be a MaxPrice")
        for field in ("preferred_min_throughput", "preferred_max_latency"):
            value = getattr(self, field)
            if value is not None and not isinstance(value, Percentiles):
                _limit(field, value)

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for field in ("order", "allow_fallbacks", "require_parameters", "data_collection",
                      "zdr", "only", "ignore", "quantizations", "sort", "max_price",
                      "preferred_min_throughput", "preferred_max_latency"):
            value = getattr(self, field)
            if value is None:
                continue
            if isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, (Sort, MaxPrice, Percentiles)):
                value = value.to_wire()
            out[field] = value
        return out


class Provider(_compatible.Provider):
    """OpenRouter provider state (bearer key, root, headers, policy, transport, profiles)."""

    defaults = DEFAULTS


class Client(_compatible.Client):
    """An OpenRouter-routed model with typed routing and optional router metadata."""

    defaults = DEFAULTS
    extra_body_reserved = frozenset({"provider"})

    def __init__(self, model_name: str, provider: Any, settings: Any = None, *,
                 routing: Routing | None = None, include_router_metadata: bool = False,
                 **options: Any) -> None:
        super().__init__(model_name, provider, settings, **options)
        if routing is not None and not isinstance(routing, Routing):
            raise InvalidRouting("routing must be an openrouter.Routing")
        if not isinstance(include_router_metadata, bool):
            raise TypeError("include_router_metadata must be a bool")
        self.routing = routing
        self.include_router_metadata = include_router_metadata

    def extra_fields(self, request: ModelRequest) -> dict[str, Any]:
        if self.routing is None:
            return {}
        wire = self.routing.to_wire()
        return {"provider": wire} if wire else {}

    def extra_headers(self, request: ModelRequest) -> tuple[tuple[str, str], ...]:
        return ((METADATA_HEADER, "enabled"),) if self.include_router_metadata else ()
