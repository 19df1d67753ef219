"""Portable model settings, their merge order, tagged provider extensions and header guards.

``ModelSettings`` carries only provider-neutral controls; each adapter
translates the resolved value once, at its wire boundary.  Layers merge in
model → agent → run order: a field that is ``None`` inherits the lower layer,
anything else (including an empty tuple) overrides it.

Invariants:

* a ``ModelSettings`` value is immutable and validated on construction
  (``InvalidModelSettings``);
* :func:`check_supported` rejects every requested control the resolved
  ``ModelProfile`` does not declare, before any request is sent
  (``UnsupportedModelSetting``);
* ``ProviderExtraBody`` is accepted only by the adapter owning its tag and may
  not set keys the portable encoder owns (``ExtraBodyRejected``); its body is checked
  on construction against the ``provider_extra_body`` JSON profile (1 MiB encoded,
  256 KiB per string, depth 32, 4,096 members per object or array):
  ``ExtraBodyTooLarge`` names the bound, before any request exists;
* request-scoped headers can never carry credentials, HTTP framing,
  correlation or adapter-version fields (``ForbiddenRequestHeader``).
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

from zigai.errors import SettingsError

if TYPE_CHECKING:
    from zigai.model.profile import ModelProfile

__all__ = [
    "ModelSettings",
    "ProviderExtraBody",
    "InvalidModelSettings",
    "UnsupportedModelSetting",
    "ExtraBodyRejected",
    "ExtraBodyTooLarge",
    "ForbiddenRequestHeader",
    "RequestHeadersTooLarge",
    "MAX_EXTRA_HEADERS",
    "MAX_EXTRA_HEADER_BYTES",
    "THINKING_LEVELS",
    "merge_settings",
    "check_supported",
    "validate_request_headers",
    "requested_controls",
]


class InvalidModelSettings(SettingsError):
    """A settings value is malformed (wrong type, out of range, non-finite)."""


class UnsupportedModelSetting(SettingsError):
    """The resolved model profile does not support a requested control."""


class ExtraBodyRejected(SettingsError):
    """A provider extension body has a foreign tag or sets a reserved key."""


class ExtraBodyTooLarge(InvalidModelSettings):
    """A ``ProviderExtraBody`` exceeds the ``provider_extra_body`` JSON profile.

    ``limit_error`` is the :class:`~zigai.json.JsonLimitExceeded` naming the bound
    (document size, string size, depth or members).
    """

    def __init__(self, message: str, *, limit_error: Exception | None = None) -> None:
        super().__init__(message)
        self.limit_error = limit_error


class ForbiddenRequestHeader(SettingsError):
    """A request-scoped header would set credentials, framing or correlation fields."""


class RequestHeadersTooLarge(InvalidModelSettings):
    """``extra_headers`` hold more than :data:`MAX_EXTRA_HEADERS` headers or more than
    :data:`MAX_EXTRA_HEADER_BYTES` bytes of names and values (UTF-8) together."""


#: At most this many ``extra_headers`` (servers refuse requests with very large header blocks).
MAX_EXTRA_HEADERS = 64
#: At most this many bytes of ``extra_headers`` names and values together (UTF-8).
MAX_EXTRA_HEADER_BYTES = 16 * 1024


THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
ToolChoice = Literal["auto", "none", "required"]
Truncation = Literal["auto", "disabled"]

_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_FORBIDDEN_HEADERS = frozenset(
    {
        # credentials (owned by the provider boundary)
        "authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key",
        "cookie", "x-amz-security-token",
        # HTTP framing (owned by the transport)
        "host", "content-length", "transfer-encoding", "connection", "keep-alive", "te",
        "trailer", "upgrade", "expect", "content-encoding", "content-type", "accept-encoding",
        "proxy-connection",
        # correlation and idempotency (owned by the agent / provider)
        "x-request-id", "request-id", "idempotency-key", "traceparent", "tracestate",
        "x-client-request-id",
        # adapter protocol versions (owned by each adapter)
        "anthropic-version", "anthropic-beta", "openai-beta", "x-goog-api-client",
        "openai-organization", "openai-project",
    }
)


def _bounded_body(value: Mapping[str, Any]) -> dict[str, Any]:
    """A plain-JSON copy of an extra body, checked against the ``provider_extra_body`` profile.

    :func:`zigai.json.bounded_copy` walks it without recursion (so a 100,000-deep mapping is
    a named depth error, not a ``RecursionError``) and parses its encoding under the
    profile, so every bound is exact: at the limit is accepted, one more is refused.
    """
    from zigai import json as zjson
    from zigai.errors import JsonError
    from zigai.json import JsonLimitExceeded

    profile = zjson.defaults.provider_extra_body
    try:
        return dict(zjson.bounded_copy(value, profile))
    except JsonLimitExceeded as exc:
        raise ExtraBodyTooLarge(
            f"ProviderExtraBody.body exceeds the provider_extra_body JSON profile "
            f"({profile.max_document_bytes} bytes encoded, {profile.max_value_bytes} per string, "
            f"depth {profile.max_depth}, {profile.max_items} members): {exc}; send less, or "
            "move large content into messages",
            limit_error=exc,
        ) from None
    except JsonError as exc:
        raise InvalidModelSettings(f"ProviderExtraBody.body is not plain JSON: {exc}") from None


@dataclass(frozen=True, slots=True)
class ProviderExtraBody:
    """Provider-only request body fields, tagged with the one adapter that may send them.

    ``tag`` names the adapter family (``"openai"``, ``"anthropic"``, ``"google"``,
    ``"openai_compatible"``, ``"openrouter"`` ...).  ``body`` is a JSON object,
    deep-copied on construction; read it with :meth:`accept`.
    """

    tag: str
    body: Mapping[str, Any]

    def __post_init__(self) -> None:
        if not isinstance(self.tag, str) or not self.tag:
            raise InvalidModelSettings("ProviderExtraBody.tag must be a non-empty string")
        if not isinstance(self.body, Mapping):
            raise InvalidModelSettings("ProviderExtraBody.body must be a JSON object")
        object.__setattr__(self, "body", _bounded_body(self.body))

    def accept(self, tag: str, reserved_keys: Iterable[str]) -> dict[str, Any]:
        """The body as a fresh dict for adapter ``tag``; reject foreign tags and reserved keys."""
        if self.tag != tag:
            raise ExtraBodyRejected(
                f"extra body tagged {self.tag!r} cannot be sent by the {tag!r} adapter"
            )
        clash = sorted(set(self.body) & set(reserved_keys))
        if clash:
            raise ExtraBodyRejected(
                f"extra body may not set keys owned by the portable encoder: {', '.join(clash)}"
            )
        return copy.deepcopy(dict(self.body))


def _finite(name: str, value: float | None, lo: float | None = None, hi: float | None = None) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidModelSettings(f"{name} must be a finite number")
    if lo is not None and value < lo:
        raise InvalidModelSettings(f"{name} must be >= {lo}")
    if hi is not None and value > hi:
        raise InvalidModelSettings(f"{name} must be <= {hi}")


def _int(name: str, value: int | None, lo: int, hi: int | None = None) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidModelSettings(f"{name} must be an integer")
    if value < lo or (hi is not None and value > hi):
        raise InvalidModelSettings(f"{name} must be in [{lo}, {hi if hi is not None else '∞'}]")


def _str_tuple(name: str, value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidModelSettings(f"{name} must be a sequence of strings")
    items = tuple(value)
    if not all(isinstance(v, str) and v for v in items):
        raise InvalidModelSettings(f"{name} must contain non-empty strings")
    return items


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Portable per-request controls; ``None`` means "inherit from the lower layer"."""

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    seed: int | None = None
    stop_sequences: tuple[str, ...] | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None
    parallel_tool_calls: bool | None = None
    tool_choice: ToolChoice | None = None
    allowed_tools: tuple[str, ...] | None = None
    thinking: str | None = None
    thinking_budget_tokens: int | None = None
    service_tier: str | None = None
    truncation: Truncation | None = None
    extra_headers: tuple[tuple[str, str], ...] | None = None
    extra_body: ProviderExtraBody | None = None

    def __post_init__(self) -> None:
        _int("max_tokens", self.max_tokens, 1)
        _finite("temperature", self.temperature, 0.0, 2.0)
        _finite("top_p", self.top_p, 0.0, 1.0)
        _int("top_k", self.top_k, 1)
        _int("seed", self.seed, -(2**63), 2**63 - 1)
        object.__setattr__(self, "stop_sequences", _str_tuple("stop_sequences", self.stop_sequences))
        _finite("presence_penalty", self.presence_penalty, -2.0, 2.0)
        _finite("frequency_penalty", self.frequency_penalty, -2.0, 2.0)
        for flag in ("logprobs", "parallel_tool_calls"):
            value = getattr(self, flag)
            if value is not None and not isinstance(value, bool):
                raise InvalidModelSettings(f"{flag} must be a boolean")
        _int("top_logprobs", self.top_logprobs, 0, 20)
        if self.tool_choice is not None and self.tool_choice not in ("auto", "none", "required"):
            raise InvalidModelSettings("tool_choice must be 'auto', 'none' or 'required'")
        object.__setattr__(self, "allowed_tools", _str_tuple("allowed_tools", self.allowed_tools))
        if self.thinking is not None and self.thinking not in THINKING_LEVELS:
            raise InvalidModelSettings(f"thinking must be one of {', '.join(THINKING_LEVELS)}")
        _int("thinking_budget_tokens", self.thinking_budget_tokens, 0)
        if self.service_tier is not None and (
            not isinstance(self.service_tier, str) or not self.service_tier
        ):
            raise InvalidModelSettings("service_tier must be a non-empty string")
        if self.truncation is not None and self.truncation not in ("auto", "disabled"):
            raise InvalidModelSettings("truncation must be 'auto' or 'disabled'")
        if self.extra_headers is not None:
            headers = tuple(tuple(pair) for pair in self.extra_headers)
            validate_request_headers(headers)  # type: ignore[arg-type]
            object.__setattr__(self, "extra_headers", headers)
        if self.extra_body is not None and not isinstance(self.extra_body, ProviderExtraBody):
            raise InvalidModelSettings("extra_body must be a ProviderExtraBody")

    def merged(self, override: ModelSettings | None) -> ModelSettings:
        """``override``'s non-None fields on top of this value."""
        if override is None:
            return self
        values = {
            f.name: (getattr(override, f.name) if getattr(override, f.name) is not None
                     else getattr(self, f.name))
            for f in fields(ModelSettings)
        }
        return ModelSettings(**values)


_SETTING_NAMES = tuple(f.name for f in fields(ModelSettings))


def merge_settings(*layers: ModelSettings | None) -> ModelSettings:
    """Merge layers lowest precedence first (model, agent, run)."""
    result = ModelSettings()
    for layer in layers:
        result = result.merged(layer)
    return result


def requested_controls(settings: ModelSettings) -> tuple[str, ...]:
    """Names of the fields the settings actually set (non-None)."""
    return tuple(name for name in _SETTING_NAMES if getattr(settings, name) is not None)


# Checked by their own rules below rather than by name in ``profile.settings``.
_SPECIALLY_CHECKED = frozenset(
    {"extra_headers", "extra_body", "thinking", "thinking_budget_tokens", "service_tier"}
)


def check_supported(settings: ModelSettings, profile: ModelProfile) -> None:
    """Reject requested controls the profile does not declare, before any I/O."""
    for name in requested_controls(settings):
        if name in _SPECIALLY_CHECKED:
            continue
        if name not in profile.settings:
            raise UnsupportedModelSetting(f"model does not support the {name!r} setting")
    if settings.thinking is not None and settings.thinking != "off":
        if not profile.supports_thinking:
            raise UnsupportedModelSetting("model does not support thinking")
        if settings.thinking not in profile.reasoning_efforts:
            raise UnsupportedModelSetting(
                f"thinking level {settings.thinking!r} is not one of "
                f"{', '.join(sorted(profile.reasoning_efforts))}"
            )
    if settings.thinking_budget_tokens is not None and not profile.supports_thinking:
        raise UnsupportedModelSetting("model does not support thinking budgets")
    if settings.service_tier is not None and settings.service_tier not in profile.service_tiers:
        raise UnsupportedModelSetting(f"service tier {settings.service_tier!r} is not supported")
    if settings.parallel_tool_calls and not profile.supports_parallel_tool_calls:
        raise UnsupportedModelSetting("model does not support parallel tool calls")


def validate_request_headers(headers: Iterable[tuple[str, str]]) -> None:
    """Reject malformed names/values, headers the framework owns and oversized header sets."""
    seen: set[str] = set()
    size = 0
    for count, pair in enumerate(headers, 1):
        if count > MAX_EXTRA_HEADERS:
            raise RequestHeadersTooLarge(f"more than {MAX_EXTRA_HEADERS} extra headers")
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise ForbiddenRequestHeader("headers must be (name, value) pairs")
        name, value = pair
        if not isinstance(name, str) or not isinstance(value, str):
            raise ForbiddenRequestHeader("header names and values must be strings")
        size += len(name.encode("utf-8", "surrogatepass")) + len(value.encode("utf-8", "surrogatepass"))
        if size > MAX_EXTRA_HEADER_BYTES:
            raise RequestHeadersTooLarge(
                f"extra headers hold more than {MAX_EXTRA_HEADER_BYTES} bytes of names and values; "
                "send large values in the body (extra_body) instead")
        if not _HEADER_NAME.match(name):
            raise ForbiddenRequestHeader(f"invalid header name {name!r}")
        if any(c in value for c in "\r\n\x00"):
            raise ForbiddenRequestHeader(f"invalid value for header {name!r}")
        lowered = name.lower()
        if lowered in _FORBIDDEN_HEADERS or lowered.startswith(("x-stainless-", "sec-", "proxy-")):
            raise ForbiddenRequestHeader(f"header {name!r} is owned by zigai and cannot be set")
        if lowered in seen:
            raise ForbiddenRequestHeader(f"duplicate header {name!r}")
        seen.add(lowered)
