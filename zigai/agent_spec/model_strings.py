"""The catalog and factory for zigai's own model strings (``openai:gpt-5-mini``, ``test``).

:func:`model_string_catalog` describes every prefix of :data:`zigai.models.PROVIDERS` as a
:class:`~zigai.agent_spec.resolve.ProviderEntry` (variable names only) plus ``test``;
:func:`model_string_factory` builds the model with :func:`zigai.models.infer_model` from the
allowlisted environment it is given.  Neither imports a provider adapter: ``infer_model``
loads exactly the adapter a resolved spec names, when the factory is called.  The one exception
is the ``bedrock_converse`` region check, which asks
:func:`zigai.models.infer.bedrock_converse_region` (the rule the factory applies, so a spec
validates exactly when its model can be built) and so loads the Bedrock adapter when a spec
naming that provider is validated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zigai.agent_spec.document import ModelRef
from zigai.agent_spec.resolve import ProviderEntry

__all__ = ["model_string_catalog", "model_string_factory"]

# Variables a builder requires besides the credential (each tuple: alternatives).
_REQUIRED: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "vertex_ai": (("GOOGLE_CLOUD_PROJECT",),),
    "openai_compatible": (("OPENAI_COMPATIBLE_BASE_URL",),),
    "azure_openai": (("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_RESOURCE"),),
    "azure_openai_responses": (("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_RESOURCE"),),
    "bedrock": (("AWS_REGION", "AWS_DEFAULT_REGION"),),
    "snowflake": (("SNOWFLAKE_ACCOUNT",),),
}


def _validator(provider: str) -> Any:
    def validate(model: ModelRef) -> None:
        from zigai.models import parse_model_string

        parse_model_string(f"{provider}:{model.name}")
    return validate


def _bedrock_converse_missing(model: ModelRef, visible: Mapping[str, str]) -> tuple[str, ...]:
    from zigai.models import MissingCredentials
    from zigai.models.infer import bedrock_converse_region

    api_key = bool(model.api_key_env) or bool(visible.get("AWS_BEARER_TOKEN_BEDROCK"))
    try:
        bedrock_converse_region(model.name, visible, api_key=api_key)
    except MissingCredentials as exc:
        return (" or ".join(exc.variables),)
    return ()


# Requirements a fixed group of variables cannot state (see ProviderEntry.missing_env).
_MISSING_ENV: Mapping[str, Any] = {"bedrock_converse": _bedrock_converse_missing}


def _loopback(variable: str) -> Any:
    def optional(visible: Mapping[str, str]) -> bool:
        from zigai.security import loopback_host

        return bool(loopback_host(visible.get(variable, "")))
    return optional


def model_string_catalog() -> dict[str, ProviderEntry]:
    """One entry per model-string prefix (``test`` included), credentials named, never read."""
    from zigai.models import PROVIDERS

    catalog = {"test": ProviderEntry()}
    for name, spec in PROVIDERS.items():
        required = _REQUIRED.get(name, ())
        optional = tuple(n for n in spec.settings if not any(n in group for group in required))
        catalog[name] = ProviderEntry(
            credentials=spec.credentials, required_env=required, optional_env=optional,
            validate=_validator(name),
            credential_optional=_loopback(spec.local_base_url) if spec.local_base_url else None,
            missing_env=_MISSING_ENV.get(name),
        )
    return catalog


def model_string_factory(model: ModelRef, env: Mapping[str, str]) -> Any:
    """The model ``provider:name`` names, built by :func:`zigai.models.infer_model`."""
    from zigai.models import infer_model

    text = "test" if model.provider == "test" else f"{model.provider}:{model.name}"
    return infer_model(text, env=env, api_key_env=model.api_key_env, profile=model.profile)
