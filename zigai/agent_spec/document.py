"""The agent spec document: frozen, data-only values the parser produces (schema version 1).

Nothing here reads the environment, imports a provider or builds a client.  Strings that may
carry ``${VAR}`` references (:data:`SUBSTITUTED_FIELDS`) keep the reference text unexpanded;
resolution expands them from the allowlisted environment.  Every field is documented in
``docs/agent-spec.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "SPEC_VERSION",
    "SUBSTITUTED_FIELDS",
    "ModelRef",
    "OutputDoc",
    "McpServerDoc",
    "CapabilityRef",
    "LimitsDoc",
    "RetryDoc",
    "SettingsDoc",
    "AgentSpec",
    "EnvReference",
]

SPEC_VERSION = 1
"""The only document version this parser reads; ``version`` is required."""

SUBSTITUTED_FIELDS = ("$.model.name", "$.instructions[*]", "$.mcp_servers[*].command[*]", "$.mcp_servers[*].url")
"""Where ``${VAR}`` substitution is allowed; a ``${`` anywhere else is refused."""

OutputMode = Literal["native", "tool", "prompted"]
Loading = Literal["eager", "on_demand"]


@dataclass(frozen=True, slots=True)
class EnvReference:
    """One ``${NAME}`` occurrence: the variable and the document path of the string."""

    name: str
    path: str


@dataclass(frozen=True, slots=True)
class ModelRef:
    """``model``: a provider-catalog name, the provider's model name, and optionally the NAME
    of the environment variable holding the credential (replacing the provider's own names)
    and ``profile``, overrides of the model's capability profile
    (:func:`zigai.model.apply_profile_overrides`, e.g. ``{supports_tools: true}`` for a
    model name the provider's table does not know)."""

    provider: str
    name: str
    api_key_env: str | None = None
    profile: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class OutputDoc:
    """``output``: one structured answer validated against ``schema``."""

    schema: dict[str, Any]
    mode: OutputMode = "tool"
    name: str = "result"
    description: str | None = None
    strict: bool | None = None


@dataclass(frozen=True, slots=True)
class McpServerDoc:
    """``mcp_servers[]``: an MCP server whose tools become a dynamic toolset, started on stdio
    (``command``) or reached over Streamable HTTP (``url``); exactly one of the two is set."""

    name: str
    command: tuple[str, ...] = ()
    timeout_ms: int = 20_000
    url: str | None = None


@dataclass(frozen=True, slots=True)
class CapabilityRef:
    """``capabilities[]``: a capability-catalog name and its loading mode."""

    name: str
    loading: Loading = "eager"


@dataclass(frozen=True, slots=True)
class LimitsDoc:
    """``limits``: run limits, deadlines and retry budgets of tools and output."""

    max_requests: int | None = None
    max_tool_calls: int | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_total_tokens: int | None = None
    run_timeout_ms: int | None = None
    request_timeout_ms: int | None = None
    max_tool_retries: int | None = None
    max_output_retries: int | None = None


@dataclass(frozen=True, slots=True)
class RetryDoc:
    """``retry``: the model-request retry policy (:class:`zigai.retry.RetryPolicy` fields)."""

    max_attempts: int | None = None
    initial_delay_ms: int | None = None
    max_delay_ms: int | None = None
    multiplier: float | None = None
    jitter: bool | None = None
    honor_retry_after: bool | None = None
    max_total_delay_ms: int | None = None
    retry_on: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class SettingsDoc:
    """``settings``: model settings (:class:`zigai.settings.ModelSettings` scalar fields)."""

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    seed: int | None = None
    stop_sequences: tuple[str, ...] | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    parallel_tool_calls: bool | None = None
    thinking: str | None = None
    thinking_budget_tokens: int | None = None
    service_tier: str | None = None


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """A whole parsed document (``version`` 1)."""

    model: ModelRef
    version: int = SPEC_VERSION
    name: str | None = None
    description: str | None = None
    instructions: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    toolsets: tuple[str, ...] = ()
    mcp_servers: tuple[McpServerDoc, ...] = ()
    output: OutputDoc | None = None
    settings: SettingsDoc = field(default_factory=SettingsDoc)
    limits: LimitsDoc = field(default_factory=LimitsDoc)
    retry: RetryDoc | None = None
    capabilities: tuple[CapabilityRef, ...] = ()
    references: tuple[EnvReference, ...] = ()
