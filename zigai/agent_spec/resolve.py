"""Phases 2 and 3: the dry run (:func:`validate_resolution`) and full resolution (:func:`resolve`).

Invariants:

* the dry run builds no model, starts no process and touches no network: it looks names up
  in the application's :class:`Catalogs`, resolves capability dependencies transitively
  (dependency first, declaration order; a cycle is :class:`CapabilityDependencyCycle`), then
  hands the resulting capabilities, each with the spec's loading mode, to a
  :class:`~zigai.capability.CapabilityRegistry` (conflicts among eager bundles, size limits:
  the capability package's own errors, message prefixed with the spec path), checks that
  every environment variable the spec needs is set
  (:class:`MissingEnvironment` names *every* missing one), and runs the provider entry's
  secret-free ``validate`` callback, which sees the model reference and no environment;
* environment reads are limited to the allowlist: the document's ``env`` names, the provider
  entry's declared names and ``model.api_key_env``; the model factory receives a mapping
  holding only those names;
* :func:`resolve` repeats the dry run, and only when every local check passes does it call the
  application's model factory, then assembles an :class:`~zigai.agent.Agent` with the plan's
  capabilities attached (``Agent.capabilities``, in activation order, each with its loading
  mode); tools, toolsets and capability implementations stay borrowed from the catalogs.  :class:`Resolved` owns
  the agent and runs the cleanups (the factory's, then each MCP connection's, in reverse
  order) when it is closed;
* this module imports no concrete provider (``tests/test_layers.py`` checks it).
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zigai._owner import Owner
from zigai.agent_spec.document import AgentSpec, McpServerDoc, ModelRef
from zigai.agent_spec.errors import (
    AgentSpecClosed,
    CapabilityDependencyCycle,
    InvalidAgentSpec,
    MissingEnvironment,
    ProviderValidationFailed,
    UnresolvedReference,
)
from zigai.agent_spec.parse import Owned, child_path
from zigai.capability import (
    Capability,
    CapabilityError,
    CapabilityLimits,
    CapabilityLoading,
    CapabilityRegistry,
    InvalidCapability,
)

__all__ = [
    "ProviderEntry",
    "Catalogs",
    "BuiltModel",
    "ResolvedCapability",
    "ResolutionPlan",
    "Resolved",
    "validate_resolution",
    "resolve",
]


@dataclass(frozen=True, slots=True)
class ProviderEntry:
    """What the dry run knows about one provider, without credentials or clients.

    ``credentials`` are alternatives (one must be set) unless ``credential_optional`` says the
    configuration needs none (it sees only the ``required_env``/``optional_env`` values, never
    a credential); each ``required_env`` group is a tuple of alternatives; ``optional_env``
    are further names the factory may read; ``validate`` is the secret-free check of the model
    reference (raise any exception to refuse it); ``missing_env`` covers a requirement a fixed
    group cannot state: given the model reference (``${VAR}`` substituted) and the same
    non-credential values, it returns what is still missing, each entry alternatives joined by
    ``" or "`` (zigai's catalog uses it for the Bedrock Converse region, which may also come
    from an ARN model id or the AWS profile).
    """

    credentials: tuple[str, ...] = ()
    required_env: tuple[tuple[str, ...], ...] = ()
    optional_env: tuple[str, ...] = ()
    validate: Callable[[ModelRef], None] | None = None
    credential_optional: Callable[[Mapping[str, str]], bool] | None = None
    missing_env: Callable[[ModelRef, Mapping[str, str]], tuple[str, ...]] | None = None

    def credential_names(self, model: ModelRef) -> tuple[str, ...]:
        return (model.api_key_env,) if model.api_key_env else self.credentials

    def readable(self, model: ModelRef) -> frozenset[str]:
        names = set(self.credential_names(model)) | set(self.optional_env)
        for group in self.required_env:
            names.update(group)
        return frozenset(names)


@dataclass(frozen=True, slots=True)
class Catalogs:
    """The application's registries the spec's names are looked up in (all borrowed).

    ``capabilities`` maps a name to a :class:`~zigai.capability.Capability` whose ``id`` is
    that name (a :func:`zigai.capabilities_builtin.builtin_capabilities` catalog merges in
    with ``{**builtins, **mine}``); a mapping with an ``absence(name)`` method may explain a
    missing name.  ``capability_limits`` bound the registry check of the dry run (default:
    the limits every agent run applies).
    """

    providers: Mapping[str, ProviderEntry]
    tools: Mapping[str, Any] = field(default_factory=dict)
    toolsets: Mapping[str, Any] = field(default_factory=dict)
    capabilities: Mapping[str, Any] = field(default_factory=dict)
    capability_limits: CapabilityLimits | None = None


@dataclass(frozen=True, slots=True)
class BuiltModel:
    """A model factory's result when it has something to release (``cleanup``)."""

    model: Any
    cleanup: Callable[[], None] | None = None


ModelFactory = Callable[[ModelRef, Mapping[str, str]], Any]
"""``(model reference with substitutions applied, allowlisted environment) -> Model | BuiltModel``."""

McpConnector = Callable[[McpServerDoc], Any]
"""``(server with substitutions applied) -> Toolset | (Toolset, cleanup)``.  Without one,
:func:`resolve` uses :func:`zigai.mcp.client.connect.connect_server` (stdio and Streamable HTTP, the
default stdio child environment and URL policy)."""


@dataclass(frozen=True, slots=True)
class ResolvedCapability:
    """One capability in activation order; ``required_by`` is empty for a listed one.

    ``implementation`` is the catalog's capability (borrowed); ``capability`` the descriptor
    attached to the agent: the same bundle with the spec's ``loading`` mode.  ``path`` is the
    spec entry that brought it in (a dependency's is the listed capability's).
    """

    name: str
    loading: str
    implementation: Any = field(compare=False)
    required_by: str | None = None
    capability: Any = field(default=None, compare=False)
    path: str = "$.capabilities"


@dataclass(frozen=True, slots=True)
class ResolutionPlan:
    """The dry run's result: everything resolved except the model and the MCP connections."""

    provider: str
    model: ModelRef
    instructions: tuple[str, ...]
    tools: tuple[Any, ...]
    toolsets: tuple[Any, ...]
    mcp_servers: tuple[McpServerDoc, ...]
    capabilities: tuple[ResolvedCapability, ...]
    environment: tuple[str, ...]
    """The allowlisted variable names resolution may read (sorted)."""


_REFERENCE = re.compile(r"\$\$\{|\$\{([A-Z_][A-Z0-9_]*)\}")


def _substitute(text: str, env: Mapping[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        return "${" if match.group(0) == "$${" else env[match.group(1)]
    return _REFERENCE.sub(replace, text)


def _spec_of(owned: Owned | AgentSpec) -> AgentSpec:
    if isinstance(owned, AgentSpec):
        return owned
    return owned.spec


def _lookup(catalog: Mapping[str, Any], names: Sequence[str], path: str, what: str) -> tuple[Any, ...]:
    found = []
    for index, name in enumerate(names):
        if name not in catalog:
            known = ", ".join(sorted(catalog)) or "none"
            raise UnresolvedReference(f"{child_path(path, index)}: no {what} named {name!r} "
                                      f"(known: {known})", path=child_path(path, index), name=name)
        found.append(catalog[name])
    return tuple(found)


def _dependency_names(implementation: Any) -> tuple[str, ...]:
    names = []
    for dep in getattr(implementation, "dependencies", ()) or ():
        names.append(dep if isinstance(dep, str) else str(getattr(dep, "id", dep)))
    return tuple(names)


def _capabilities(spec: AgentSpec, catalog: Mapping[str, Any]) -> tuple[ResolvedCapability, ...]:
    """Listed capabilities and their transitive dependencies, dependency first."""
    order: list[ResolvedCapability] = []
    done: set[str] = set()
    listed = {ref.name: ref.loading for ref in spec.capabilities}

    def visit(name: str, stack: list[str], path: str, required_by: str | None, loading: str) -> None:
        if name in done:
            return
        if name in stack:
            cycle = tuple(stack[stack.index(name):] + [name])
            raise CapabilityDependencyCycle(
                f"{path}: capability dependencies form a cycle: {' -> '.join(cycle)}",
                path=path, cycle=cycle)
        if name not in catalog:
            known = ", ".join(sorted(catalog)) or "none"
            via = f" (a dependency of {required_by!r})" if required_by else ""
            absence = getattr(catalog, "absence", None)
            reason = absence(name) if callable(absence) else None
            why = f"; {reason}" if reason else ""
            raise UnresolvedReference(f"{path}: no capability named {name!r}{via} (known: {known}){why}",
                                      path=path, name=name)
        implementation = catalog[name]
        stack.append(name)
        for dependency in _dependency_names(implementation):
            visit(dependency, stack, path, name, listed.get(dependency, loading))
        stack.pop()
        done.add(name)
        mode = listed.get(name, loading)
        order.append(ResolvedCapability(name, mode, implementation,
                                        None if name in listed else required_by,
                                        _with_loading(implementation, name, mode, path), path))

    for index, ref in enumerate(spec.capabilities):
        visit(ref.name, [], child_path("$.capabilities", index), None, ref.loading)
    return tuple(order)


def _with_loading(implementation: Any, name: str, loading: str, path: str) -> Capability:
    """The catalog's capability with the spec's loading mode (the descriptor the agent gets)."""
    if not isinstance(implementation, Capability):
        raise InvalidCapability(f"{path}: the capability catalog's entry {name!r} is a "
                                f"{type(implementation).__name__}, not a zigai.capability.Capability")
    if implementation.id != name:
        raise InvalidCapability(f"{path}: the capability catalog's entry {name!r} has the id "
                                f"{implementation.id!r}; register each capability under its own id")
    mode = CapabilityLoading(loading)
    return implementation if implementation.loading is mode else dataclasses.replace(implementation, loading=mode)


def _check_registry(capabilities: tuple[ResolvedCapability, ...], limits: CapabilityLimits | None) -> None:
    """The registry's structural checks over the plan (what an agent run's setup would refuse)."""
    try:
        CapabilityRegistry([c.capability for c in capabilities], limits=limits)
    except CapabilityError as exc:
        named = getattr(exc, "capability_id", "")
        path = next((c.path for c in capabilities if c.name == named), "$.capabilities")
        located = copy.copy(exc)
        located.args = (f"{path}: {exc}",)
        raise located from None


def _settings(model: ModelRef, entry: ProviderEntry, env: Mapping[str, str]) -> dict[str, str]:
    """The set, non-credential values of the names ``entry`` reads (what its hooks may see)."""
    return {n: env[n] for n in entry.readable(model) - set(entry.credential_names(model)) if env.get(n)}


def _missing(spec: AgentSpec, entry: ProviderEntry, env: Mapping[str, str]) -> list[str]:
    def present(name: str) -> bool:
        return bool(env.get(name))

    missing: list[str] = []
    needed = entry.credential_names(spec.model)
    visible = _settings(spec.model, entry, env)
    optional = entry.credential_optional is not None and entry.credential_optional(visible)
    if needed and not optional and not any(present(n) for n in needed):
        missing.append(" or ".join(needed))
    for group in entry.required_env:
        if not any(present(n) for n in group):
            missing.append(" or ".join(group))
    for reference in spec.references:
        if not present(reference.name) and reference.name not in missing:
            missing.append(reference.name)
    return missing


def validate_resolution(spec: Owned | AgentSpec, catalogs: Catalogs,
                        env: Mapping[str, str] | None = None) -> ResolutionPlan:
    """The dry run (see the module docstring); no model is built, nothing is started."""
    document = _spec_of(spec)
    environment = os.environ if env is None else env
    entry = catalogs.providers.get(document.model.provider)
    if entry is None:
        known = ", ".join(sorted(catalogs.providers)) or "none"
        raise UnresolvedReference(f"$.model.provider: no provider named {document.model.provider!r} "
                                  f"(known: {known})", path="$.model.provider",
                                  name=document.model.provider)
    tools = _lookup(catalogs.tools, document.tools, "$.tools", "tool")
    toolsets = _lookup(catalogs.toolsets, document.toolsets, "$.toolsets", "toolset")
    capabilities = _capabilities(document, catalogs.capabilities)
    _check_registry(capabilities, catalogs.capability_limits)
    _check_options(document)
    missing = _missing(document, entry, environment)
    if missing:
        raise MissingEnvironment(
            f"$: set these environment variables: {', '.join(missing)}", variables=tuple(missing))
    allowed = entry.readable(document.model) | set(document.env)
    view = {name: environment[name] for name in document.env}
    model = ModelRef(document.model.provider, _substitute(document.model.name, view),
                     document.model.api_key_env, document.model.profile)
    if entry.validate is not None:
        try:
            entry.validate(model)
        except Exception as exc:
            raise ProviderValidationFailed(
                f"$.model: provider {model.provider!r} refused model {model.name!r}: {exc}") from None
    if entry.missing_env is not None:
        try:
            still = entry.missing_env(model, _settings(model, entry, environment))
        except Exception as exc:
            raise ProviderValidationFailed(
                f"$.model: provider {model.provider!r} cannot serve model {model.name!r}: {exc}") from None
        if still:
            raise MissingEnvironment(f"$: set these environment variables: {', '.join(still)}",
                                     variables=tuple(still))
    return ResolutionPlan(
        provider=model.provider, model=model,
        instructions=tuple(_substitute(text, view) for text in document.instructions),
        tools=tools, toolsets=toolsets,
        mcp_servers=tuple(McpServerDoc(s.name, tuple(_substitute(a, view) for a in s.command), s.timeout_ms,
                                       None if s.url is None else _substitute(s.url, view))
                          for s in document.mcp_servers),
        capabilities=capabilities, environment=tuple(sorted(allowed)),
    )


class Resolved(Owner):
    """An owned :class:`~zigai.agent.Agent` built from a spec, plus its activation plan.

    ``close()`` runs the model factory's cleanup and each MCP connection's, newest first;
    every cleanup runs even when an earlier one raises (the first error is re-raised).
    """

    __slots__ = ("_agent", "_plan", "_cleanups")
    _closed_error = AgentSpecClosed

    def __init__(self, agent: Any, plan: ResolutionPlan, cleanups: list[Callable[[], None]]) -> None:
        super().__init__()
        self._agent = agent
        self._plan = plan
        self._cleanups = cleanups

    @property
    def agent(self) -> Any:
        self._check()
        return self._agent

    @property
    def plan(self) -> ResolutionPlan:
        self._check()
        return self._plan

    @property
    def capabilities(self) -> tuple[ResolvedCapability, ...]:
        self._check()
        return self._plan.capabilities

    def _release(self) -> None:
        _run_cleanups(self._cleanups)
        self._agent = None
        self._cleanups = []


def _run_cleanups(cleanups: list[Callable[[], None]]) -> None:
    first: BaseException | None = None
    for cleanup in reversed(cleanups):
        try:
            cleanup()
        except BaseException as exc:  # keep releasing; report the first failure
            first = first or exc
    cleanups.clear()
    if first is not None:
        raise first


def _output(spec: AgentSpec) -> Any:
    from zigai.output import OutputChoice, OutputSpec

    doc = spec.output
    if doc is None:
        return OutputSpec.text()
    choice = OutputChoice(doc.name, doc.schema, doc.description, strict=doc.strict)
    if doc.mode == "native":
        return OutputSpec.native([choice])
    if doc.mode == "prompted":
        return OutputSpec.prompted([choice])
    return OutputSpec.tool([choice])


def _agent_options(spec: AgentSpec) -> dict[str, Any]:
    from zigai.agent import RunLimits
    from zigai.retry import RetryPolicy
    from zigai.settings import ModelSettings

    options: dict[str, Any] = {"output": _output(spec)}
    settings = {k: getattr(spec.settings, k) for k in spec.settings.__slots__
                if getattr(spec.settings, k) is not None}
    if settings:
        options["model_settings"] = ModelSettings(**settings)
    limits = spec.limits
    run_limits = {k: getattr(limits, k) for k in ("max_requests", "max_tool_calls", "max_input_tokens",
                                                  "max_output_tokens", "max_total_tokens")
                  if getattr(limits, k) is not None}
    if run_limits:
        options["limits"] = RunLimits(**run_limits)
    for name in ("run_timeout_ms", "request_timeout_ms", "max_tool_retries", "max_output_retries"):
        if getattr(limits, name) is not None:
            options[name] = getattr(limits, name)
    if spec.retry is not None:
        retry = {k: getattr(spec.retry, k) for k in spec.retry.__slots__
                 if getattr(spec.retry, k) is not None}
        if "retry_on" in retry:
            retry["retry_on"] = frozenset(retry["retry_on"])
        options["retry_policy"] = RetryPolicy(**retry)
    return options


def resolve(spec: Owned | AgentSpec, catalogs: Catalogs, model_factory: ModelFactory,
            env: Mapping[str, str] | None = None, *, mcp_connector: McpConnector | None = None,
            hooks: Sequence[Any] = ()) -> Resolved:
    """Full resolution: the dry run, then the model through ``model_factory``, MCP toolsets
    through ``mcp_connector`` (default :func:`zigai.mcp.client.connect.connect_server`), and one
    assembled :class:`~zigai.agent.Agent` (owned)."""
    from zigai.agent import Agent

    document = _spec_of(spec)
    plan = validate_resolution(document, catalogs, env)
    if plan.mcp_servers and mcp_connector is None:
        from zigai.mcp.client.connect import (
            connect_server as mcp_connector,  # the documented default
        )
    options = _agent_options(document)  # may raise for settings the library refuses
    environment = os.environ if env is None else env
    view = {name: environment[name] for name in plan.environment if name in environment}
    cleanups: list[Callable[[], None]] = []
    try:
        built = model_factory(plan.model, view)
        if isinstance(built, BuiltModel):
            if built.cleanup is not None:
                cleanups.append(built.cleanup)
            built = built.model
        toolsets = list(plan.toolsets)
        for server in plan.mcp_servers:
            assert mcp_connector is not None
            connected = mcp_connector(server)
            if isinstance(connected, tuple):
                connected, cleanup = connected
                cleanups.append(cleanup)
            toolsets.append(connected)
        agent = Agent(built, name=document.name, instructions=plan.instructions, tools=plan.tools,
                      toolsets=tuple(toolsets), hooks=tuple(hooks),
                      capabilities=tuple(c.capability for c in plan.capabilities), **options)
    except BaseException:
        _run_cleanups(cleanups)
        raise
    return Resolved(agent, plan, cleanups)


def _check_options(spec: AgentSpec) -> None:
    """Build the option values once so the dry run refuses what the library would refuse."""
    try:
        _agent_options(spec)
    except Exception as exc:
        raise InvalidAgentSpec(f"$: {exc}") from None
