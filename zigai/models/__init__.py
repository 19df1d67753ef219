"""zigai.models: model strings, fallback and application-selected routing, the model catalog.

Job
    Turn a model string into a provider/client pair (:func:`infer_model`, submodule
    ``infer``).  Later submodules compose models behind the same :class:`zigai.model.Model`
    contract and describe which models exist.

Invariants
    * ``import zigai.models`` imports no provider adapter and no third-party package.
    * Everything here is a Model or data about models; nothing adds a branch to the agent loop.

Submodules: ``infer`` (model strings, credentials from the environment), ``fallback``
(:class:`Fallback`: ordered candidates for transient failures), ``selector`` (:class:`Selector`:
application-chosen model per request), ``catalog`` (:class:`ModelCatalog`, discovery merge and
the generated built-in snapshot).

Model strings stay single-model on purpose: a ``fallback:`` prefix would have to split the
rest of the string into several model strings, and zigai does not restrict which characters a
provider's model name may contain (gateways accept arbitrary names), so no separator is
unambiguous.  Compose in Python instead: ``Fallback([infer_model(a), infer_model(b)])``.
"""

from __future__ import annotations

from zigai.models.catalog import (
    DiscoveredCatalogClosed,
    DiscoveredModel,
    DuplicateCanonicalModel,
    InvalidCatalogEntry,
    InvalidCatalogReplacement,
    InvalidCatalogSource,
    InvalidCatalogSourceLink,
    ModelCatalog,
    ModelCatalogCollision,
    ModelCatalogEntry,
    ModelCatalogError,
    ModelCatalogLimits,
    ModelDeprecation,
    OwnedDiscoveredCatalog,
    ResolvedModel,
    UnsortedCatalogSource,
    builtin_model_catalog,
    merge_model_discovery,
)
from zigai.models.fallback import (
    DEFAULT_FALLBACK_ON,
    Fallback,
    FallbackAttempt,
    FallbackStreamedResponse,
    InvalidFallback,
)
from zigai.models.infer import (
    MAX_MODEL_STRING,
    PROVIDERS,
    InvalidModelString,
    MissingCredentials,
    ModelString,
    ProviderSpec,
    UnknownModelProvider,
    credential_variables,
    infer_model,
    parse_model_string,
)
from zigai.models.selector import InvalidSelection, Selector

__all__ = [
    "DiscoveredCatalogClosed",
    "DiscoveredModel",
    "DuplicateCanonicalModel",
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
    "builtin_model_catalog_version",
    "builtin_model_catalog_updated_at",
    "merge_model_discovery",
    "DEFAULT_FALLBACK_ON",
    "Fallback",
    "FallbackAttempt",
    "FallbackStreamedResponse",
    "InvalidFallback",
    "InvalidSelection",
    "Selector",
    "MAX_MODEL_STRING",
    "PROVIDERS",
    "ProviderSpec",
    "ModelString",
    "InvalidModelString",
    "UnknownModelProvider",
    "MissingCredentials",
    "parse_model_string",
    "infer_model",
    "credential_variables",
]


def __getattr__(name: str) -> object:
    if name in ("builtin_model_catalog_version", "builtin_model_catalog_updated_at"):
        from zigai.models import catalog

        return getattr(catalog, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
