"""ModelProfile: what one model can do, declared before any request is sent.

A profile is resolved once per model (by the provider's profile lookup or the
application) and the agent refuses requested features it does not declare.
Profiles are immutable; :meth:`ModelProfile.intersection` gives the common
profile of several candidates (used by fallback routing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from zigai.errors import ModelError

__all__ = ["ModelProfile", "InvalidProfileOverride", "COMMON_SETTINGS", "ALL_CONTENT_KINDS",
           "MANAGED_TOOL_KINDS"]

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


class InvalidProfileOverride(ModelError):
    """A profile override (CLI ``--profile``, spec ``model.profile``) names an unknown field
    or gives a value of the wrong kind; the message names the field and what it takes."""


def _allowed_values(name: str) -> frozenset[str] | None:
    if name == "content_kinds":
        return ALL_CONTENT_KINDS
    if name == "provider_managed_tools":
        return MANAGED_TOOL_KINDS
    if name == "settings":
        from dataclasses import fields as settings_fields

        from zigai.settings import ModelSettings

        return frozenset(f.name for f in settings_fields(ModelSettings))
    return None  # reasoning efforts and service tiers are provider words


def _override_value(name: str, current: Any, value: Any, where: str) -> Any:
    if isinstance(current, bool):
        if not isinstance(value, bool):
            raise InvalidProfileOverride(f"{where} takes true or false")
        return value
    if name == "idempotency_header":
        if value is not None and (not isinstance(value, str) or not value):
            raise InvalidProfileOverride(f"{where} takes a header name or null")
        return value
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise InvalidProfileOverride(f"{where} takes a list of strings")
    allowed = _allowed_values(name)
    unknown = sorted(set(value) - allowed) if allowed is not None else []
    if unknown:
        raise InvalidProfileOverride(f"{where}: unknown values {unknown} (known: {sorted(allowed or ())})")
    return frozenset(value)


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

    def with_overrides(self, overrides: Mapping[str, Any], where: str = "profile") -> ModelProfile:
        """This profile with the fields a user-written mapping names replaced.

        The mapping comes from a CLI ``--profile`` or a spec file's ``model.profile``: keys are
        field names, booleans for the ``supports_*``/``json_*`` flags, lists of strings for the
        set fields (``content_kinds`` and ``provider_managed_tools`` only their known values,
        ``settings`` only :class:`~zigai.settings.ModelSettings` field names), a string or null
        for ``idempotency_header``.  Anything else raises :class:`InvalidProfileOverride`
        naming ``where`` and the field.
        """
        if not isinstance(overrides, Mapping):
            raise InvalidProfileOverride(f"{where} must be a mapping of ModelProfile fields")
        kinds = {f.name: f for f in fields(ModelProfile)}
        changes: dict[str, Any] = {}
        for name, value in overrides.items():
            if name not in kinds:
                raise InvalidProfileOverride(
                    f"{where}.{name}: not a ModelProfile field (known: {', '.join(kinds)})")
            changes[name] = _override_value(name, getattr(self, name), value, f"{where}.{name}")
        return replace(self, **changes)

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
