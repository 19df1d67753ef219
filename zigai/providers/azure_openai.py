"""Azure OpenAI through its GA v1 Chat Completions endpoint (``api-key`` authentication).

``api_base(resource)`` builds ``https://{resource}.openai.azure.com/openai/v1`` after
validating the resource name (1-64 lowercase letters, digits and inner hyphens), so a value
cannot select another origin.  ``Provider`` takes ``resource=`` or an explicit ``base_url``
and always authenticates with the ``api-key`` header.  ``ChatClient`` (alias ``Client``)
resolves Azure/Foundry model families through ``profiles.azure_openai`` and fails closed for
the rest.  ``ResponsesClient`` sends the same deployment through the v1 Responses
endpoint (``POST {root}/responses`` with ``model`` set to the deployment name) with OpenAI's
Responses codec, because Azure's v1 API publishes that wire contract unchanged; credentials,
root and identity stay with this ``Provider``.

Responses deployments are checked before any request: a deployment name is 2-64 letters,
digits, ``.``, ``_`` or ``-`` starting with a letter or digit (:class:`InvalidAzureDeployment`).
Their profile is resolved as: the explicit ``profile``; the application's ``profile_lookup``;
OpenAI's Responses family table when the deployment is named after an OpenAI family
(``gpt-4o``, ``gpt-5-mini``, ``o3`` ...); otherwise the fail-closed ``profiles.UNKNOWN``
(deployment names are chosen by the application, so an unrecognized one says nothing about
the model behind it).  ``profile_override`` (the provider's layer 4) applies last.
"""

from __future__ import annotations

import re
from typing import Any

from zigai.errors import ProviderError
from zigai.model import ModelProfile
from zigai.providers import profiles
from zigai.providers.http import AuthStyle
from zigai.providers.openai import UNKNOWN_PROFILE as OPENAI_UNKNOWN
from zigai.providers.openai import Client as _ResponsesCodecClient
from zigai.providers.openai import profile_for_model as openai_profile_for_model
from zigai.providers.openai_compatible import client as _compatible
from zigai.settings import ModelSettings
from zigai.transport.base import Transport

__all__ = [
    "AUTH", "DEFAULTS", "ChatClient", "Client", "InvalidAzureDeployment", "InvalidAzureResource",
    "Provider", "ResponsesClient", "api_base", "check_deployment", "profile_lookup",
    "responses_profile",
]

AUTH = AuthStyle.header("api-key")
profile_lookup = profiles.azure_openai
DEFAULTS = _compatible.NamedDefaults(
    name="azure_openai", api_base=None, auth=AUTH, builtin_lookup=profile_lookup
)
_RESOURCE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
_DEPLOYMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{1,63}$")


class InvalidAzureResource(ProviderError):
    """The Azure resource name could not form a safe ``*.openai.azure.com`` host."""


class InvalidAzureDeployment(ProviderError):
    """The deployment name is not 2-64 letters, digits, '.', '_' or '-'."""


def check_deployment(name: str) -> str:
    """``name`` when it is a valid Azure OpenAI deployment name."""
    if not isinstance(name, str) or not _DEPLOYMENT.match(name):
        raise InvalidAzureDeployment(
            "Azure deployment names are 2-64 letters, digits, '.', '_' or '-', starting with a "
            "letter or digit"
        )
    return name


def responses_profile(deployment: str) -> ModelProfile | None:
    """OpenAI's Responses profile when the deployment is named after an OpenAI family."""
    profile = openai_profile_for_model(deployment)
    return None if profile is OPENAI_UNKNOWN else profile


def api_base(resource: str) -> str:
    """The v1 root of one Azure OpenAI resource."""
    if not isinstance(resource, str) or not _RESOURCE.match(resource):
        raise InvalidAzureResource(
            "Azure resource names are 1-64 lowercase letters, digits or inner hyphens"
        )
    return f"https://{resource}.openai.azure.com/openai/v1"


class Provider(_compatible.Provider):
    """Azure OpenAI provider state; pass ``resource`` or ``base_url``."""

    defaults = DEFAULTS

    def __init__(self, api_key: str, transport: Transport | None = None, *,
                 resource: str | None = None, base_url: str | None = None,
                 **options: Any) -> None:
        if (resource is None) == (base_url is None):
            raise ValueError("pass exactly one of resource and base_url")
        root = api_base(resource) if resource is not None else base_url
        super().__init__(api_key, transport, base_url=root, **options)


#: Azure's documented client correlation header beside OpenAI's (Azure OpenAI serves both).
AZURE_REQUEST_ID_HEADERS = ("x-client-request-id", "x-ms-client-request-id")


class ChatClient(_compatible.Client):
    """An Azure OpenAI deployment over Chat Completions."""

    defaults = DEFAULTS
    request_id_header_names = AZURE_REQUEST_ID_HEADERS


Client = ChatClient


class ResponsesClient(_ResponsesCodecClient):
    """An Azure OpenAI deployment over the v1 Responses API (OpenAI's Responses codec)."""

    request_id_header_names = AZURE_REQUEST_ID_HEADERS

    def __init__(self, deployment: str, provider: Any, settings: ModelSettings | None = None, *,
                 profile: ModelProfile | None = None, **options: Any) -> None:
        check_deployment(deployment)
        if profile is None:
            lookup = getattr(provider, "profile_lookup", None)
            override = getattr(provider, "profile_override", None)
            profile = profiles.resolve(deployment, fallback=profiles.UNKNOWN, lookup=lookup,
                                       builtin=responses_profile, override=override)
        super().__init__(deployment, provider, settings, profile=profile, **options)
