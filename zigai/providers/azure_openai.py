"""Azure OpenAI through its GA v1 Chat Completions endpoint (``api-key`` authentication).

``api_base(resource)`` builds ``https://{resource}.openai.azure.com/openai/v1`` after
validating the resource name (1-64 lowercase letters, digits and inner hyphens), so a value
cannot select another origin.  ``Provider`` takes ``resource=`` or an explicit ``base_url``
and always authenticates with the ``api-key`` header.  ``ChatClient`` (alias ``Client``)
resolves Azure/Foundry model families through ``profiles.azure_openai`` and fails closed for
the rest.  ``ResponsesClient`` sends the same deployment through the v1 Responses
endpoint with OpenAI's Responses codec, because Azure's v1 API publishes that wire
contract unchanged; credentials, root and identity stay with this ``Provider``.
"""

from __future__ import annotations

import re
from typing import Any

from zigai.errors import ProviderError
from zigai.providers import profiles
from zigai.providers.http import AuthStyle
from zigai.providers.openai import Client as _ResponsesCodecClient
from zigai.providers.openai_compatible import client as _compatible
from zigai.transport.base import Transport

__all__ = [
    "AUTH", "DEFAULTS", "ChatClient", "Client", "InvalidAzureResource", "Provider",
    "ResponsesClient", "api_base", "profile_lookup",
]

AUTH = AuthStyle.header("api-key")
profile_lookup = profiles.azure_openai
DEFAULTS = _compatible.NamedDefaults(
    name="azure_openai", api_base=None, auth=AUTH, builtin_lookup=profile_lookup
)
_RESOURCE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")


class InvalidAzureResource(ProviderError):
    """The Azure resource name could not form a safe ``*.openai.azure.com`` host."""


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


class ChatClient(_compatible.Client):
    """An Azure OpenAI deployment over Chat Completions."""

    defaults = DEFAULTS


Client = ChatClient


class ResponsesClient(_ResponsesCodecClient):
    """An Azure OpenAI deployment over the v1 Responses API (OpenAI's Responses codec)."""
