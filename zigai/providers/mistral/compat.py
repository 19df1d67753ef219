"""Mistral (chat compatibility aliases) through its OpenAI-compatible Chat Completions API.

``Provider`` owns the API root (``API_BASE``, overridable with ``base_url``), the
``mistral`` identity and bearer authentication; ``Client`` resolves profiles in four layers with
``profiles.mistral`` as the built-in family lookup and the fail-closed ``profiles.UNKNOWN``
fallback, so unknown families reject tools, structured output and extra settings before I/O.
"""

from __future__ import annotations

from zigai.providers import profiles
from zigai.providers.http import AuthStyle
from zigai.providers.openai_compatible import client as _compatible

__all__ = ["API_BASE", "AUTH", "DEFAULTS", "Client", "Provider", "profile_lookup"]

API_BASE = "https://api.mistral.ai/v1"
AUTH = AuthStyle.bearer()
profile_lookup = profiles.mistral
DEFAULTS = _compatible.NamedDefaults(
    name="mistral", api_base=API_BASE, auth=AUTH, builtin_lookup=profile_lookup
)


class Provider(_compatible.Provider):
    """Mistral (chat compatibility aliases) provider state (credential, root, headers, policy, transport, profile callbacks)."""

    defaults = DEFAULTS


class Client(_compatible.Client):
    """A Mistral (chat compatibility aliases) model over Chat Completions."""

    defaults = DEFAULTS
