"""The harness: a tightened copy of a borrowed Agent, run once, then artifact producers.

Order of the copy's instructions: the agent's own, then the preset's, then the custom ones
(each group in the order given).  Enabled capabilities follow the agent's own in the order
given; the combined composition is checked by a :class:`~zigai.capability.CapabilityRegistry`
when the harness is built, so a duplicate id, a missing dependency, a cycle or an eager
conflict is raised here (the capability package's named error), not at the first run.
:func:`tighten` keeps the smaller of two limits (``None`` means unlimited), so a harness can
only narrow what the agent allows.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from zigai._owner import Owner
from zigai._workers import WorkerPool
from zigai.agent import Agent, RunLimits
from zigai.capability import Capability, CapabilityRegistry
from zigai.control import CancellationToken, RunControl, RunTimedOut
from zigai.harness.artifacts import Artifact, ArtifactCollector, ArtifactLimits
from zigai.harness.errors import HarnessResultClosed, InvalidHarness

__all__ = ["Harness", "HarnessResult", "ProducerContext", "Producer", "tighten"]


def tighten(current: int | None, proposed: int | None) -> int | None:
    """The tighter of two limits (``None`` is unlimited)."""
    if proposed is None:
        return current
    if current is None:
        return proposed
    return min(current, proposed)


@dataclass(frozen=True, slots=True)
class ProducerContext:
    """What a producer sees: the completed result (borrowed; do not keep it), the collector
    it copies artifacts into, and the run's control (check it in long work)."""

    result: Any
    collector: ArtifactCollector
    control: RunControl


Producer = Callable[[ProducerContext], None]


class HarnessResult(Owner):
    """The owned outcome of :meth:`Harness.run`: the agent's result and the artifacts."""

    __slots__ = ("_result", "_artifacts")
    _closed_error = HarnessResultClosed

    def __init__(self, result: Any, artifacts: tuple[Artifact, ...]) -> None:
        super().__init__()
        self._result = result
        self._artifacts = artifacts

    @property
    def result(self) -> Any:
        self._check()
        return self._result

    @property
    def output(self) -> Any:
        self._check()
        return self._result.output

    @property
    def artifacts(self) -> tuple[Artifact, ...]:
        self._check()
        return self._artifacts

    def artifact(self, name: str) -> Artifact:
        self._check()
        for item in self._artifacts:
            if item.name == name:
                return item
        raise KeyError(name)

    def _release(self) -> None:
        self._result.close()
        self._result = None
        self._artifacts = ()


_LIMIT_FIELDS = ("max_requests", "max_tool_calls", "max_input_tokens", "max_output_tokens",
                 "max_total_tokens")


class Harness:
    """A tightened copy of ``agent`` plus the producers that run after each completed run."""

    def __init__(
        self,
        agent: Agent,
        *,
        preset_instructions: str | Sequence[str] = (),
        instructions: str | Sequence[str] = (),
        limits: RunLimits | None = None,
        run_timeout_ms: int | None = None,
        request_timeout_ms: int | None = None,
        producers: Sequence[Producer] = (),
        artifact_limits: ArtifactLimits | None = None,
        capabilities: Sequence[Capability] = (),
    ) -> None:
        if not isinstance(agent, Agent):
            raise InvalidHarness("Harness needs a zigai.agent.Agent (for a spec: Resolved.agent)")
        if limits is not None and not isinstance(limits, RunLimits):
            raise InvalidHarness("Harness limits must be a RunLimits")
        for producer in producers:
            if not callable(producer):
                raise InvalidHarness("every artifact producer must be callable")
        added = _strings(preset_instructions) + _strings(instructions)
        changes: dict[str, Any] = {"instructions": tuple(agent.instructions) + added}
        if isinstance(capabilities, Capability) or not isinstance(capabilities, Sequence) or not all(
                isinstance(cap, Capability) for cap in capabilities):
            raise InvalidHarness("Harness capabilities must be a sequence of zigai.capability.Capability")
        if capabilities:
            changes["capabilities"] = tuple(agent.capabilities) + tuple(capabilities)
            CapabilityRegistry(changes["capabilities"])
        if limits is not None:
            changes["limits"] = RunLimits(**{
                name: tighten(getattr(agent.limits, name), getattr(limits, name)) for name in _LIMIT_FIELDS
            })
        changes["run_timeout_ms"] = tighten(agent.run_timeout_ms, run_timeout_ms)
        changes["request_timeout_ms"] = tighten(agent.request_timeout_ms, request_timeout_ms)
        self.agent: Agent = dataclasses.replace(agent, **changes)
        self.producers: tuple[Producer, ...] = tuple(producers)
        self.artifact_limits = artifact_limits or ArtifactLimits()

    def run(self, prompt: Any = None, *, timeout_ms: int | None = None,
            cancellation: CancellationToken | None = None, **options: Any) -> HarnessResult:
        """Run the copy once, then every producer, all under one control (see the module)."""
        token = cancellation if cancellation is not None else CancellationToken()
        control = RunControl.start(self.agent.run_timeout_ms, timeout_ms, token=token)
        remaining = control.remaining()
        result = self.agent.run(
            prompt, cancellation=token,
            timeout_ms=None if remaining is None else max(1, int(remaining * 1000)), **options)
        collector = ArtifactCollector(self.artifact_limits)
        try:
            context = ProducerContext(result, collector, control)
            for producer in self.producers:
                _run_producer(producer, context, control)
            return HarnessResult(result, collector.seal())
        except BaseException:
            collector.seal()
            result.close()
            raise


def _strings(value: str | Sequence[str]) -> tuple[str, ...]:
    items = (value,) if isinstance(value, str) else tuple(value)
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise InvalidHarness("harness instructions must be non-empty strings")
    return items


_POLL_S = 0.02


def _run_producer(producer: Producer, context: ProducerContext, control: RunControl) -> None:
    control.check()
    pool = WorkerPool(1, "zigai-harness-producer")  # daemon: an abandoned producer never holds exit
    try:
        future = pool.submit(producer, context)
        while True:
            remaining = control.remaining()
            done, _ = concurrent.futures.wait(
                [future], timeout=_POLL_S if remaining is None else min(_POLL_S, remaining))
            if done:
                future.result()
                return
            if control.expired():
                control.token.cancel("run deadline exceeded")
                raise RunTimedOut("an artifact producer did not finish before the run deadline")
            control.check()  # Cancelled when the caller's token was set
    finally:
        pool.shutdown()
