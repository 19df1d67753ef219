"""Crusoe Serverless Inference through its OpenAI-compatible Chat Completions API.

``Provider`` owns the API root (``API_BASE``, overridable with ``base_url``), the
``crusoe`` identity and bearer authentication; ``Client`` resolves profiles in four layers with
``profiles.crusoe`` as the built-in family lookup and the fail-closed ``profiles.UNKNOWN``
fallback, so unknown families reject tools, structured output and extra settings before I/O.
"""

from __future__ import annotations

from zigai.providers import profiles
from zigai.providers.http import AuthStyle
from zigai.providers.openai_compatible import client as _compatible

__all__ = ["API_BASE", "AUTH", "DEFAULTS", "Client", "Provider", "profile_lookup"]

API_BASE = "https://api.inference.crusoecloud.com/v1"
AUTH = AuthStyle.bearer()
profile_lookup = profiles.crusoe
DEFAULTS = _compatible.NamedDefaults(
    name="crusoe", api_base=API_BASE, auth=AUTH, builtin_lookup=profile_lookup
)


class Provider(_compatible.Provider):
    """Crusoe Serverless Inference provider state (credential, root, headers, policy, transport, profile callbacks)."""

    defaults = DEFAULTS


class Client(_compatible.Client):
    """A Crusoe Serverless Inference model over Chat Completions."""

    defaults = DEFAULTS
