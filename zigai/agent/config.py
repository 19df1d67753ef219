"""Agent configuration: the immutable :class:`AgentConfig` fields and the per-run option values.

This is the bottom of the agent package's import order — configuration → run state
machine (:mod:`zigai.agent.run`, over the step executors) → the public entry points
(:class:`zigai.agent.Agent`, which subclasses :class:`AgentConfig` and adds ``run`` and
friends).  Nothing here knows how a run is executed.

Invariants:

* an agent configuration holds no per-run state and never changes once it has run (before
  the first run only ``Agent``'s registering decorators add to ``tools``,
  ``dynamic_instructions`` or ``output_validators``, under ``_cache_lock``), so one agent may
  serve many threads at once;
* every field is validated at construction (``InvalidAgentConfiguration`` names the field);
* a small, thread-safe cache keeps derived immutable values (prepared output per model
  profile, merged base settings, typed output specs); it never holds run data.
"""

from __future__ import annotations

import inspect
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from zigai.agent.errors import InvalidAgentConfiguration
from zigai.capability import Capability, CapabilityLayer
from zigai.context_budget import ContextBudget
from zigai.control import CancellationToken
from zigai.hooks import Correlation, Hook, check_hooks
from zigai.messages import USER_CONTENT_TYPES, Message, UserContent
from zigai.model import ManagedTool, Model, UnsupportedModelFeature
from zigai.output import (
    EndStrategy,
    OutputChoice,
    OutputSpec,
    OutputValidator,
    PreparedOutput,
    prepare_output,
)
from zigai.retry import RetryPolicy
from zigai.security import UrlPolicy
from zigai.settings import ModelSettings, merge_settings
from zigai.tool import Tool, ToolLimits
from zigai.tool.context import RunContext
from zigai.tool.policy import Policy
from zigai.toolset import Toolset

if TYPE_CHECKING:
    from zigai.agent.pending import PendingMessageQueue
    from zigai.model import ModelProfile
    from zigai.pricing import PriceTable

__all__ = [
    "AgentConfig", "RunLimits", "RunOptions", "RunContext", "DynamicInstruction", "ToolApproval",
    "TypedMode", "ProviderErrorPolicy",
]

T = TypeVar("T")
if TYPE_CHECKING:  # a default (PEP 696): an agent without output_type has output of any type
    from typing_extensions import TypeVar as _DefaultedTypeVar

    OutputT = _DefaultedTypeVar("OutputT", default=Any)
else:
    OutputT = TypeVar("OutputT")


DynamicInstruction = Callable[[RunContext], "str | None"]

ToolApproval = Callable[[RunContext, str, Any], bool]
"""``(ctx, tool_name, validated_args) -> needs_approval`` for immediate tools (dynamic approval)."""


#: The longest ``Agent.name`` accepted (it is copied into every span, hook event and session record).
MAX_AGENT_NAME_CHARS = 256


def _limit(name: str, value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise InvalidAgentConfiguration(f"RunLimits.{name} must be None or an int >= 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class RunLimits:
    """Per-run ceilings.  ``None`` means unlimited; a value is the largest accepted count.

    ``max_requests`` bounds model requests, ``max_tool_calls`` the tool calls
    admitted across every step, the token limits the cumulative ``RunUsage``.
    """

    max_requests: int | None = 50
    max_tool_calls: int | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_total_tokens: int | None = None

    def __post_init__(self) -> None:
        for name in (
            "max_requests", "max_tool_calls", "max_input_tokens", "max_output_tokens",
            "max_total_tokens",
        ):
            _limit(name, getattr(self, name))


def _str_tuple(value: object, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, Sequence):
        raise InvalidAgentConfiguration(f"{what} must be a string or a sequence of strings")
    items = tuple(value)
    for item in items:
        if not isinstance(item, str):
            raise InvalidAgentConfiguration(f"{what} must contain only strings")
    return items


def _typed_tuple(value: Any, kind: type, what: str) -> tuple[Any, ...]:
    if isinstance(value, kind):
        value = (value,)
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidAgentConfiguration(f"{what} must be a sequence of {kind.__name__} values")
    items = tuple(value)
    for item in items:
        if not isinstance(item, kind):
            raise InvalidAgentConfiguration(
                f"{what} must contain {kind.__name__} values, got {type(item).__name__}"
            )
    return items


def _hooks(value: Any, what: str) -> tuple[Hook, ...]:
    try:
        return check_hooks(value, what)
    except TypeError as exc:
        raise InvalidAgentConfiguration(str(exc)) from None


def _builtin_tools(value: Any) -> tuple[ManagedTool, ...]:
    """Provider-managed tools as ``ManagedTool`` values; a kind given twice is refused."""
    if isinstance(value, (str, ManagedTool)):
        value = (value,)
    tools: list[ManagedTool] = []
    seen: set[str] = set()
    for item in value:
        if isinstance(item, str):
            try:
                item = ManagedTool(item)
            except UnsupportedModelFeature as exc:
                raise InvalidAgentConfiguration(f"Agent.builtin_tools: {exc}") from None
        elif not isinstance(item, ManagedTool):
            raise InvalidAgentConfiguration(
                "Agent.builtin_tools must contain ManagedTool values or tool kind strings "
                f"(web_search, web_fetch, ...), got {type(item).__name__}"
            )
        if item.kind in seen:
            raise InvalidAgentConfiguration(
                f"Agent.builtin_tools names the {item.kind} tool twice; configure it once"
            )
        seen.add(item.kind)
        tools.append(item)
    return tuple(tools)


_REQUEST_ID = re.compile(r"[!-~]{1,512}")


def _check_budget(value: object, what: str) -> None:
    if value is not None and not isinstance(value, ContextBudget):
        raise InvalidAgentConfiguration(f"{what} must be a zigai.context_budget.ContextBudget")


@dataclass(frozen=True, slots=True)
class ProviderErrorPolicy:
    """What an agent run learns about provider HTTP errors (``Agent.provider_error_policy``).

    ``observer`` is called synchronously with a borrowed
    :class:`~zigai.provider.ProviderErrorView` for every provider error response of every
    attempt (copy what you keep; it must not raise).  ``capture_body`` opts into a bounded
    raw body prefix on the view and on the raised error: a body of exactly
    ``max_body_bytes`` is complete, a larger one is cut and sets ``body_truncated``.
    """

    observer: Callable[[Any], None] | None = None
    capture_body: bool = False
    max_body_bytes: int = 4096

    def __post_init__(self) -> None:
        if self.observer is not None and not callable(self.observer):
            raise InvalidAgentConfiguration("ProviderErrorPolicy.observer must be callable")
        value = self.max_body_bytes
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidAgentConfiguration("ProviderErrorPolicy.max_body_bytes must be an int >= 0")


def _prompt_parts(value: object) -> tuple[UserContent, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidAgentConfiguration(
            "RunOptions.prompt_parts must be a sequence of UserContent items; put plain text in "
            "prompt, or wrap it as TextContent(...)"
        )
    for index, item in enumerate(value):
        if not isinstance(item, USER_CONTENT_TYPES):
            raise InvalidAgentConfiguration(
                f"RunOptions.prompt_parts[{index}] is {type(item).__name__}, not UserContent "
                "(TextContent, ImageContent, DocumentContent, AudioContent, ...)"
            )
    return tuple(value)


def _settings_hint(value: object) -> str:
    if isinstance(value, dict):  # PydanticAI's settings are a TypedDict
        return "; a settings dict converts with zigai.settings.ModelSettings(**settings)"
    return ""


def _timeout(name: str, value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise InvalidAgentConfiguration(f"{name} must be None or an int >= 0 (milliseconds)")


@dataclass(frozen=True, slots=True)
class RunOptions:
    """Per-invocation inputs.  ``timeout_ms`` can only tighten ``Agent.run_timeout_ms``.

    ``prompt_parts`` holds rich :data:`~zigai.messages.PromptPart` items (images, documents,
    audio, text ...) sent before ``prompt`` in the run's first request, each as its own
    ``UserPromptPart``; a run needs a prompt, prompt parts or a history ending in a request.
    ``url_policy`` can only tighten ``Agent.url_policy`` (a URL must pass both).
    """

    prompt: str | Sequence[UserContent] | None = None
    message_history: Sequence[Message] = ()
    instructions: str | Sequence[str] | None = None
    model_settings: ModelSettings | None = None
    deps: Any = None
    timeout_ms: int | None = None
    cancellation: CancellationToken | None = None
    limits: RunLimits | None = None
    url_policy: UrlPolicy | None = None
    history_processors: Sequence[Callable[[tuple[Message, ...]], Sequence[Message]]] = ()
    pending_messages: PendingMessageQueue | None = None
    hooks: Sequence[Hook] = ()
    correlation: Correlation | None = None
    context_budget: ContextBudget | None = None
    request_id: str | None = None
    capabilities: Sequence[Capability] = ()
    capability_layers: Sequence[CapabilityLayer] = ()
    prompt_parts: Sequence[UserContent] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "message_history", tuple(self.message_history or ()))
        if self.prompt_parts or not isinstance(self.prompt_parts, tuple):
            object.__setattr__(self, "prompt_parts", _prompt_parts(self.prompt_parts))
        if self.capabilities or self.capability_layers:
            object.__setattr__(self, "capabilities", _typed_tuple(
                self.capabilities, Capability, "RunOptions.capabilities"))
            object.__setattr__(self, "capability_layers", _typed_tuple(
                self.capability_layers, CapabilityLayer, "RunOptions.capability_layers"))
        if self.request_id is not None and (
            not isinstance(self.request_id, str) or not _REQUEST_ID.fullmatch(self.request_id)
        ):
            raise InvalidAgentConfiguration(
                "RunOptions.request_id must be 1-512 visible ASCII characters (it is sent as an "
                f"HTTP header), got {self.request_id!r}"
            )
        _check_budget(self.context_budget, "RunOptions.context_budget")
        if self.hooks or not isinstance(self.hooks, tuple):
            object.__setattr__(self, "hooks", _hooks(self.hooks, "RunOptions.hooks"))
        if self.correlation is not None and not isinstance(self.correlation, Correlation):
            raise InvalidAgentConfiguration("RunOptions.correlation must be a zigai.hooks.Correlation")
        object.__setattr__(self, "instructions", _str_tuple(self.instructions, "RunOptions.instructions"))
        object.__setattr__(self, "history_processors", tuple(self.history_processors))
        _timeout("RunOptions.timeout_ms", self.timeout_ms)
        if self.model_settings is not None and not isinstance(self.model_settings, ModelSettings):
            raise InvalidAgentConfiguration(
                "RunOptions.model_settings must be a ModelSettings" + _settings_hint(self.model_settings)
            )
        if self.cancellation is not None and not isinstance(self.cancellation, CancellationToken):
            raise InvalidAgentConfiguration("RunOptions.cancellation must be a CancellationToken")
        if self.limits is not None and not isinstance(self.limits, RunLimits):
            raise InvalidAgentConfiguration("RunOptions.limits must be a RunLimits")
        if self.url_policy is not None and not isinstance(self.url_policy, UrlPolicy):
            raise InvalidAgentConfiguration("RunOptions.url_policy must be a zigai.security.UrlPolicy or None")
        if self.pending_messages is not None:
            from zigai.agent.pending import PendingMessageQueue

            if not isinstance(self.pending_messages, PendingMessageQueue):
                raise InvalidAgentConfiguration("RunOptions.pending_messages must be a PendingMessageQueue")


_TYPED_NAME = re.compile(r"[^A-Za-z0-9_-]")

TypedMode = Literal["native", "tool", "prompted"]


@dataclass(frozen=True, slots=True)
class AgentConfig(Generic[OutputT]):
    """Immutable agent configuration (see module docstring); :class:`~zigai.agent.Agent` runs it.

    ``tools`` may hold plain functions (reflected by :func:`zigai.reflect.tool`);
    ``output_type`` makes every run typed (see :mod:`zigai.agent._familiar.output_type`), with
    ``output_mode`` choosing native, tool or prompted output as ``run_typed``'s ``mode`` does.
    """

    model: Model | str
    instructions: str | Sequence[str] = ()
    system_prompt: str | Sequence[str] = ()
    dynamic_instructions: Sequence[DynamicInstruction] = ()
    tools: Sequence[Tool | Callable[..., Any]] = ()
    toolsets: Sequence[Toolset] = ()
    output: OutputSpec = field(default_factory=OutputSpec.text)
    output_validators: Sequence[OutputValidator] = ()
    max_output_retries: int = 1
    max_tool_retries: int = 1
    end_strategy: EndStrategy = EndStrategy.graceful
    model_settings: ModelSettings | None = None
    run_timeout_ms: int | None = None
    request_timeout_ms: int | None = None
    limits: RunLimits = field(default_factory=RunLimits)
    tool_limits: ToolLimits = field(default_factory=ToolLimits)
    retry_policy: RetryPolicy | None = None
    history_processors: Sequence[Callable[[tuple[Message, ...]], Sequence[Message]]] = ()
    deps_type: type | None = None
    url_policy: UrlPolicy | None = None
    name: str | None = None
    tool_approval: ToolApproval | None = None
    hooks: Sequence[Hook] = ()
    builtin_tools: Sequence[ManagedTool | str] = ()
    state_key: bytes | None = field(default=None, repr=False)
    tool_policies: Sequence[Policy] = ()
    context_budget: ContextBudget | None = None
    provider_error_policy: ProviderErrorPolicy | None = None
    price_table: PriceTable | None = None
    capabilities: Sequence[Capability] = ()
    #: Where message timestamps come from: called once for every request the agent builds
    #: and every response it receives without a timestamp; must return a timezone-aware
    #: datetime.  ``None`` means ``datetime.now(UTC)``.  A fixed clock makes histories
    #: from separate runs compare equal.
    clock: Callable[[], datetime] | None = field(default=None, compare=False)
    output_type: type[OutputT] | Sequence[type[OutputT]] | Callable[..., OutputT] | None = None
    output_mode: TypedMode | None = None
    #: Set by the first run (under ``_cache_lock``); decorators refuse to change a frozen agent.
    _frozen: bool = field(default=False, init=False, repr=False, compare=False)
    #: Derived from output_type in __post_init__: the type typed runs decode into (None for
    #: untyped agents and output functions) and the OutputSpec runs use.
    _typed_output: Any = field(default=None, init=False, repr=False, compare=False)
    _output_spec: Any = field(default=None, init=False, repr=False, compare=False)
    #: Applied last to every function tool a model step resolves — direct tools, toolsets
    #: (MCP included), capability tools (eager and loaded on demand) and tools a policy's
    #: ``prepare`` stage returned — so whatever route brought a tool in, the tool that runs
    #: is ``tool_wrapper(tool)``.  It must return a :class:`~zigai.tool.Tool` with the same
    #: name (``tool.replace(invoke=...)``).  ``zigai.durable`` uses it to make every call a
    #: checkpointed step.
    tool_wrapper: Callable[[Tool], Tool] | None = field(default=None, compare=False)
    _cache: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    _cache_lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    def __getstate__(self) -> dict[str, Any]:
        # Pickling (e.g. to a Dask worker) copies the configuration; the lock and the derived-value
        # cache belong to one process and are recreated empty.
        skip = ("_cache", "_cache_lock", "_frozen", "_typed_output", "_output_spec")
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_cache", {})
        object.__setattr__(self, "_cache_lock", threading.Lock())
        object.__setattr__(self, "_frozen", False)
        self._derive_output()

    def _derive_output(self) -> None:
        from zigai.agent._familiar.output_type import resolve_output_type

        typed, spec = resolve_output_type(self.output_type, self.output_mode, self.output)
        object.__setattr__(self, "_typed_output", typed)
        object.__setattr__(self, "_output_spec", spec)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        # HOOK (issue 6, CLI): a model string ("openai:gpt-5-mini", "test") is resolved by
        # zigai.models.infer_model (credentials from the environment; adapters imported lazily).
        # A model named by string is a hosted API reached through infer_model: like the CLI
        # it retries by default (RetryPolicy()'s defaults) unless retry_policy is given;
        # pass RetryPolicy.no_retry() to turn that off.  A Model value keeps the spec's
        # default (no retries).
        if isinstance(self.model, str):
            from zigai.models import infer_model

            if self.retry_policy is None and self.model.strip() != "test":
                set_(self, "retry_policy", RetryPolicy())
            set_(self, "model", infer_model(self.model))
        for attr in ("profile", "request"):
            if not hasattr(self.model, attr):
                raise InvalidAgentConfiguration(f"Agent.model must implement zigai.model.Model (no {attr})")
        if self.name is not None and (not isinstance(self.name, str) or len(self.name) > MAX_AGENT_NAME_CHARS):
            raise InvalidAgentConfiguration(
                f"Agent.name must be None or a string of at most {MAX_AGENT_NAME_CHARS} characters "
                "(it names the agent in telemetry spans, hooks and sessions)")
        set_(self, "instructions", _str_tuple(self.instructions, "Agent.instructions"))
        set_(self, "system_prompt", _str_tuple(self.system_prompt, "Agent.system_prompt"))
        for name in ("dynamic_instructions", "output_validators", "history_processors"):
            items = tuple(getattr(self, name))
            for item in items:
                if not callable(item):
                    raise InvalidAgentConfiguration(f"Agent.{name} must contain callables")
            if name == "output_validators":
                for item in items:
                    _check_validator_signature(item)
            set_(self, name, items)
        from zigai.agent._familiar.output_type import coerce_tools

        set_(self, "tools", coerce_tools(self.tools))
        toolsets = tuple(self.toolsets)
        for toolset in toolsets:
            if not isinstance(toolset, Toolset):
                raise InvalidAgentConfiguration("Agent.toolsets must be Toolset values")
        set_(self, "toolsets", toolsets)
        if not isinstance(self.output, OutputSpec):
            raise InvalidAgentConfiguration("Agent.output must be an OutputSpec")
        self._derive_output()
        for name in ("max_output_retries", "max_tool_retries"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidAgentConfiguration(f"Agent.{name} must be an int >= 0")
        try:
            set_(self, "end_strategy", EndStrategy(self.end_strategy))
        except ValueError:
            raise InvalidAgentConfiguration(f"unknown end strategy {self.end_strategy!r}") from None
        if self.model_settings is not None and not isinstance(self.model_settings, ModelSettings):
            raise InvalidAgentConfiguration(
                "Agent.model_settings must be a ModelSettings" + _settings_hint(self.model_settings)
            )
        _timeout("Agent.run_timeout_ms", self.run_timeout_ms)
        _timeout("Agent.request_timeout_ms", self.request_timeout_ms)
        if not isinstance(self.limits, RunLimits):
            raise InvalidAgentConfiguration("Agent.limits must be a RunLimits")
        if not isinstance(self.tool_limits, ToolLimits):
            raise InvalidAgentConfiguration("Agent.tool_limits must be a ToolLimits")
        if self.retry_policy is not None and not isinstance(self.retry_policy, RetryPolicy):
            raise InvalidAgentConfiguration("Agent.retry_policy must be a RetryPolicy")
        if self.tool_approval is not None and not callable(self.tool_approval):
            raise InvalidAgentConfiguration("Agent.tool_approval must be callable")
        if self.url_policy is not None and not isinstance(self.url_policy, UrlPolicy):
            raise InvalidAgentConfiguration("Agent.url_policy must be a zigai.security.UrlPolicy or None")
        if self.tool_wrapper is not None and not callable(self.tool_wrapper):
            raise InvalidAgentConfiguration("Agent.tool_wrapper must be callable")
        set_(self, "hooks", _hooks(self.hooks, "Agent.hooks"))
        set_(self, "builtin_tools", _builtin_tools(self.builtin_tools))
        _check_budget(self.context_budget, "Agent.context_budget")
        if self.provider_error_policy is not None and not isinstance(
            self.provider_error_policy, ProviderErrorPolicy
        ):
            raise InvalidAgentConfiguration("Agent.provider_error_policy must be a ProviderErrorPolicy")
        if self.price_table is not None:
            from zigai.pricing import PriceTable as _PriceTable

            if not isinstance(self.price_table, _PriceTable):
                raise InvalidAgentConfiguration("Agent.price_table must be a zigai.pricing.PriceTable")
        policies = tuple(self.tool_policies)
        for policy in policies:
            if not isinstance(policy, Policy):
                raise InvalidAgentConfiguration(
                    f"Agent.tool_policies must be zigai.tool.Policy values, got {type(policy).__name__}"
                )
        set_(self, "tool_policies", policies)
        set_(self, "capabilities", _typed_tuple(self.capabilities, Capability, "Agent.capabilities"))
        if self.clock is not None and not callable(self.clock):
            raise InvalidAgentConfiguration(
                "Agent.clock must be a callable returning a timezone-aware datetime, "
                f"got {type(self.clock).__name__}"
            )
        from zigai.agent.paused_state import check_key

        try:
            set_(self, "state_key", check_key(self.state_key, "Agent.state_key"))
        except TypeError as exc:
            raise InvalidAgentConfiguration(str(exc)) from None

    @property
    def function_tools(self) -> tuple[Tool, ...]:
        """``tools`` as built: plain functions given there are reflected Tool values here."""
        return self.tools  # type: ignore[return-value]  # coerced to tuple[Tool, ...] in __post_init__

    # -- derived values (cached; immutable) -------------------------------------------------

    def _cached(self, key: Any, build: Callable[[], Any]) -> Any:
        cache = self._cache
        try:
            return cache[key]
        except KeyError:
            pass
        value = build()
        with self._cache_lock:
            if len(cache) > 256:
                cache.clear()
            cache[key] = value
        return value

    def base_settings(self) -> ModelSettings:
        """Model-level settings (``model.settings`` when present) merged with the agent's."""
        model_layer = getattr(self.model, "settings", None)
        if not isinstance(model_layer, ModelSettings):
            model_layer = None
        try:
            key = ("settings", model_layer)
            hash(key)
        except TypeError:  # an unhashable extension body: merge without caching
            return merge_settings(model_layer, self.model_settings)
        return self._cached(key, lambda: merge_settings(model_layer, self.model_settings))

    def prepared_output(self, profile: ModelProfile) -> PreparedOutput:
        """The agent's output spec prepared for ``profile``; cached per profile."""
        return self._cached(("output", profile), lambda: prepare_output(self._output_spec, profile))

    def typed_output(self, tp: Any, mode: TypedMode | None, profile: ModelProfile) -> PreparedOutput:
        """The prepared output ``run_typed`` uses for type ``tp``; cached per type, mode, profile."""
        return self._cached(
            ("typed", tp, mode, profile),
            lambda: prepare_output(self.typed_spec(tp, mode, profile), profile),
        )

    def typed_spec(self, tp: Any, mode: TypedMode | None, profile: ModelProfile) -> OutputSpec:
        """The output spec ``run_typed`` derives for type ``tp`` (schema from zigai.reflect)."""

        def build() -> OutputSpec:
            from zigai.reflect import json_schema

            schema = json_schema(tp)
            raw = getattr(tp, "__name__", "") or "final_result"
            name = _TYPED_NAME.sub("_", raw)[:64] or "final_result"
            choice = OutputChoice(name, schema)
            chosen = mode
            if chosen is None:
                if self.output_mode is not None:
                    chosen = self.output_mode
                elif self.output.mode.value in ("native", "tool", "prompted"):
                    chosen = self.output.mode.value  # type: ignore[assignment]
                elif profile.json_schema_output:
                    chosen = "native"
                elif profile.supports_tools:
                    chosen = "tool"
                else:
                    chosen = "prompted"
            if chosen == "native":
                return OutputSpec.native([choice])
            if chosen == "tool":
                from zigai.agent._familiar.output_type import union_members

                members = union_members(tp)
                if members:  # one output tool per member of a union of object types
                    return OutputSpec.tool([OutputChoice(n, json_schema(m)) for n, m in members.items()])
                return OutputSpec.tool([choice])
            if chosen == "prompted":
                return OutputSpec.prompted([choice])
            raise InvalidAgentConfiguration(f"unknown typed output mode {chosen!r}")

        return build()


def _check_validator_signature(validator: Any) -> None:
    """An output validator is called as ``validator(name, ctx, value)``; one that cannot take
    those three (a PydanticAI-style ``(ctx, value)``, say) is refused when the agent is built,
    not with a bare ``TypeError`` in the middle of a run."""
    try:
        signature = inspect.signature(validator)
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return
    try:
        signature.bind(None, None, None)
    except TypeError:
        raise InvalidAgentConfiguration(
            f"output validator {getattr(validator, '__name__', validator)!r} takes {signature}, "
            "but is called as validator(name, ctx, value): add the leading name parameter "
            "(the output choice's name, 'text' for plain text), or keep the PydanticAI shape "
            "(ctx, output) / (output) and add it with agent.with_output_validator(...) or "
            "@agent.output_validator"
        ) from None

