"""Memory workloads: the extra memory one run needs to carry a large tool result.

``tool_result_16mib_peak_mib`` runs one agent whose only tool returns a 16 MiB
string to a ``FunctionModel`` (no I/O) and reports the run's peak traced memory
(``tracemalloc``) in MiB *minus the payload itself*: what the framework adds on
top of the result the tool already built.  The payload is built before tracing
starts and the tool returns that same object, so only the framework's copies
count.  zigai's tool limit is raised to 32 MiB so the result is accepted, as
PydanticAI (which has no result limit) accepts it.  The goal is at most a quarter
of the payload (4 MiB).

``WORKLOADS`` is picked up by ``scripts/bench.py``; each callable takes the
repetition count and returns the median over that many runs.
"""

from __future__ import annotations

import statistics
import tracemalloc
from collections.abc import Callable
from typing import Any

__all__ = ["WORKLOADS", "PAYLOAD_BYTES"]

PAYLOAD_BYTES = 16 << 20
_MIB = float(1 << 20)


def _payload() -> str:
    return "x" * PAYLOAD_BYTES


def _peak_over_payload_mib(run_once: Callable[[], Any], reps: int) -> float:
    samples = []
    for _ in range(max(1, reps)):
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            run_once()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        samples.append(peak / _MIB)
    return max(0.0, statistics.median(samples))


def zigai_tool_result_16mib_peak_mib(reps: int) -> float:
    from zigai.agent import Agent
    from zigai.messages import RequestMessage, ResponseMessage, TextPart, ToolCallPart
    from zigai.reflect import tool
    from zigai.testing import FunctionModel
    from zigai.tool import ToolLimits

    payload = _payload()

    def big() -> str:
        return payload

    def decide(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if sum(1 for m in messages if isinstance(m, RequestMessage)) == 1:
            return ResponseMessage((ToolCallPart("big", "{}", "c1"),))
        return ResponseMessage((TextPart("done"),))

    agent = Agent(FunctionModel(decide), tools=[tool("big", "Return a large text.", big)],
                  tool_limits=ToolLimits(max_result_bytes=2 * PAYLOAD_BYTES))
    agent.run("Warm up").close()
    return _peak_over_payload_mib(lambda: agent.run("Fetch").close(), reps)


def peer_tool_result_16mib_peak_mib(reps: int) -> float:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    payload = _payload()

    def decide(messages: list[Any], info: Any) -> Any:
        if sum(1 for m in messages if isinstance(m, ModelRequest)) == 1:
            return ModelResponse(parts=[ToolCallPart("big", {}, "c1")])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(decide))

    @agent.tool_plain
    def big() -> str:
        """Return a large text."""
        return payload

    agent.run_sync("Warm up")
    return _peak_over_payload_mib(lambda: agent.run_sync("Fetch"), reps)


WORKLOADS: list[dict[str, Any]] = [
    {"name": "tool_result_16mib_peak_mib", "unit": "MiB over payload", "lower_is_better": True,
     "run": zigai_tool_result_16mib_peak_mib, "peer": peer_tool_result_16mib_peak_mib},
]
