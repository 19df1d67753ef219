"""zigai.models: model strings, fallback and application-selected routing, the model catalog.

Job
    Turn a model string into a provider/client pair (:func:`infer_model`, submodule
    ``infer``).  Later submodules compose models behind the same :class:`zigai.model.Model`
    contract and describe which models exist.

Invariants
    * ``import zigai.models`` imports no provider adapter and no third-party package.
    * Everything here is a Model or data about models; nothing adds a branch to the agent loop.

Submodules: ``infer`` (model strings, credentials from the environment).
"""

from __future__ import annotations

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

__all__ = [
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
