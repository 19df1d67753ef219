"""Profile overrides: a user-written mapping that changes fields of a resolved ModelProfile.

Job
    :func:`apply_profile_overrides` is the one reader of the overrides a CLI ``--profile``
    (or config ``profile``), a spec file's ``model.profile`` and
    ``zigai.models.infer_model(profile=...)`` carry.  It is how a model name that zigai's
    tables do not know (a new release, a local model) gets tools or structured output from a
    file or a command line; without an override the fail-closed default stays.

Invariants
    Keys are :class:`~zigai.model.ModelProfile` field names; booleans for the flags, lists of
    strings for the sets (``content_kinds`` and ``provider_managed_tools`` only their known
    values, ``settings`` only :class:`~zigai.settings.ModelSettings` field names), a header
    name or null for ``idempotency_header``.  Anything else raises
    :class:`InvalidProfileOverride` naming the field; fields not named keep their value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from zigai.errors import ModelError
from zigai.model.profile import ALL_CONTENT_KINDS, MANAGED_TOOL_KINDS, ModelProfile
from zigai.settings import ModelSettings

__all__ = ["InvalidProfileOverride", "apply_profile_overrides"]

_SETTINGS_FIELDS = frozenset(f.name for f in fields(ModelSettings))
_KNOWN_VALUES: dict[str, frozenset[str]] = {
    "content_kinds": ALL_CONTENT_KINDS,
    "provider_managed_tools": MANAGED_TOOL_KINDS,
    "settings": _SETTINGS_FIELDS,
}  # reasoning efforts and service tiers are provider words: any strings


class InvalidProfileOverride(ModelError):
    """A profile override (CLI ``--profile``, spec ``model.profile``) names an unknown field
    or gives a value of the wrong kind; the message names the field and what it takes."""


def _value(name: str, current: Any, value: Any, where: str) -> Any:
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
    allowed = _KNOWN_VALUES.get(name)
    unknown = sorted(set(value) - allowed) if allowed is not None else []
    if unknown:
        raise InvalidProfileOverride(f"{where}: unknown values {unknown} (known: {sorted(allowed or ())})")
    return frozenset(value)


def apply_profile_overrides(profile: ModelProfile, overrides: Mapping[str, Any],
                            where: str = "profile") -> ModelProfile:
    """``profile`` with the fields ``overrides`` names replaced (see the module docstring)."""
    if not isinstance(overrides, Mapping):
        raise InvalidProfileOverride(f"{where} must be a mapping of ModelProfile fields")
    names = [f.name for f in fields(ModelProfile)]
    changes: dict[str, Any] = {}
    for name, value in overrides.items():
        if name not in names:
            raise InvalidProfileOverride(
                f"{where}.{name}: not a ModelProfile field (known: {', '.join(names)})")
        changes[name] = _value(name, getattr(profile, name), value, f"{where}.{name}")
    return replace(profile, **changes)
