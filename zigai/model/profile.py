"""ModelProfile: what one model can do, declared before any request is sent.

A profile is resolved once per model (by the provider's profile lookup or the
application) and the agent refuses requested features it does not declare.
Profiles are immutable; :meth:`ModelProfile.intersection` gives the common
profile of several candidates (used by fallback routing).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

__all__ = ["ModelProfile", "COMMON_SETTINGS", "ALL_CONTENT_KINDS", "MANAGED_TOOL_KINDS"]

# Portable ModelSettings fields most chat models honour.
COMMON_SETTINGS = frozenset(
    {
        "max_tokens", "temperature", "top_p", "seed", "stop_sequences", "presence_penalty",
        "frequency_penalty", "parallel_tool_calls", "tool_choice", "allowed_tools",
    }
)
ALL_CONTENT_KINDS = frozenset(
    {"text", "tagged-text", "image", "audio", "video", "document", "binary", "uploaded-file",
     "cache-point"}
)
MANAGED_TOOL_KINDS = frozenset({"web_search", "web_fetch", "code_execution", "tool_search"})


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """Capabilities of one model, independent of transport.

    ``reasoning_efforts`` and ``service_tiers`` are the exact accepted values;
    an empty set means the control is not supported at all.  ``settings``
    names the portable ``ModelSettings`` fields the model honours.
    """

    supports_tools: bool = True
    supports_parallel_tool_calls: bool = True
    supports_system_messages: bool = True
    json_object_output: bool = False
    json_schema_output: bool = False
    supports_thinking: bool = False
    provider_managed_tools: frozenset[str] = frozenset()
    content_kinds: frozenset[str] = frozenset({"text", "tagged-text"})
    reasoning_efforts: frozenset[str] = frozenset()
    service_tiers: frozenset[str] = frozenset()
    settings: frozenset[str] = field(default=COMMON_SETTINGS)
    idempotency_header: str | None = None

    def __post_init__(self) -> None:
        for name in (
            "provider_managed_tools", "content_kinds", "settings", "reasoning_efforts",
            "service_tiers",
        ):
            object.__setattr__(self, name, frozenset(getattr(self, name)))
        unknown = self.content_kinds - ALL_CONTENT_KINDS
        if unknown:
            raise ValueError(f"unknown content kinds: {sorted(unknown)}")

    def with_changes(self, **changes: object) -> ModelProfile:
        return replace(self, **changes)  # type: ignore[arg-type]

    def intersection(self, other: ModelProfile) -> ModelProfile:
        """The profile both models satisfy (booleans AND-ed, sets intersected)."""
        values: dict[str, object] = {}
        for f in fields(ModelProfile):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if isinstance(a, bool):
                values[f.name] = a and b
            elif f.name == "idempotency_header":
                values[f.name] = a if a == b else None
            else:
                values[f.name] = frozenset(a) & frozenset(b)
        return ModelProfile(**values)  # type: ignore[arg-type]
