"""What the agent sends to a model: tool definitions, the wire output format, the request.

``ModelRequest`` is the complete, provider-neutral input of one model call.
Adapters translate it once at their wire boundary and never see credentials.
:func:`check_request_supported` is the single place that rejects requested
features a profile does not declare — it runs before any request is sent.

Invariants: every value here is immutable; tool names are provider-safe
(``^[A-Za-z0-9_-]{1,64}$``) and unique within one request; JSON schemas are
deep-copied JSON objects.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from zigai.control import RunControl
from zigai.errors import JsonError, ModelError
from zigai.json import check_shape
from zigai.json import defaults as json_defaults
from zigai.messages import (
    Message,
    RequestMessage,
    UserPromptPart,
)
from zigai.model.profile import MANAGED_TOOL_KINDS, ModelProfile
from zigai.security import UrlPolicy
from zigai.settings import ModelSettings, check_supported

__all__ = [
    "ToolDefinition",
    "OutputFormat",
    "ManagedTool",
    "ModelRequest",
    "UnsupportedModelFeature",
    "InvalidToolDefinition",
    "check_request_supported",
    "TOOL_NAME_PATTERN",
]

TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class UnsupportedModelFeature(ModelError):
    """The request needs a capability the model profile does not declare."""


class InvalidToolDefinition(ModelError):
    """A tool definition has an unsafe name, a duplicate, or a non-object schema."""


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """One function the model may call, as the provider sees it.

    ``kind`` is ``"function"`` for application tools and ``"output"`` for the
    synthetic tools that carry structured output.  ``return_json_schema`` and
    ``metadata`` stay local: adapters never send them.
    """

    name: str
    description: str = ""
    parameters_json_schema: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    kind: Literal["function", "output"] = "function"
    strict: bool | None = None
    sequential: bool = False
    return_json_schema: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not TOOL_NAME_PATTERN.match(self.name):
            raise InvalidToolDefinition(
                f"tool name {self.name!r} must match {TOOL_NAME_PATTERN.pattern}"
            )
        if not isinstance(self.description, str):
            raise InvalidToolDefinition(f"tool {self.name!r}: description must be a string")
        if not isinstance(self.parameters_json_schema, Mapping):
            raise InvalidToolDefinition(f"tool {self.name!r}: parameters schema must be an object")
        if self.parameters_json_schema.get("type", "object") != "object":
            raise InvalidToolDefinition(f"tool {self.name!r}: parameters schema must have type object")
        if self.kind not in ("function", "output"):
            raise InvalidToolDefinition(f"tool {self.name!r}: unknown kind {self.kind!r}")
        try:
            check_shape(self.parameters_json_schema, json_defaults.json_schema)
        except JsonError as exc:
            raise InvalidToolDefinition(
                f"tool {self.name!r}: parameters schema exceeds the json_schema JSON profile: {exc}"
            ) from None
        object.__setattr__(self, "parameters_json_schema", copy.deepcopy(dict(self.parameters_json_schema)))


@dataclass(frozen=True, slots=True)
class OutputFormat:
    """The provider-facing output contract: text, any JSON object, or one JSON Schema.

    For ``json_object`` a ``schema`` may ride along as a local hint (prompted
    output); adapters never put it on the wire.
    """

    kind: Literal["text", "json_object", "json_schema"] = "text"
    name: str | None = None
    schema: Mapping[str, Any] | None = None
    description: str | None = None
    strict: bool | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("text", "json_object", "json_schema"):
            raise UnsupportedModelFeature(f"unknown output format {self.kind!r}")
        if self.kind == "json_schema":
            if not isinstance(self.schema, Mapping):
                raise UnsupportedModelFeature("json_schema output needs a schema object")
            if not self.name or not TOOL_NAME_PATTERN.match(self.name):
                raise UnsupportedModelFeature("json_schema output needs a provider-safe name")
            object.__setattr__(self, "schema", copy.deepcopy(dict(self.schema)))
        elif self.kind == "json_object" and self.schema is not None:
            # Prompted output: the schema is a local hint (test doubles, validation);
            # adapters send only JSON-object mode and never this schema.
            if not isinstance(self.schema, Mapping):
                raise UnsupportedModelFeature("json_object output schema hint must be an object")
            object.__setattr__(self, "schema", copy.deepcopy(dict(self.schema)))
        elif self.schema is not None:
            raise UnsupportedModelFeature(f"{self.kind} output takes no schema")


TEXT_OUTPUT = OutputFormat()


@dataclass(frozen=True, slots=True)
class ManagedTool:
    """A provider-executed tool (web search, fetch, code execution, tool search)."""

    kind: str
    config: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.kind not in MANAGED_TOOL_KINDS:
            raise UnsupportedModelFeature(f"unknown provider-managed tool {self.kind!r}")
        if self.config is not None:
            object.__setattr__(self, "config", copy.deepcopy(dict(self.config)))


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything one model call needs.

    ``instructions`` is the resolved instruction list for this request
    (static, dynamic, run-specific; empties already removed).  ``deadline`` is
    the absolute monotonic deadline of this *attempt* (the smaller of the
    per-attempt ceiling and the run deadline); ``control`` carries the run's
    cancellation token.  ``error_observer`` receives a borrowed provider error
    view (see ``zigai.provider``); ``capture_error_body`` opts into a bounded
    raw body prefix of at most ``max_error_body_bytes``.  ``request_id`` is the
    application's correlation id (``RunOptions.request_id``); adapters send it under their
    provider's documented client request-id header (``x-client-request-id`` for OpenAI and
    the compatible APIs, plus ``x-ms-client-request-id`` for Azure; none where the provider
    documents no such header).  ``url_policy`` is the caller's own URL policy (the agent's
    ``url_policy`` when one is set): an HTTP adapter refuses, before anything is sent, an
    endpoint or media URL this policy refuses *or* its provider's policy refuses — the
    stricter wins.  None adds nothing to the provider's policy.
    """

    messages: tuple[Message, ...]
    instructions: tuple[str, ...] = ()
    tools: tuple[ToolDefinition, ...] = ()
    managed_tools: tuple[ManagedTool, ...] = ()
    output_format: OutputFormat = TEXT_OUTPUT
    settings: ModelSettings = field(default_factory=ModelSettings)
    control: RunControl = field(default_factory=RunControl)
    deadline: float | None = None
    idempotency_key: str | None = None
    error_observer: Callable[[Any], None] | None = None
    capture_error_body: bool = False
    max_error_body_bytes: int = 4096
    request_id: str | None = None
    url_policy: UrlPolicy | None = None

    def __post_init__(self) -> None:
        if self.url_policy is not None and not isinstance(self.url_policy, UrlPolicy):
            raise TypeError("ModelRequest.url_policy must be a zigai.security.UrlPolicy or None")
        object.__setattr__(self, "messages", tuple(self.messages))
        object.__setattr__(self, "instructions", tuple(i for i in self.instructions if i))
        object.__setattr__(self, "tools", tuple(self.tools))
        object.__setattr__(self, "managed_tools", tuple(self.managed_tools))
        names = [t.name for t in self.tools]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise InvalidToolDefinition(f"duplicate tool names: {', '.join(duplicates)}")
        kinds = [m.kind for m in self.managed_tools]
        repeated = sorted({k for k in kinds if kinds.count(k) > 1})
        if repeated:
            raise InvalidToolDefinition(
                f"provider-managed tools given more than once: {', '.join(repeated)}; "
                "configure each kind once"
            )
        if self.max_error_body_bytes < 0:
            raise ValueError("max_error_body_bytes must be >= 0")

    @property
    def effective_deadline(self) -> float | None:
        return self.deadline if self.deadline is not None else self.control.deadline


def _content_kinds(messages: tuple[Message, ...]) -> set[str]:
    kinds: set[str] = set()
    for message in messages:
        if not isinstance(message, RequestMessage):
            continue
        for part in message.parts:
            if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                kinds.update(item.kind for item in part.content)
    return kinds


def check_request_supported(request: ModelRequest, profile: ModelProfile) -> None:
    """Raise before I/O when the request needs something ``profile`` lacks."""
    if request.tools and not profile.supports_tools:
        raise UnsupportedModelFeature("model does not support tools")
    fmt = request.output_format
    if fmt.kind == "json_object" and not profile.json_object_output:
        raise UnsupportedModelFeature("model does not support JSON-object output")
    if fmt.kind == "json_schema" and not profile.json_schema_output:
        raise UnsupportedModelFeature("model does not support native JSON-schema output")
    for managed in request.managed_tools:
        if managed.kind not in profile.provider_managed_tools:
            offered = ", ".join(sorted(profile.provider_managed_tools)) or "none"
            raise UnsupportedModelFeature(
                f"model does not support the {managed.kind} provider-managed tool "
                f"(its profile offers: {offered}); drop it or choose a model that offers it"
            )
    missing = _content_kinds(request.messages) - profile.content_kinds
    if missing:
        raise UnsupportedModelFeature(
            f"model does not accept {', '.join(sorted(missing))} content"
        )
    check_supported(request.settings, profile)  # raises UnsupportedModelSetting
