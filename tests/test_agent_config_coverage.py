"""Agent and RunOptions refuse each malformed field with a message naming it; settings that
cannot be cached still merge."""

from __future__ import annotations

from typing import Any

import pytest

from zigai.agent import Agent, InvalidAgentConfiguration, RunOptions


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("model", object(), "Agent.model must implement zigai.model.Model"),
        ("instructions", 5, "Agent.instructions must be a string or a sequence of strings"),
        ("dynamic_instructions", ["not callable"], "Agent.dynamic_instructions must contain callables"),
        ("tools", ["not a tool"], "Agent.tools must contain Tool values or plain functions, got str"),
        ("toolsets", [object()], "Agent.toolsets must be Toolset values"),
        ("output", "text", "Agent.output must be an OutputSpec"),
        ("max_output_retries", -1, "Agent.max_output_retries must be an int >= 0"),
        ("max_tool_retries", True, "Agent.max_tool_retries must be an int >= 0"),
        ("end_strategy", "whenever", "unknown end strategy 'whenever'"),
        ("model_settings", {"temperature": 0}, "Agent.model_settings must be a ModelSettings"),
        ("run_timeout_ms", -5, "Agent.run_timeout_ms must be None or an int >= 0"),
        ("request_timeout_ms", 1.5, "Agent.request_timeout_ms must be None or an int >= 0"),
        ("limits", {"max_requests": 1}, "Agent.limits must be a RunLimits"),
        ("tool_limits", None, "Agent.tool_limits must be a ToolLimits"),
        ("retry_policy", "again", "Agent.retry_policy must be a RetryPolicy"),
        ("tool_approval", "yes", "Agent.tool_approval must be callable"),
        ("provider_error_policy", "strict", "Agent.provider_error_policy must be a ProviderErrorPolicy"),
        ("price_table", {"m": 1}, "Agent.price_table must be a zigai.pricing.PriceTable"),
        ("tool_policies", ["p"], "Agent.tool_policies must be zigai.tool.Policy values, got str"),
    ],
)
def test_an_agent_field_of_the_wrong_kind_is_refused_by_name(field: str, value: Any, message: str) -> None:
    options: dict[str, Any] = {"model": "test", field: value}
    with pytest.raises(InvalidAgentConfiguration, match=message.replace(".", r"\.")):
        Agent(**options)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("instructions", 3, "RunOptions.instructions must be a string or a sequence of strings"),
        ("timeout_ms", -1, "RunOptions.timeout_ms must be None or an int >= 0"),
        ("model_settings", {}, "RunOptions.model_settings must be a ModelSettings"),
        ("cancellation", True, "RunOptions.cancellation must be a CancellationToken"),
        ("limits", 3, "RunOptions.limits must be a RunLimits"),
        ("pending_messages", [], "RunOptions.pending_messages must be a PendingMessageQueue"),
    ],
)
def test_a_run_option_of_the_wrong_kind_is_refused_by_name(field: str, value: Any, message: str) -> None:
    with pytest.raises(InvalidAgentConfiguration, match=message.replace(".", r"\.")):
        RunOptions(**{field: value})


def test_instructions_accept_one_string_or_a_sequence() -> None:
    assert Agent("test", instructions="Be brief.").instructions == ("Be brief.",)
    assert Agent("test", instructions=["A.", "B."]).instructions == ("A.", "B.")
    assert RunOptions(instructions=None).instructions == ()


def test_settings_with_an_unhashable_extension_still_merge() -> None:
    from zigai.settings import ModelSettings, ProviderExtraBody

    class Model:
        profile = Agent("test").model.profile
        settings = ModelSettings(temperature=0.5, extra_body=ProviderExtraBody("openai", {"tags": ["a"]}))

        def request(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("not called")

    agent = Agent(Model(), model_settings=ModelSettings(max_tokens=7))  # type: ignore[arg-type]
    merged = agent.base_settings()
    assert merged.temperature == 0.5 and merged.max_tokens == 7
    assert merged.extra_body is not None and merged.extra_body.body == {"tags": ["a"]}
    assert agent.base_settings() == merged  # computed again (not cached), same answer
