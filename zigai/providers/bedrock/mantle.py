"""Amazon Bedrock Mantle: Bedrock's OpenAI-compatible Chat Completions endpoint.

``mantle_api_base(region)`` builds ``https://bedrock-mantle.{region}.api.aws/v1`` after
validating the region label, so a value cannot select another origin.  ``MantleProvider``
authenticates with a Bedrock API key as a bearer token; ``MantleClient`` resolves OpenAI
model ids (``openai.gpt-oss-20b`` ...) through ``profiles.bedrock_mantle`` and fails closed
for other families.  The native Converse adapter is :mod:`.converse`.
"""

from __future__ import annotations

import re
from typing import Any

from zigai.errors import ProviderError
from zigai.providers import profiles
from zigai.providers.http import AuthStyle
from zigai.providers.openai_compatible import client as _compatible
from zigai.transport.base import Transport

__all__ = [
    "AUTH", "MANTLE_DEFAULTS", "InvalidBedrockRegion", "MantleClient", "MantleProvider",
    "check_region", "mantle_api_base", "mantle_profile_lookup",
]

AUTH = AuthStyle.bearer()
mantle_profile_lookup = profiles.bedrock_mantle
MANTLE_DEFAULTS = _compatible.NamedDefaults(
    name="bedrock", api_base=None, auth=AUTH, builtin_lookup=mantle_profile_lookup
)
_REGION = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")


class InvalidBedrockRegion(ProviderError):
    """The region is not a single lowercase DNS label such as ``us-east-1``."""


def check_region(region: str) -> str:
    """``region`` when it is one lowercase DNS label (so it cannot select another origin)."""
    if not isinstance(region, str) or not _REGION.match(region):
        raise InvalidBedrockRegion("Bedrock regions are one lowercase DNS label, e.g. us-east-1")
    return region


def mantle_api_base(region: str) -> str:
    """The deployment-specific Mantle Chat Completions root for ``region``."""
    return f"https://bedrock-mantle.{check_region(region)}.api.aws/v1"


class MantleProvider(_compatible.Provider):
    """Bedrock Mantle provider state; pass ``region`` or ``base_url``."""

    defaults = MANTLE_DEFAULTS

    def __init__(self, api_key: str, transport: Transport | None = None, *,
                 region: str | None = None, base_url: str | None = None,
                 **options: Any) -> None:
        if (region is None) == (base_url is None):
            raise ValueError("pass exactly one of region and base_url")
        root = mantle_api_base(region) if region is not None else base_url
        super().__init__(api_key, transport, base_url=root, **options)


class MantleClient(_compatible.Client):
    """A Bedrock Mantle model over Chat Completions."""

    defaults = MANTLE_DEFAULTS
