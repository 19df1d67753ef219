"""A large tool result is measured against its limit, never copied to be measured (issue 31, #11)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Mapping
from typing import Any

from zigai.agent import Agent
from zigai.messages import (
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from zigai.reflect import tool
from zigai.testing import FunctionModel
from zigai.tool import Policy, ToolAnswer, ToolLimits, ToolPolicyContext

_PAYLOAD = "x" * (8 << 20)


def _agent(limits: ToolLimits, **extra: Any) -> Agent:
    def big() -> str:
        return _PAYLOAD

    def decide(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if sum(1 for m in messages if isinstance(m, RequestMessage)) == 1:
            return ResponseMessage((ToolCallPart("big", "{}", "c1"),))
        return ResponseMessage((TextPart("done"),))

    return Agent(FunctionModel(decide), tools=[tool("big", "Return a large text.", big, max_retries=2)],
                 tool_limits=limits, **extra)


def _peak_during(run: Callable[[], Any]) -> tuple[Any, int]:
    run().close()  # warm-up outside tracing: first-run imports, caches and the thread pool
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        value = run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return value, peak


def _tool_part(result: Any) -> Any:
    return result.messages[2].parts[0]


def test_an_accepted_large_result_adds_well_under_a_quarter_of_its_size() -> None:
    agent = _agent(ToolLimits(max_result_bytes=len(_PAYLOAD) + 2))  # exactly at the limit
    result, peak = _peak_during(lambda: agent.run("Fetch"))
    with result:
        part = _tool_part(result)
        assert isinstance(part, ToolReturnPart) and part.content is _PAYLOAD
    assert peak < len(_PAYLOAD) // 4, f"the run allocated {peak} bytes beside an {len(_PAYLOAD)}-byte result"


def test_an_oversized_result_is_refused_after_counting_one_byte_past_the_limit() -> None:
    agent = _agent(ToolLimits(max_result_bytes=len(_PAYLOAD) + 1))  # one byte short
    result, peak = _peak_during(lambda: agent.run("Fetch"))
    with result:
        part = _tool_part(result)
        assert isinstance(part, RetryPromptPart)
        assert f"encodes to more than {len(_PAYLOAD) + 1} bytes" in part.content
    assert peak < len(_PAYLOAD) // 4


def test_a_policy_supplied_result_is_measured_without_a_copy() -> None:
    class Answer(Policy):
        def call(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> ToolAnswer | None:
            return ToolAnswer(_PAYLOAD)

    agent = _agent(ToolLimits(max_result_bytes=1 << 20), tool_policies=[Answer()])
    result, peak = _peak_during(lambda: agent.run("Fetch"))
    with result:
        part = _tool_part(result)
        assert isinstance(part, RetryPromptPart) and "more than 1048576 bytes" in part.content
    assert peak < len(_PAYLOAD) // 4
