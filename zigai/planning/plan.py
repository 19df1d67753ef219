"""Immutable plan values: :class:`PlanStep`, :class:`Plan`, their limits and JSON form.

A :class:`Plan` is a value graph: a plan id, a revision number and steps in declaration
order, each naming the ids it depends on.  Every plan is validated when it is constructed --
ids well formed and unique, every dependency known, no cycle, every bound held -- so an invalid
plan never exists, and a revision (:meth:`Plan.revise`) becomes a value only after it passed
the same checks.

Invariants: plans and steps are frozen; step inputs are deep-frozen JSON (read-only mappings
and tuples) and :meth:`PlanStep.input_copy` hands out fresh plain copies; validation reports
the first problem in declaration order; :attr:`Plan.order` is the deterministic execution
order (repeatedly the first step in declaration order whose dependencies come earlier).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from zigai import json as zjson
from zigai.json import defaults as json_defaults
from zigai.planning.errors import (
    DuplicateStepId,
    InvalidPlan,
    PlanCycle,
    PlanTooLarge,
    UnknownDependency,
)

__all__ = ["PlanLimits", "PlanStep", "Plan", "STEP_ID_PATTERN", "freeze_json", "thaw_json"]

STEP_ID_PATTERN = re.compile(r"[A-Za-z0-9_.:-]+")


@dataclass(frozen=True, slots=True)
class PlanLimits:
    """Bounds of one plan.  Exactly-at-limit is accepted; one more raises :class:`PlanTooLarge`."""

    max_steps: int = 256
    max_dependencies: int = 64
    max_id_chars: int = 64
    max_description_chars: int = 4096
    step_input: zjson.Limits = json_defaults.tool_payload

    def __post_init__(self) -> None:
        for name in ("max_steps", "max_dependencies", "max_id_chars", "max_description_chars"):
            value = getattr(self, name)
            if type(value) is not int or value <= 0:
                raise ValueError(f"PlanLimits.{name} must be an int > 0, got {value!r}")
        if not isinstance(self.step_input, zjson.Limits):
            raise ValueError("PlanLimits.step_input must be a zigai.json.Limits")


def freeze_json(value: Any, what: str) -> Any:
    """A deep read-only copy of a JSON value (mappings become read-only, lists tuples)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, Mapping):
        frozen = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidPlan(f"{what}: object keys must be strings, got {type(key).__name__}")
            frozen[key] = freeze_json(item, what)
        return MappingProxyType(frozen)
    if isinstance(value, (list, tuple)):
        return tuple(freeze_json(item, what) for item in value)
    raise InvalidPlan(f"{what}: {type(value).__name__} is not a JSON value")


def thaw_json(value: Any) -> Any:
    """A fresh plain (dict/list) copy of a frozen JSON value."""
    if isinstance(value, Mapping):
        return {key: thaw_json(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thaw_json(item) for item in value]
    return value


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One step: an id, what it does, the ids it waits for, whether it needs approval, its input."""

    id: str
    description: str = ""
    depends_on: tuple[str, ...] = ()
    requires_approval: bool = False
    input: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not STEP_ID_PATTERN.fullmatch(self.id):
            raise InvalidPlan(f"step id {self.id!r} must be a non-empty string of [A-Za-z0-9_.:-]")
        if not isinstance(self.description, str):
            raise InvalidPlan(f"step {self.id!r}: description must be a string")
        if isinstance(self.depends_on, str) or not isinstance(self.depends_on, Sequence):
            raise InvalidPlan(f"step {self.id!r}: depends_on must be a sequence of step ids")
        deps = tuple(self.depends_on)
        for dep in deps:
            if not isinstance(dep, str) or not STEP_ID_PATTERN.fullmatch(dep):
                raise InvalidPlan(f"step {self.id!r}: dependency {dep!r} is not a valid step id")
        if len(set(deps)) != len(deps):
            raise InvalidPlan(f"step {self.id!r}: depends_on lists a step twice")
        if not isinstance(self.requires_approval, bool):
            raise InvalidPlan(f"step {self.id!r}: requires_approval must be a bool")
        object.__setattr__(self, "depends_on", deps)
        object.__setattr__(self, "input", freeze_json(self.input, f"step {self.id!r} input"))
        try:
            zjson.dumps(self.input)
        except zjson.ValidationError as exc:
            raise InvalidPlan(f"step {self.id!r}: input is not a JSON value ({exc})") from None

    def input_copy(self) -> Any:
        """The step's input as a fresh plain JSON value."""
        return thaw_json(self.input)

    def to_json_value(self) -> dict[str, Any]:
        value: dict[str, Any] = {"id": self.id}
        if self.description:
            value["description"] = self.description
        if self.depends_on:
            value["depends_on"] = list(self.depends_on)
        if self.requires_approval:
            value["requires_approval"] = True
        if self.input is not None:
            value["input"] = thaw_json(self.input)
        return value

    @classmethod
    def from_json_value(cls, value: Any) -> PlanStep:
        if not isinstance(value, Mapping):
            raise InvalidPlan(f"a step must be a JSON object, got {zjson.type_name(value)}")
        unknown = sorted(set(value) - {"id", "description", "depends_on", "requires_approval", "input"})
        if unknown:
            raise InvalidPlan(f"step {value.get('id')!r}: unknown fields {unknown}")
        depends_on = value.get("depends_on", ())
        if not isinstance(depends_on, (list, tuple)):
            raise InvalidPlan(f"step {value.get('id')!r}: depends_on must be an array of step ids")
        return cls(id=value.get("id"), description=value.get("description", ""),  # type: ignore[arg-type]
                   depends_on=tuple(depends_on), requires_approval=value.get("requires_approval", False),
                   input=value.get("input"))


@dataclass(frozen=True, slots=True)
class Plan:
    """A validated, immutable plan revision.  Build with :meth:`create`, change with :meth:`revise`."""

    plan_id: str
    steps: tuple[PlanStep, ...]
    revision: int = 1
    limits: PlanLimits = field(default_factory=PlanLimits, compare=False)
    order: tuple[str, ...] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.limits, PlanLimits):
            raise InvalidPlan("limits must be a PlanLimits")
        if not isinstance(self.plan_id, str) or not STEP_ID_PATTERN.fullmatch(self.plan_id):
            raise InvalidPlan(f"plan id {self.plan_id!r} must be a non-empty string of [A-Za-z0-9_.:-]")
        if type(self.revision) is not int or self.revision < 1:
            raise InvalidPlan(f"plan revision must be an int >= 1, got {self.revision!r}")
        if isinstance(self.steps, (str, bytes)) or not isinstance(self.steps, Sequence):
            raise InvalidPlan("steps must be a sequence of PlanStep")
        steps = tuple(self.steps)
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "order", _validate(self.plan_id, steps, self.limits))

    @classmethod
    def create(cls, plan_id: str, steps: Sequence[PlanStep], *, limits: PlanLimits | None = None) -> Plan:
        """Revision 1 of a new plan."""
        return cls(plan_id, tuple(steps), 1, limits if limits is not None else PlanLimits())

    def revise(self, steps: Sequence[PlanStep]) -> Plan:
        """The next revision with ``steps``; validated before it exists, this plan is unchanged."""
        return Plan(self.plan_id, tuple(steps), self.revision + 1, self.limits)

    def step(self, step_id: str) -> PlanStep:
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)

    def to_json_value(self) -> dict[str, Any]:
        return {"plan_id": self.plan_id, "revision": self.revision,
                "steps": [step.to_json_value() for step in self.steps]}

    def to_json(self) -> str:
        return zjson.dumps(self.to_json_value())

    @classmethod
    def from_json_value(cls, value: Any, *, limits: PlanLimits | None = None) -> Plan:
        """A plan from its JSON object form (``plan_id``, optional ``revision``, ``steps``)."""
        if not isinstance(value, Mapping):
            raise InvalidPlan(f"a plan must be a JSON object, got {zjson.type_name(value)}")
        unknown = sorted(set(value) - {"plan_id", "revision", "steps"})
        if unknown:
            raise InvalidPlan(f"plan: unknown fields {unknown}")
        raw_steps = value.get("steps")
        if not isinstance(raw_steps, (list, tuple)):
            raise InvalidPlan("plan: steps must be an array")
        chosen = limits if limits is not None else PlanLimits()
        if len(raw_steps) > chosen.max_steps:
            raise PlanTooLarge(f"plan has {len(raw_steps)} steps; the limit is {chosen.max_steps}",
                               limit=chosen.max_steps)
        steps = tuple(PlanStep.from_json_value(item) for item in raw_steps)
        return cls(value.get("plan_id"), steps, value.get("revision", 1), chosen)  # type: ignore[arg-type]

    @classmethod
    def from_json(cls, data: str | bytes, *, limits: PlanLimits | None = None) -> Plan:
        """Parse bounded plan JSON (the tool-payload JSON limits) and validate it."""
        return cls.from_json_value(zjson.parse(data, json_defaults.tool_payload, InvalidPlan), limits=limits)


def _validate(plan_id: str, steps: tuple[PlanStep, ...], limits: PlanLimits) -> tuple[str, ...]:
    if not steps:
        raise InvalidPlan(f"plan {plan_id!r} has no steps")
    if len(steps) > limits.max_steps:
        raise PlanTooLarge(f"plan {plan_id!r} has {len(steps)} steps; the limit is {limits.max_steps}",
                           limit=limits.max_steps)
    if len(plan_id) > limits.max_id_chars:
        raise PlanTooLarge(f"plan id is {len(plan_id)} characters; the limit is {limits.max_id_chars}",
                           limit=limits.max_id_chars)
    seen: dict[str, PlanStep] = {}
    for step in steps:
        if not isinstance(step, PlanStep):
            raise InvalidPlan(f"plan {plan_id!r}: steps must be PlanStep values, got {type(step).__name__}")
        if step.id in seen:
            raise DuplicateStepId(f"plan {plan_id!r}: step id {step.id!r} is used twice", step_id=step.id)
        seen[step.id] = step
        _check_step_bounds(step, limits)
    for step in steps:
        for dep in step.depends_on:
            if dep not in seen:
                raise UnknownDependency(f"plan {plan_id!r}: step {step.id!r} depends on unknown step {dep!r}",
                                        step_id=step.id, dependency=dep)
    return _order(plan_id, steps)


def _check_step_bounds(step: PlanStep, limits: PlanLimits) -> None:
    if len(step.id) > limits.max_id_chars:
        raise PlanTooLarge(f"step id {step.id[:16]!r}... is {len(step.id)} characters; the limit is "
                           f"{limits.max_id_chars}", limit=limits.max_id_chars)
    if len(step.description) > limits.max_description_chars:
        raise PlanTooLarge(f"step {step.id!r}: description is {len(step.description)} characters; the "
                           f"limit is {limits.max_description_chars}", limit=limits.max_description_chars)
    if len(step.depends_on) > limits.max_dependencies:
        raise PlanTooLarge(f"step {step.id!r} has {len(step.depends_on)} dependencies; the limit is "
                           f"{limits.max_dependencies}", limit=limits.max_dependencies)
    if step.input is not None:
        try:
            zjson.validate(zjson.dumps(step.input), limits.step_input)
        except zjson.JsonLimitExceeded as exc:
            raise PlanTooLarge(f"step {step.id!r}: input exceeds the step-input limits ({exc})",
                               limit=exc.limit or 0) from None


def _order(plan_id: str, steps: tuple[PlanStep, ...]) -> tuple[str, ...]:
    """Repeatedly take the first step in declaration order whose dependencies are all placed."""
    placed: set[str] = set()
    order: list[str] = []
    remaining = list(steps)
    while remaining:
        for index, step in enumerate(remaining):
            if placed.issuperset(step.depends_on):
                placed.add(step.id)
                order.append(step.id)
                del remaining[index]
                break
        else:
            cycle = _find_cycle({s.id: s.depends_on for s in remaining})
            raise PlanCycle(f"plan {plan_id!r}: steps depend on each other in a cycle: "
                            f"{' -> '.join(cycle)}", cycle=cycle)
    return tuple(order)


def _find_cycle(blocked: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """One cycle among steps none of which could be placed (each waits on another of them)."""
    start = next(iter(blocked))
    path: list[str] = []
    position: dict[str, int] = {}
    current = start
    while current not in position:
        position[current] = len(path)
        path.append(current)
        current = next(dep for dep in blocked[current] if dep in blocked)
    return (*path[position[current]:], current)
