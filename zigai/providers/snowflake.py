"""Snowflake Cortex through its account-scoped OpenAI-compatible Chat Completions API.

``api_base(account)`` accepts a bare account identifier (``myorg-myaccount``,
``xy12345.us-east-1``) or the canonical ``<account>.snowflakecomputing.com`` hostname and
returns ``https://<account>.snowflakecomputing.com/api/v2/cortex/v1``; schemes, paths,
ports, empty or malformed labels raise :class:`InvalidSnowflakeAccount` before any
authentication.  Profiles (``profiles.snowflake``) separate OpenAI, Claude and text-only
families; unknown models stay fail-closed.

``Client(reasoning=Reasoning(effort="high"))`` (or ``Reasoning(max_tokens=...)``) is the
typed reasoning control: exactly one field, Claude model ids only.  It sends
``reasoning`` and Cortex's required ``temperature`` 1, and rejects a conflicting temperature
before I/O.  Snowflake-only raw fields use ``ProviderExtraBody(tag="snowflake")``;
``reasoning`` is reserved to the typed API.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from zigai.errors import ProviderError
from zigai.model import ModelRequest
from zigai.providers import profiles
from zigai.providers.http import AuthStyle
from zigai.providers.openai_compatible import client as _compatible
from zigai.providers.openai_compatible.encode import ChatOptions
from zigai.settings import UnsupportedModelSetting
from zigai.transport.base import Transport

__all__ = [
    "AUTH", "DEFAULTS", "Client", "InvalidSnowflakeAccount", "InvalidSnowflakeReasoning",
    "Provider", "Reasoning", "api_base", "profile_lookup",
]

AUTH = AuthStyle.bearer()
profile_lookup = profiles.snowflake
DEFAULTS = _compatible.NamedDefaults(
    name="snowflake", api_base=None, auth=AUTH, builtin_lookup=profile_lookup,
    options=ChatOptions(extra_body_tag="snowflake"),
)
_SUFFIX = ".snowflakecomputing.com"
_LABEL = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?$")


class InvalidSnowflakeAccount(ProviderError):
    """The account identifier could not form a safe Snowflake account host."""


class InvalidSnowflakeReasoning(ProviderError):
    """``Reasoning`` needs exactly one of ``effort`` and ``max_tokens`` (Claude models only)."""


def api_base(account: str) -> str:
    """The Cortex Chat Completions root for one Snowflake account."""
    if not isinstance(account, str):
        raise InvalidSnowflakeAccount("the account must be a string")
    identifier = account
    if identifier.lower().endswith(_SUFFIX):
        identifier = identifier[: -len(_SUFFIX)]
    if not identifier or len(identifier) > 200 or any(c in identifier for c in ":/?#@\\"):
        raise InvalidSnowflakeAccount(
            "pass a bare account identifier or <account>.snowflakecomputing.com "
            "(no scheme, path or port)"
        )
    if not all(_LABEL.match(label) for label in identifier.split(".")):
        raise InvalidSnowflakeAccount("the account identifier has an empty or malformed label")
    return f"https://{identifier.lower()}{_SUFFIX}/api/v2/cortex/v1"


@dataclass(frozen=True, slots=True)
class Reasoning:
    """Exactly one of ``effort`` (low, medium, high) and ``max_tokens``."""

    effort: Literal["low", "medium", "high"] | None = None
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if (self.effort is None) == (self.max_tokens is None):
            raise InvalidSnowflakeReasoning("set exactly one of effort and max_tokens")
        if self.effort is not None and self.effort not in ("low", "medium", "high"):
            raise InvalidSnowflakeReasoning("effort must be low, medium or high")
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int)
            or self.max_tokens < 1
        ):
            raise InvalidSnowflakeReasoning("max_tokens must be a positive integer")

    def to_wire(self) -> dict[str, Any]:
        return {"effort": self.effort} if self.effort is not None else {"max_tokens": self.max_tokens}


class Provider(_compatible.Provider):
    """Snowflake provider state; pass ``account`` or ``base_url`` and a bearer token."""

    defaults = DEFAULTS

    def __init__(self, api_key: str, transport: Transport | None = None, *,
                 account: str | None = None, base_url: str | None = None,
                 **options: Any) -> None:
        if (account is None) == (base_url is None):
            raise ValueError("pass exactly one of account and base_url")
        root = api_base(account) if account is not None else base_url
        super().__init__(api_key, transport, base_url=root, **options)


class Client(_compatible.Client):
    """A Cortex model over Chat Completions, with typed Claude reasoning."""

    defaults = DEFAULTS
    extra_body_reserved = frozenset({"reasoning"})

    def __init__(self, model_name: str, provider: Any, settings: Any = None, *,
                 reasoning: Reasoning | None = None, **options: Any) -> None:
        super().__init__(model_name, provider, settings, **options)
        if reasoning is not None:
            if not isinstance(reasoning, Reasoning):
                raise InvalidSnowflakeReasoning("reasoning must be a snowflake.Reasoning")
            if not model_name.lower().startswith("claude-"):
                raise InvalidSnowflakeReasoning("Cortex reasoning is limited to Claude models")
        self.reasoning = reasoning

    def check_typed(self, request: ModelRequest) -> None:
        temperature = request.settings.temperature
        if self.reasoning is not None and temperature is not None and temperature != 1:
            raise UnsupportedModelSetting("Cortex reasoning requires temperature 1")

    def extra_fields(self, request: ModelRequest) -> dict[str, Any]:
        if self.reasoning is None:
            return {}
        fields: dict[str, Any] = {"reasoning": self.reasoning.to_wire()}
        if request.settings.temperature is None:
            fields["temperature"] = 1
        return fields
