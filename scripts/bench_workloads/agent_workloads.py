"""Agent-loop workloads: text runs, tool loops, structured output and parallel tools.

Each workload builds its agent once and times complete ``run`` calls against a
``FunctionModel`` (no I/O), so the numbers measure the loop itself: message
construction, validation, settings, the tool step and output checks.  The peer
side does the same with PydanticAI's ``Agent.run_sync`` and its
``FunctionModel``; ``pydantic_ai`` is imported only inside the peer functions.

``WORKLOADS`` is picked up by ``scripts/bench.py``.  Every ``run``/``peer``
callable takes a repetition count and returns the median of that many timed
batches, except ``marginal_tool_step_us``: a difference of two run times, it alternates
the two runs and keeps each one's fastest batch (see ``_marginal_step_us``).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["WORKLOADS"]

_BATCH = 200
_STEPS = 10


@dataclass
class Point:
    x: int
    y: int


def _median(reps: int, once: Callable[[], float]) -> float:
    once()  # warm-up: caches, imports, thread pools
    return statistics.median(once() for _ in range(max(1, reps)))


def _per_second(run_once: Callable[[], Any], batch: int = _BATCH) -> Callable[[], float]:
    def timed() -> float:
        start = time.perf_counter()
        for _ in range(batch):
            run_once()
        return batch / (time.perf_counter() - start)

    return timed


def _seconds(run_once: Callable[[], Any], batch: int) -> Callable[[], float]:
    def timed() -> float:
        start = time.perf_counter()
        for _ in range(batch):
            run_once()
        return (time.perf_counter() - start) / batch

    return timed


# -- zigai -------------------------------------------------------------------------------------


def _zigai_text_agent() -> Any:
    from zigai.agent import Agent
    from zigai.messages import ResponseMessage, TextPart
    from zigai.testing import FunctionModel

    answer = ResponseMessage((TextPart("hello"),))
    return Agent(FunctionModel(lambda messages, info: answer), instructions="Be brief.")


def _zigai_tool_agent(steps: int) -> Any:
    from zigai.agent import Agent
    from zigai.messages import RequestMessage, ResponseMessage, TextPart, ToolCallPart
    from zigai.reflect import tool
    from zigai.testing import FunctionModel

    def add(a: int, b: int) -> int:
        return a + b

    def decide(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        done = sum(1 for m in messages if isinstance(m, RequestMessage)) - 1
        if done < steps:
            return ResponseMessage((ToolCallPart("add", '{"a":1,"b":2}', f"c{done}"),))
        return ResponseMessage((TextPart("3"),))

    return Agent(FunctionModel(decide), tools=[tool("add", "Add two numbers.", add)],
                 limits=_limits(steps))


def _limits(steps: int) -> Any:
    from zigai.agent import RunLimits

    return RunLimits(max_requests=steps + 2)


def zigai_text_run_per_s(reps: int) -> float:
    agent = _zigai_text_agent()
    return _median(reps, _per_second(lambda: agent.run("Hello").close()))


def zigai_tool_loop_per_s(reps: int) -> float:
    agent = _zigai_tool_agent(1)
    return _median(reps, _per_second(lambda: agent.run("Add").close()))


def _with_hooks(agent: Any, hooks: list[Any]) -> Any:
    from dataclasses import replace

    return replace(agent, hooks=hooks)


def zigai_tool_loop_noop_hook_per_s(reps: int) -> float:
    """``tool_loop_per_s`` with one lifecycle hook that does nothing (the hook-stream cost)."""
    agent = _with_hooks(_zigai_tool_agent(1), [lambda event: None])
    return _median(reps, _per_second(lambda: agent.run("Add").close()))


def zigai_tool_loop_diagnostics_off_per_s(reps: int) -> float:
    """``tool_loop_per_s`` with a ``Diagnostics`` hook at ``Level.off``."""
    from zigai.diagnostics import Diagnostics, Level

    agent = _with_hooks(_zigai_tool_agent(1), [Diagnostics(level=Level.off)])
    return _median(reps, _per_second(lambda: agent.run("Add").close()))


def _marginal_step_us(base: Callable[[], Any], many: Callable[[], Any], batch: int,
                      reps: int) -> float:
    """Microseconds one more tool step adds: (run with _STEPS steps - run with none) / _STEPS.

    The difference of two similar times amplifies noise, so the two batches alternate in
    every repetition (a load change hits both), there are at least five repetitions, and
    each side keeps its fastest batch (outside load only ever adds time).  Wall time, as
    in every other workload.
    """
    base(), many()  # warm-up: caches, imports, thread pools
    fastest_base = fastest_many = float("inf")
    for _ in range(max(5, reps)):
        fastest_base = min(fastest_base, _seconds(base, batch)())
        fastest_many = min(fastest_many, _seconds(many, batch)())
    return max(0.0, (fastest_many - fastest_base) / _STEPS * 1e6)


def zigai_marginal_tool_step_us(reps: int) -> float:
    base = _zigai_tool_agent(0)
    many = _zigai_tool_agent(_STEPS)
    return _marginal_step_us(lambda: base.run("Add").close(), lambda: many.run("Add").close(),
                             50, reps)


def zigai_parallel_8x100ms_s(reps: int) -> float:
    from zigai.agent import Agent
    from zigai.messages import RequestMessage, ResponseMessage, TextPart, ToolCallPart
    from zigai.reflect import tool
    from zigai.testing import FunctionModel

    def nap(n: int) -> int:
        time.sleep(0.1)
        return n

    def decide(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if sum(1 for m in messages if isinstance(m, RequestMessage)) == 1:
            return ResponseMessage(tuple(ToolCallPart("nap", f'{{"n":{i}}}', f"c{i}") for i in range(8)))
        return ResponseMessage((TextPart("done"),))

    agent = Agent(FunctionModel(decide), tools=[tool("nap", "Sleep 0.1 s.", nap)])
    return _median(reps, _seconds(lambda: agent.run("Nap").close(), 1))


def zigai_structured_output_per_s(reps: int) -> float:
    from zigai.agent import Agent
    from zigai.messages import ResponseMessage, ToolCallPart
    from zigai.testing import FunctionModel

    answer = ResponseMessage((ToolCallPart("Point", '{"x":1,"y":2}', "c1"),))
    agent = Agent(FunctionModel(lambda messages, info: answer))
    return _median(reps, _per_second(lambda: agent.run_typed(Point, "Point", mode="tool").close()))


_DELTAS = 1000
_DELTA_WORDS = tuple(f"w{i} " for i in range(_DELTAS))


def zigai_stream_1000_deltas_per_s(reps: int) -> float:
    """Text deltas delivered per second by a streamed run of 1000 FunctionModel deltas."""
    from zigai.agent import Agent
    from zigai.testing import FunctionModel

    def stream(messages: Any, info: Any) -> Any:
        return _DELTA_WORDS

    agent = Agent(FunctionModel(stream_function=stream), instructions="Be brief.")

    def once() -> None:
        with agent.run_stream("Stream") as events:
            count = sum(1 for e in events if e.event_kind in ("part_start", "part_delta"))
            events.result().close()
        assert count == _DELTAS

    return _median(reps, _per_second(once, 5)) * _DELTAS


_LONG_DELTAS = 64_000
_LONG_DELTA_TEXT = tuple(f"{i % 10_000:>7} " for i in range(_LONG_DELTAS))  # 8 chars each


def zigai_agent_stream_64k_deltas_per_s(reps: int) -> float:
    """Deltas per second of one streamed agent run of 64,000 deltas (512 KB of text).

    Every delta produces a raw part event and a text-so-far ``partial_output`` event; if the
    per-delta work grew with the text (a copy of the text so far per delta) this run would
    copy ~16 GB, so its rate against ``stream_1000_deltas_per_s`` shows the curve.
    """
    from zigai.agent import Agent
    from zigai.testing import FunctionModel

    def stream(messages: Any, info: Any) -> Any:
        return _LONG_DELTA_TEXT

    agent = Agent(FunctionModel(stream_function=stream))

    def once() -> None:
        with agent.run_stream("Stream") as events:
            count = sum(1 for e in events if e.event_kind == "partial_output")
            with events.result() as result:
                assert len(result.output) == 8 * _LONG_DELTAS
        assert count == _LONG_DELTAS

    return _median(max(1, reps), _per_second(once, 1)) * _LONG_DELTAS


# -- PydanticAI peer ---------------------------------------------------------------------------


def _peer_text_agent() -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    return Agent(FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("hello")])),
                 instructions="Be brief.")


def _peer_tool_agent(steps: int) -> Any:
    from pydantic_ai import Agent, UsageLimits
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    def decide(messages: list[Any], info: Any) -> Any:
        done = sum(1 for m in messages if isinstance(m, ModelRequest)) - 1
        if done < steps:
            return ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2}, f"c{done}")])
        return ModelResponse(parts=[TextPart("3")])

    agent = Agent(FunctionModel(decide))

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    limits = UsageLimits(request_limit=steps + 2)
    return lambda: agent.run_sync("Add", usage_limits=limits)


def peer_text_run_per_s(reps: int) -> float:
    agent = _peer_text_agent()
    return _median(reps, _per_second(lambda: agent.run_sync("Hello"), 50))


def peer_tool_loop_per_s(reps: int) -> float:
    run = _peer_tool_agent(1)
    return _median(reps, _per_second(run, 50))


def peer_marginal_tool_step_us(reps: int) -> float:
    """The same measurement (``_marginal_step_us``) for PydanticAI, in batches of 10 runs."""
    return _marginal_step_us(_peer_tool_agent(0), _peer_tool_agent(_STEPS), 10, reps)


def peer_parallel_8x100ms_s(reps: int) -> float:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    def decide(messages: list[Any], info: Any) -> Any:
        if sum(1 for m in messages if isinstance(m, ModelRequest)) == 1:
            return ModelResponse(parts=[ToolCallPart("nap", {"n": i}, f"c{i}") for i in range(8)])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(decide))

    @agent.tool_plain
    def nap(n: int) -> int:
        """Sleep 0.1 s."""
        time.sleep(0.1)
        return n

    return _median(reps, _seconds(lambda: agent.run_sync("Nap"), 1))


def peer_structured_output_per_s(reps: int) -> float:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    def decide(messages: list[Any], info: Any) -> Any:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"x": 1, "y": 2}, "c1")])

    agent = Agent(FunctionModel(decide), output_type=Point)
    return _median(reps, _per_second(lambda: agent.run_sync("Point"), 50))


def peer_stream_1000_deltas_per_s(reps: int) -> float:
    """PydanticAI 2.31: ``run_stream_sync`` + ``stream_text(delta=True, debounce_by=None)``."""
    from pydantic_ai import Agent
    from pydantic_ai.models.function import FunctionModel

    async def stream(messages: list[Any], info: Any) -> Any:
        for word in _DELTA_WORDS:
            yield word

    agent = Agent(FunctionModel(stream_function=stream), instructions="Be brief.")

    def once() -> None:
        with agent.run_stream_sync("Stream") as result:
            count = sum(1 for _ in result.stream_text(delta=True, debounce_by=None))
        assert count == _DELTAS

    return _median(reps, _per_second(once, 2)) * _DELTAS


WORKLOADS: list[dict[str, Any]] = [
    {"name": "text_run_per_s", "unit": "runs/s", "lower_is_better": False,
     "run": zigai_text_run_per_s, "peer": peer_text_run_per_s},
    {"name": "tool_loop_per_s", "unit": "runs/s", "lower_is_better": False,
     "run": zigai_tool_loop_per_s, "peer": peer_tool_loop_per_s},
    {"name": "tool_loop_noop_hook_per_s", "unit": "runs/s", "lower_is_better": False,
     "run": zigai_tool_loop_noop_hook_per_s},
    {"name": "tool_loop_diagnostics_off_per_s", "unit": "runs/s", "lower_is_better": False,
     "run": zigai_tool_loop_diagnostics_off_per_s},
    {"name": "marginal_tool_step_us", "unit": "us", "lower_is_better": True,
     "run": zigai_marginal_tool_step_us, "peer": peer_marginal_tool_step_us},
    {"name": "parallel_8x100ms_s", "unit": "s", "lower_is_better": True,
     "run": zigai_parallel_8x100ms_s, "peer": peer_parallel_8x100ms_s},
    {"name": "structured_output_per_s", "unit": "runs/s", "lower_is_better": False,
     "run": zigai_structured_output_per_s, "peer": peer_structured_output_per_s},
    {"name": "stream_1000_deltas_per_s", "unit": "deltas/s", "lower_is_better": False,
     "run": zigai_stream_1000_deltas_per_s, "peer": peer_stream_1000_deltas_per_s},
    {"name": "agent_stream_64k_deltas_per_s", "unit": "deltas/s", "lower_is_better": False,
     "run": zigai_agent_stream_64k_deltas_per_s},
]
