"""Z.AI (GLM) through its general ``/api/paas/v4`` Chat Completions root.

``Client`` adds the typed ``thinking`` (enabled/disabled) and ``clear_thinking`` controls,
sent as ``{"thinking": {"type": ..., "clear_thinking": ...}}``.  Buffered and streamed
``reasoning_content`` decode into thinking parts owned by the ``zai`` provider, and those
parts are replayed unchanged as ``reasoning_content`` on later assistant turns (Z.AI's
interleaved/preserved thinking contract).  Replay rule: a thinking part from another
provider, or a ``zai`` part carrying a signature or a different wire field, cannot be
replayed losslessly and is rejected before transport.

Only native ``glm-*`` ids of supported GLM families resolve (``profiles.zai``); others fail
closed.  ``CompatibilityClient`` exposes only the portable Chat Completions surface: it has
no thinking controls and drops thinking parts like every generic client.  Neither client lets
an extension body set ``thinking``.
"""

from __future__ import annotations

from typing import Any

from zigai.messages import ResponseMessage, ThinkingPart
from zigai.model import ModelRequest, UnsupportedModelFeature
from zigai.providers import profiles
from zigai.providers.http import AuthStyle
from zigai.providers.openai_compatible import client as _compatible
from zigai.providers.openai_compatible.encode import ChatOptions

__all__ = ["API_BASE", "AUTH", "DEFAULTS", "Client", "CompatibilityClient", "Provider",
           "profile_lookup"]

API_BASE = "https://api.z.ai/api/paas/v4"
AUTH = AuthStyle.bearer()
profile_lookup = profiles.zai
DEFAULTS = _compatible.NamedDefaults(
    name="zai", api_base=API_BASE, auth=AUTH, builtin_lookup=profile_lookup,
    options=ChatOptions(replay_reasoning_field="reasoning_content"),
)
_PORTABLE = _compatible.NamedDefaults(
    name="zai", api_base=API_BASE, auth=AUTH, builtin_lookup=profile_lookup,
)


class Provider(_compatible.Provider):
    """Z.AI provider state (bearer key, root, headers, policy, transport, profiles)."""

    defaults = DEFAULTS


class Client(_compatible.Client):
    """A GLM model with typed thinking controls and reasoning replay."""

    defaults = DEFAULTS
    extra_body_reserved = frozenset({"thinking"})

    def __init__(self, model_name: str, provider: Any, settings: Any = None, *,
                 thinking: bool | None = None, clear_thinking: bool | None = None,
                 **options: Any) -> None:
        super().__init__(model_name, provider, settings, **options)
        for name, value in (("thinking", thinking), ("clear_thinking", clear_thinking)):
            if value is not None and not isinstance(value, bool):
                raise TypeError(f"{name} must be a bool or None")
        self.thinking = thinking
        self.clear_thinking = clear_thinking

    def check_typed(self, request: ModelRequest) -> None:
        own = self.provider_name
        for message in request.messages:
            if not isinstance(message, ResponseMessage):
                continue
            for part in message.parts:
                if not isinstance(part, ThinkingPart):
                    continue
                owner = part.provider.provider_name if part.provider is not None else None
                details = part.provider.details if part.provider is not None else None
                field = details.get("field") if details is not None else None
                if owner != own or part.signature is not None or field not in (None, "reasoning_content"):
                    raise UnsupportedModelFeature(
                        "this thinking part cannot be replayed to Z.AI without loss "
                        f"(provider {owner!r}); remove it from history first"
                    )

    def extra_fields(self, request: ModelRequest) -> dict[str, Any]:
        if self.thinking is None and self.clear_thinking is None:
            return {}
        thinking: dict[str, Any] = {"type": "disabled" if self.thinking is False else "enabled"}
        if self.clear_thinking is not None:
            thinking["clear_thinking"] = self.clear_thinking
        return {"thinking": thinking}


class CompatibilityClient(_compatible.Client):
    """A GLM model through the portable Chat Completions surface only."""

    defaults = _PORTABLE
    extra_body_reserved = frozenset({"thinking"})
