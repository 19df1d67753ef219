"""Ollama's OpenAI-compatible Chat Completions endpoint: local, no credential.

The default root ``http://localhost:11434/v1`` is plain HTTP on a loopback host, which the
default :class:`~zigai.security.UrlPolicy` refuses.  It is accepted only through
:data:`local_request_policy` (HTTP and local network allowed, loopback hosts only), which the
provider applies by default; a caller-supplied transport must apply the same policy.  Tagged
and namespaced library models (``library/llama3.2:latest``) resolve through
``profiles.ollama``; unknown families keep the fail-closed ``profiles.UNKNOWN``.
"""

from __future__ import annotations

from typing import Any

from zigai.providers import profiles
from zigai.providers.http import AuthStyle
from zigai.providers.openai_compatible import client as _compatible
from zigai.security import UrlPolicy
from zigai.transport.base import Transport

__all__ = ["API_BASE", "AUTH", "DEFAULTS", "Client", "Provider", "local_request_policy",
           "profile_lookup"]

API_BASE = "http://localhost:11434/v1"
AUTH = AuthStyle.none()
#: The only policy under which the default local endpoint is accepted.
local_request_policy = UrlPolicy(
    allow_http=True, allow_local_network=True,
    allowed_hosts=frozenset({"localhost", "127.0.0.1", "::1"}),
)
profile_lookup = profiles.ollama
DEFAULTS = _compatible.NamedDefaults(
    name="ollama", api_base=API_BASE, auth=AUTH, builtin_lookup=profile_lookup,
    url_policy=local_request_policy,
)


class Provider(_compatible.Provider):
    """Ollama provider state; there is no credential argument."""

    defaults = DEFAULTS

    def __init__(self, transport: Transport | None = None, **options: Any) -> None:
        super().__init__(None, transport, **options)


class Client(_compatible.Client):
    """An Ollama model over Chat Completions."""

    defaults = DEFAULTS
