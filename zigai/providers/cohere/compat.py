"""Cohere (Compatibility API aliases) through its OpenAI-compatible Chat Completions API.

``Provider`` owns the API root (``API_BASE``, overridable with ``base_url``), the
``cohere`` identity and bearer authentication; ``Client`` resolves profiles in four layers with
``profiles.cohere`` as the built-in family lookup and the fail-closed ``profiles.UNKNOWN``
fallback, so unknown families reject tools, structured output and extra settings before I/O.
"""

from __future__ import annotations

from zigai.providers import profiles
from zigai.providers.http import AuthStyle
from zigai.providers.openai_compatible import client as _compatible

__all__ = ["API_BASE", "AUTH", "DEFAULTS", "Client", "Provider", "profile_lookup"]

API_BASE = "https://api.cohere.ai/compatibility/v1"
AUTH = AuthStyle.bearer()
profile_lookup = profiles.cohere
DEFAULTS = _compatible.NamedDefaults(
    name="cohere", api_base=API_BASE, auth=AUTH, builtin_lookup=profile_lookup
)


class Provider(_compatible.Provider):
    """Cohere (Compatibility API aliases) provider state (credential, root, headers, policy, transport, profile callbacks)."""

    defaults = DEFAULTS


class Client(_compatible.Client):
    """A Cohere (Compatibility API aliases) model over Chat Completions."""

    defaults = DEFAULTS
