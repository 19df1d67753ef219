"""MCP protocol value objects: identities, capabilities, filters, notifications, prompt/completion requests.

Job
    Immutable, validated values for the pieces of the 2026-07-28 wire that applications build or
    read: :class:`Implementation` (client/server identity), :class:`ClientCapabilities` and
    :class:`ServerCapabilities`, :class:`SubscriptionFilter` for ``subscriptions/listen``,
    :class:`Notification` (JSON-RPC framing of every standardized event), :class:`LogLevel`,
    :class:`RequestMetadata` (per-request ``_meta``), and :class:`PromptRequest` /
    :class:`CompletionRequest` with the :class:`PromptReference` /
    :class:`ResourceTemplateReference` union.

Invariants
    * ``to_json()`` always returns a fresh, caller-owned JSON value; nothing returned aliases
      the object's own state.
    * Experimental and extension capability settings are JSON objects; extension identifiers
      carry the mandatory reverse-DNS prefix (``vendor.example/name``).  Violations raise
      :class:`InvalidMcpRequest` at construction.
    * Update-stream notifications (list changes, resource updates, acknowledgements) require a
      subscription id; progress values are finite numbers; logging data passes the bounded MCP
      JSON profile before it is serialized.
    * Prompt and completion argument maps are string-to-string objects bounded by the MCP message
      profile; prompt names and resource URI templates are distinct reference kinds.
"""

from __future__ import annotations

import copy
import enum
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from zigai.json import Limits, defaults
from zigai.mcp.errors import InvalidMcpMessage, InvalidMcpRequest
from zigai.mcp.wire.jsonrpc import (
    META_SUBSCRIPTION_ID,
    RequestId,
    check_request_id,
    encode,
    parse_json,
)
from zigai.mcp.wire.tasks import TaskState, parse_task

__all__ = [
    "LogLevel",
    "Implementation",
    "ClientCapabilities",
    "ServerCapabilities",
    "SubscriptionFilter",
    "Notification",
    "RequestMetadata",
    "PromptReference",
    "ResourceTemplateReference",
    "CompletionReference",
    "PromptRequest",
    "CompletionRequest",
    "check_extension_id",
    "UPDATE_STREAM_METHODS",
]

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_EXTENSION_ID = re.compile(rf"{_LABEL}(?:\.{_LABEL})*/{_NAME}")


def check_extension_id(identifier: object, what: str = "extension identifier") -> str:
    """``identifier`` when it is a prefixed ``vendor.example/name`` id; InvalidMcpRequest otherwise."""
    if not isinstance(identifier, str) or not _EXTENSION_ID.fullmatch(identifier):
        raise InvalidMcpRequest(
            f"{what} {identifier!r} must be a prefixed identifier such as 'com.example/feature'"
        )
    return identifier


def _json_object(value: object, what: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidMcpRequest(f"{what} must be a JSON object, got {type(value).__name__}")
    try:
        encode(value)  # refuses non-JSON values
    except InvalidMcpRequest as exc:
        raise InvalidMcpRequest(f"{what}: {exc}") from None
    return copy.deepcopy(dict(value))


def _settings_map(value: Mapping[str, Any] | None, what: str, *, prefixed: bool) -> dict[str, dict[str, Any]] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidMcpRequest(f"{what} must map identifiers to settings objects")
    checked: dict[str, dict[str, Any]] = {}
    for key, settings in value.items():
        if prefixed:
            check_extension_id(key, f"{what} key")
        elif not isinstance(key, str) or not key:
            raise InvalidMcpRequest(f"{what} keys must be non-empty strings")
        checked[key] = _json_object(settings, f"{what}[{key!r}]")
    return checked


class LogLevel(enum.Enum):
    """RFC 5424 severities, least to most severe (the ``logLevel`` and ``level`` values)."""

    debug = "debug"
    info = "info"
    notice = "notice"
    warning = "warning"
    error = "error"
    critical = "critical"
    alert = "alert"
    emergency = "emergency"

    @property
    def severity(self) -> int:
        return _SEVERITY[self]


_SEVERITY = {level: index for index, level in enumerate(LogLevel)}


@dataclass(frozen=True, slots=True)
class Implementation:
    """A client's or server's self-reported identity (display and logging only, never trust)."""

    name: str
    version: str
    title: str | None = None
    description: str | None = None
    website_url: str | None = None

    def __post_init__(self) -> None:
        for name in ("name", "version"):
            if not isinstance(getattr(self, name), str):
                raise InvalidMcpRequest(f"Implementation.{name} must be a string")
        for name in ("title", "description", "website_url"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise InvalidMcpRequest(f"Implementation.{name} must be a string or None")

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"name": self.name, "version": self.version}
        for key, attribute in (("title", "title"), ("description", "description"), ("websiteUrl", "website_url")):
            if getattr(self, attribute) is not None:
                value[key] = getattr(self, attribute)
        return value

    @classmethod
    def from_json(cls, value: object) -> Implementation | None:
        """The identity in a wire value, or None when it is absent or not well formed."""
        if not isinstance(value, dict):
            return None
        name, version = value.get("name"), value.get("version")
        if not isinstance(name, str) or not isinstance(version, str):
            return None
        optional = {k: value.get(k) if isinstance(value.get(k), str) else None
                    for k in ("title", "description", "websiteUrl")}
        return cls(name, version, optional["title"], optional["description"], optional["websiteUrl"])


@dataclass(frozen=True, slots=True)
class ClientCapabilities:
    """What the client declares on every request (``io.modelcontextprotocol/clientCapabilities``).

    Each standardized capability is None (not declared) or its settings object; ``{}`` declares
    support with no settings.  ``extensions`` keys must be prefixed identifiers.
    """

    roots: Mapping[str, Any] | None = None
    sampling: Mapping[str, Any] | None = None
    elicitation: Mapping[str, Any] | None = None
    experimental: Mapping[str, Mapping[str, Any]] | None = None
    extensions: Mapping[str, Mapping[str, Any]] | None = None

    def __post_init__(self) -> None:
        for name in ("roots", "sampling", "elicitation"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _json_object(value, f"ClientCapabilities.{name}"))
        object.__setattr__(self, "experimental",
                           _settings_map(self.experimental, "ClientCapabilities.experimental", prefixed=False))
        object.__setattr__(self, "extensions",
                           _settings_map(self.extensions, "ClientCapabilities.extensions", prefixed=True))

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {}
        for name in ("roots", "sampling", "elicitation", "experimental", "extensions"):
            current = getattr(self, name)
            if current is not None:
                value[name] = copy.deepcopy(dict(current))
        return value

    @classmethod
    def from_json(cls, value: object) -> ClientCapabilities:
        """Parse a peer's capabilities object; unknown members are ignored, bad shapes refused."""
        if not isinstance(value, dict):
            raise InvalidMcpMessage("client capabilities must be a JSON object")
        try:
            return cls(**{name: value.get(name) for name in ("roots", "sampling", "elicitation",
                                                            "experimental", "extensions")})
        except InvalidMcpRequest as exc:
            raise InvalidMcpMessage(str(exc)) from None

    def covers(self, required: ClientCapabilities) -> bool:
        """True when every capability (and extension id) ``required`` declares is declared here."""
        for name in ("roots", "sampling", "elicitation"):
            if getattr(required, name) is not None and getattr(self, name) is None:
                return False
        for name in ("experimental", "extensions"):
            needed = getattr(required, name) or {}
            present = getattr(self, name) or {}
            if any(key not in present for key in needed):
                return False
        return True


_SERVER_STANDARD = ("tools", "resources", "prompts", "completions", "logging")


@dataclass(frozen=True, slots=True)
class ServerCapabilities:
    """What a server advertises in ``server/discover`` (each standard member: None or settings)."""

    tools: Mapping[str, Any] | None = None
    resources: Mapping[str, Any] | None = None
    prompts: Mapping[str, Any] | None = None
    completions: Mapping[str, Any] | None = None
    logging: Mapping[str, Any] | None = None
    experimental: Mapping[str, Mapping[str, Any]] | None = None
    extensions: Mapping[str, Mapping[str, Any]] | None = None

    def __post_init__(self) -> None:
        for name in _SERVER_STANDARD:
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _json_object(value, f"ServerCapabilities.{name}"))
        object.__setattr__(self, "experimental",
                           _settings_map(self.experimental, "ServerCapabilities.experimental", prefixed=False))
        object.__setattr__(self, "extensions",
                           _settings_map(self.extensions, "ServerCapabilities.extensions", prefixed=True))

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {}
        for name in (*_SERVER_STANDARD, "experimental", "extensions"):
            current = getattr(self, name)
            if current is not None:
                value[name] = copy.deepcopy(dict(current))
        return value

    @classmethod
    def from_json(cls, value: object) -> ServerCapabilities:
        if not isinstance(value, dict):
            raise InvalidMcpMessage("server capabilities must be a JSON object")
        try:
            return cls(**{name: value.get(name) for name in (*_SERVER_STANDARD, "experimental", "extensions")})
        except InvalidMcpRequest as exc:
            raise InvalidMcpMessage(str(exc)) from None

    def _flag(self, capability: str, flag: str) -> bool:
        settings = getattr(self, capability)
        return settings is not None and settings.get(flag) is True

    @property
    def tools_list_changed(self) -> bool:
        return self._flag("tools", "listChanged")

    @property
    def resources_subscribe(self) -> bool:
        return self._flag("resources", "subscribe")

    def has_extension(self, identifier: str) -> bool:
        return identifier in (self.extensions or {})


def _string_tuple(value: object, what: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InvalidMcpRequest(f"{what} must be a sequence of strings")
    items = tuple(value)
    if not all(isinstance(item, str) for item in items):
        raise InvalidMcpRequest(f"{what} must contain only strings")
    return items


@dataclass(frozen=True, slots=True)
class SubscriptionFilter:
    """The notifications a ``subscriptions/listen`` stream opts in to (all off by default)."""

    tools_list_changed: bool = False
    prompts_list_changed: bool = False
    resources_list_changed: bool = False
    resource_subscriptions: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = ()  # task status streams (the Tasks extension's notifications/tasks)

    def __post_init__(self) -> None:
        for name in ("tools_list_changed", "prompts_list_changed", "resources_list_changed"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidMcpRequest(f"SubscriptionFilter.{name} must be a bool")
        object.__setattr__(self, "resource_subscriptions",
                           _string_tuple(self.resource_subscriptions, "SubscriptionFilter.resource_subscriptions"))
        object.__setattr__(self, "task_ids", _string_tuple(self.task_ids, "SubscriptionFilter.task_ids"))
        if any(not task_id for task_id in self.task_ids):
            raise InvalidMcpRequest("SubscriptionFilter.task_ids must be non-empty strings")

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {}
        for key, attribute in (("toolsListChanged", "tools_list_changed"),
                               ("promptsListChanged", "prompts_list_changed"),
                               ("resourcesListChanged", "resources_list_changed")):
            if getattr(self, attribute):
                value[key] = True
        if self.resource_subscriptions:
            value["resourceSubscriptions"] = list(self.resource_subscriptions)
        if self.task_ids:
            value["taskIds"] = list(self.task_ids)
        return value

    @classmethod
    def from_json(cls, value: object) -> SubscriptionFilter:
        if not isinstance(value, dict):
            raise InvalidMcpMessage("a subscription filter must be a JSON object")
        uris = value.get("resourceSubscriptions", [])
        task_ids = value.get("taskIds", [])
        try:
            return cls(
                tools_list_changed=value.get("toolsListChanged") is True,
                prompts_list_changed=value.get("promptsListChanged") is True,
                resources_list_changed=value.get("resourcesListChanged") is True,
                resource_subscriptions=tuple(uris) if isinstance(uris, list) else uris,
                task_ids=tuple(task_ids) if isinstance(task_ids, list) else task_ids,
            )
        except InvalidMcpRequest as exc:
            raise InvalidMcpMessage(str(exc)) from None

    def narrowed_to(self, other: SubscriptionFilter) -> SubscriptionFilter:
        """What both filters select (the part of a request an acknowledgement may honor)."""
        return SubscriptionFilter(
            self.tools_list_changed and other.tools_list_changed,
            self.prompts_list_changed and other.prompts_list_changed,
            self.resources_list_changed and other.resources_list_changed,
            tuple(uri for uri in self.resource_subscriptions if uri in other.resource_subscriptions),
            tuple(task_id for task_id in self.task_ids if task_id in other.task_ids),
        )

    def admits(self, notification: Notification) -> bool:
        """True when this filter selects the notification's event kind (and URI)."""
        method = notification.method
        if method == "notifications/tools/list_changed":
            return self.tools_list_changed
        if method == "notifications/prompts/list_changed":
            return self.prompts_list_changed
        if method == "notifications/resources/list_changed":
            return self.resources_list_changed
        if method == "notifications/resources/updated":
            return notification.uri in self.resource_subscriptions
        if method == "notifications/tasks":
            return (notification.params or {}).get("taskId") in self.task_ids
        return False


UPDATE_STREAM_METHODS = frozenset({
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "notifications/subscriptions/acknowledged",
    "notifications/tasks",
})


def _finite(value: object, what: str) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidMcpRequest(f"{what} must be a finite number")
    return value


def _meta_with(params: dict[str, Any], subscription_id: RequestId | None) -> dict[str, Any]:
    if subscription_id is not None:
        params["_meta"] = {META_SUBSCRIPTION_ID: check_request_id(subscription_id, "subscription id")}
    return params


@dataclass(frozen=True, slots=True)
class Notification:
    """One JSON-RPC notification (``method`` and caller-owned ``params``), validated by kind.

    Build standardized events with the class methods; :meth:`from_wire` validates what a peer
    sent.  ``params`` is copied on construction and on :meth:`to_json`.
    """

    method: str
    params: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.method, str) or not self.method:
            raise InvalidMcpRequest("a notification method must be a non-empty string")
        if self.params is not None:
            object.__setattr__(self, "params", _json_object(self.params, f"{self.method} params"))
        self._validate()

    def _validate(self) -> None:
        params = dict(self.params or {})
        if self.method in UPDATE_STREAM_METHODS and self.subscription_id is None:
            raise InvalidMcpRequest(f"{self.method} must carry _meta.{META_SUBSCRIPTION_ID}")
        if self.method == "notifications/progress":
            token = params.get("progressToken")
            check_request_id(token, "progressToken")
            _finite(params.get("progress"), "progress")
            if params.get("total") is not None:
                _finite(params.get("total"), "progress total")
            if params.get("message") is not None and not isinstance(params["message"], str):
                raise InvalidMcpRequest("progress message must be a string")
        elif self.method == "notifications/message":
            try:
                LogLevel(params.get("level"))
            except ValueError:
                raise InvalidMcpRequest(f"log level {params.get('level')!r} is not a LogLevel") from None
            if "data" not in params:
                raise InvalidMcpRequest("notifications/message must carry data")
        elif self.method == "notifications/cancelled":
            check_request_id(params.get("requestId"), "cancelled requestId")
        elif self.method == "notifications/resources/updated":
            if not isinstance(params.get("uri"), str):
                raise InvalidMcpRequest("notifications/resources/updated must carry a string uri")
        elif self.method == "notifications/subscriptions/acknowledged":
            SubscriptionFilter.from_json(params.get("notifications"))
        elif self.method == "notifications/tasks":
            try:  # a complete task state whose payload matches its status
                self.task  # noqa: B018
            except InvalidMcpMessage as exc:
                raise InvalidMcpRequest(str(exc)) from None

    # -- builders -------------------------------------------------------------------------

    @classmethod
    def progress(cls, token: RequestId, progress: float, total: float | None = None,
                 message: str | None = None) -> Notification:
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        return cls("notifications/progress", params)

    @classmethod
    def log(cls, level: LogLevel, data: Any, logger: str | None = None,
            limits: Limits = defaults.mcp_message) -> Notification:
        """A log message; ``data`` (any JSON value) must fit the bounded MCP JSON profile."""
        return cls.log_json(level, encode({"data": data}), logger, limits, wrapped=True)

    @classmethod
    def log_json(cls, level: LogLevel, data_json: str | bytes, logger: str | None = None,
                 limits: Limits = defaults.mcp_message, *, wrapped: bool = False) -> Notification:
        """A log message whose data is given as JSON text (parsed under ``limits`` first)."""
        try:
            parsed = parse_json(data_json, limits)
        except InvalidMcpMessage as exc:
            raise InvalidMcpRequest(f"log data: {exc}") from None
        params: dict[str, Any] = {"level": LogLevel(level).value,
                                  "data": parsed["data"] if wrapped else parsed}
        if logger is not None:
            params["logger"] = logger
        return cls("notifications/message", params)

    @classmethod
    def cancelled(cls, request_id: RequestId, reason: str | None = None) -> Notification:
        params: dict[str, Any] = {"requestId": check_request_id(request_id)}
        if reason is not None:
            params["reason"] = reason
        return cls("notifications/cancelled", params)

    @classmethod
    def tools_list_changed(cls, subscription_id: RequestId) -> Notification:
        return cls("notifications/tools/list_changed", _meta_with({}, subscription_id))

    @classmethod
    def prompts_list_changed(cls, subscription_id: RequestId) -> Notification:
        return cls("notifications/prompts/list_changed", _meta_with({}, subscription_id))

    @classmethod
    def resources_list_changed(cls, subscription_id: RequestId) -> Notification:
        return cls("notifications/resources/list_changed", _meta_with({}, subscription_id))

    @classmethod
    def task_status(cls, state: TaskState, subscription_id: RequestId) -> Notification:
        """A task status event: the whole task state, as ``tasks/get`` would report it."""
        return cls("notifications/tasks", _meta_with(state.to_json(), subscription_id))

    @classmethod
    def resource_updated(cls, uri: str, subscription_id: RequestId) -> Notification:
        return cls("notifications/resources/updated", _meta_with({"uri": uri}, subscription_id))

    @classmethod
    def acknowledged(cls, honored: SubscriptionFilter, subscription_id: RequestId) -> Notification:
        return cls("notifications/subscriptions/acknowledged",
                   _meta_with({"notifications": honored.to_json()}, subscription_id))

    @classmethod
    def from_wire(cls, method: str, params: dict[str, Any] | None) -> Notification:
        """Validate a notification a peer sent; a bad shape raises InvalidMcpMessage."""
        try:
            return cls(method, params)
        except InvalidMcpRequest as exc:
            raise InvalidMcpMessage(f"invalid {method} notification: {exc}") from None

    # -- accessors ------------------------------------------------------------------------

    @property
    def subscription_id(self) -> RequestId | None:
        meta = (self.params or {}).get("_meta")
        value = meta.get(META_SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None

    @property
    def progress_token(self) -> RequestId | None:
        return (self.params or {}).get("progressToken") if self.method == "notifications/progress" else None

    @property
    def uri(self) -> str | None:
        value = (self.params or {}).get("uri")
        return value if isinstance(value, str) else None

    @property
    def task(self) -> TaskState | None:
        """The task state a ``notifications/tasks`` event reports (parsed whole), else None."""
        if self.method != "notifications/tasks":
            return None
        fields = {key: value for key, value in (self.params or {}).items() if key != "_meta"}
        return parse_task(fields, "notifications/tasks")

    @property
    def acknowledged_filter(self) -> SubscriptionFilter | None:
        if self.method != "notifications/subscriptions/acknowledged":
            return None
        return SubscriptionFilter.from_json((self.params or {}).get("notifications"))

    def to_json(self) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": self.method}
        if self.params is not None:
            message["params"] = copy.deepcopy(dict(self.params))
        return message


@dataclass(frozen=True, slots=True)
class RequestMetadata:
    """Per-request ``_meta`` fields beyond the envelope: progress token, log level, extras.

    ``log_level`` opts this one request in to ``notifications/message`` at or above that level
    (it replaces the removed ``logging/setLevel`` RPC).  ``extra`` keys may not shadow the
    reserved envelope keys.
    """

    progress_token: RequestId | None = None
    log_level: LogLevel | None = None
    extra: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.progress_token is not None:
            check_request_id(self.progress_token, "progress token")
        if self.log_level is not None:
            object.__setattr__(self, "log_level", LogLevel(self.log_level))
        if self.extra is not None:
            extra = _json_object(self.extra, "RequestMetadata.extra")
            reserved = [key for key in extra if key.startswith("io.modelcontextprotocol/") or key == "progressToken"]
            if reserved:
                raise InvalidMcpRequest(f"RequestMetadata.extra may not set reserved keys {reserved}")
            object.__setattr__(self, "extra", extra)

    def to_meta(self) -> dict[str, Any]:
        from zigai.mcp.wire.jsonrpc import META_LOG_LEVEL

        meta: dict[str, Any] = copy.deepcopy(dict(self.extra or {}))
        if self.progress_token is not None:
            meta["progressToken"] = self.progress_token
        if self.log_level is not None:
            meta[META_LOG_LEVEL] = self.log_level.value
        return meta


def _bounded_arguments(arguments: Mapping[str, str] | None, what: str, limits: Limits) -> dict[str, str]:
    if arguments is None:
        return {}
    if not isinstance(arguments, Mapping):
        raise InvalidMcpRequest(f"{what} must map argument names to strings")
    if len(arguments) > limits.max_items:
        raise InvalidMcpRequest(f"{what} has {len(arguments)} entries; at most {limits.max_items} are allowed")
    checked: dict[str, str] = {}
    for key, value in arguments.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidMcpRequest(f"{what} keys and values must be strings")
        for text in (key, value):
            if len(text.encode("utf-8")) > limits.max_value_bytes:
                raise InvalidMcpRequest(f"{what} holds a string over {limits.max_value_bytes} bytes")
        checked[key] = value
    return checked


@dataclass(frozen=True, slots=True)
class PromptReference:
    """A completion target naming a prompt (``ref/prompt``)."""

    name: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "ref/prompt", "name": self.name}


@dataclass(frozen=True, slots=True)
class ResourceTemplateReference:
    """A completion target naming a resource URI template (``ref/resource``)."""

    uri: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "ref/resource", "uri": self.uri}


CompletionReference = PromptReference | ResourceTemplateReference


@dataclass(frozen=True, slots=True)
class PromptRequest:
    """``prompts/get`` parameters: a prompt name and its bounded string arguments."""

    name: str
    arguments: Mapping[str, str] = field(default_factory=dict)
    limits: Limits = defaults.mcp_message

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidMcpRequest("PromptRequest.name must be a non-empty string")
        object.__setattr__(self, "arguments", _bounded_arguments(self.arguments, "prompt arguments", self.limits))

    def to_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"name": self.name}
        if self.arguments:
            params["arguments"] = dict(self.arguments)
        return params


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """``completion/complete`` parameters: the reference, the argument being typed, context."""

    ref: CompletionReference
    argument_name: str
    argument_value: str = ""
    context_arguments: Mapping[str, str] | None = None
    limits: Limits = defaults.mcp_message

    def __post_init__(self) -> None:
        if not isinstance(self.ref, (PromptReference, ResourceTemplateReference)):
            raise InvalidMcpRequest("CompletionRequest.ref must be a PromptReference or ResourceTemplateReference")
        for name in ("argument_name", "argument_value"):
            if not isinstance(getattr(self, name), str):
                raise InvalidMcpRequest(f"CompletionRequest.{name} must be a string")
        _bounded_arguments({self.argument_name: self.argument_value}, "completion argument", self.limits)
        if self.context_arguments is not None:
            object.__setattr__(self, "context_arguments",
                               _bounded_arguments(self.context_arguments, "completion context", self.limits))

    def to_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "ref": self.ref.to_json(),
            "argument": {"name": self.argument_name, "value": self.argument_value},
        }
        if self.context_arguments is not None:
            params["context"] = {"arguments": dict(self.context_arguments)}
        return params
