"""xAI through its OpenAI-compatible Chat Completions endpoint (``ChatProvider``/``ChatClient``).

Use this route only when an existing Chat Completions integration needs it; the native
Responses client (:mod:`.responses`) is the first-class path.  The provider owns the
``https://api.x.ai/v1`` root, the ``xai`` identity and bearer authentication; the client
resolves Grok families through :func:`zigai.providers.profiles.family_profile` and fails
closed for the rest.
"""

from __future__ import annotations

from zigai.model import ModelProfile
from zigai.providers import profiles
from zigai.providers.http import AuthStyle
from zigai.providers.openai_compatible import client as _compatible

__all__ = ["CHAT_DEFAULTS", "ChatClient", "ChatProvider", "chat_profile_lookup"]


def chat_profile_lookup(model_name: str) -> ModelProfile | None:
    return profiles.family_profile("grok", model_name) if model_name.lower().startswith("grok-") else None


CHAT_DEFAULTS = _compatible.NamedDefaults(
    name="xai", api_base="https://api.x.ai/v1", auth=AuthStyle.bearer(),
    builtin_lookup=chat_profile_lookup,
)


class ChatProvider(_compatible.Provider):
    """xAI Chat Completions provider state (credential, root, headers, policy, transport)."""

    defaults = CHAT_DEFAULTS


class ChatClient(_compatible.Client):
    """A Grok model over xAI's Chat Completions compatibility endpoint."""

    defaults = CHAT_DEFAULTS
