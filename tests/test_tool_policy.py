"""zigai.tool.Policy: the five stages transform, retry and refuse; failure classification.

Every stage is driven through a real agent run (FunctionModel) so what is pinned is what the
model and the tool actually see: the offered definitions, the arguments the function gets,
the tool-return / retry-prompt parts in history and the retry budget of the tool.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from zigai.agent import Agent, InvalidAgentConfiguration, ResumeDecision
from zigai.control import Cancelled
from zigai.messages import (
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolOutcome,
    ToolReturnPart,
)
from zigai.testing import FunctionModel
from zigai.tool import (
    ModelRetry,
    Policy,
    Tool,
    ToolAnswer,
    ToolDefinitionError,
    ToolPolicyContext,
    ToolRefused,
    ToolRetriesExceeded,
)

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "units": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
RAN: list[dict[str, Any]] = []


@pytest.fixture(autouse=True)
def _reset() -> None:
    RAN.clear()


def _weather(args: dict[str, Any]) -> str:
    RAN.append(dict(args))
    return f"sunny in {args['city']}"


def weather_tool(**options: Any) -> Tool:
    return Tool.manual("weather", "Weather for a city.", SCHEMA, _weather, **options)


class ScriptedCalls:
    """A model that calls ``weather`` with each argument text in turn, then answers."""

    def __init__(self, *args: str) -> None:
        self.args = list(args)
        self.offered: list[list[tuple[str, str]]] = []

    def __call__(self, messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        self.offered.append([(t.name, t.description) for t in info.request.tools])
        step = sum(isinstance(m, ResponseMessage) for m in messages)
        if step < len(self.args):
            return ResponseMessage((ToolCallPart("weather", self.args[step], f"c{step}"),))
        return ResponseMessage((TextPart("done"),))


def _run(policies: list[Policy], *args: str, tool: Tool | None = None, **agent_options: Any) -> Any:
    model = ScriptedCalls(*args)
    agent = Agent(FunctionModel(model), tools=[tool or weather_tool()], tool_policies=policies,
                  **agent_options)
    with agent.run("go") as result:
        return model, _tool_parts(result.messages)


def _tool_parts(messages: Any) -> list[Any]:
    return [p for m in messages if isinstance(m, RequestMessage) for p in m.parts
            if isinstance(p, (ToolReturnPart, RetryPromptPart))]


# -- prepare ----------------------------------------------------------------------------------


class Describe(Policy):
    def __init__(self, suffix: str) -> None:
        self.suffix = suffix

    def prepare(self, ctx: ToolPolicyContext, tool: Tool) -> Tool:
        return tool.replace(description=tool.description + self.suffix)


class HideAfterFirstRequest(Policy):
    def prepare(self, ctx: ToolPolicyContext, tool: Tool) -> Tool | None:
        return tool if ctx.request_count == 0 else None


def test_prepare_transforms_what_the_provider_sees_in_registration_order() -> None:
    model, parts = _run([Describe(" [a]"), Describe(" [b]")], '{"city":"Oslo"}')
    assert model.offered[0] == [("weather", "Weather for a city. [a] [b]")]
    assert [p.content for p in parts] == ["sunny in Oslo"]


def test_prepare_can_hide_a_tool_from_the_request_and_from_execution() -> None:
    model, parts = _run([HideAfterFirstRequest()], '{"city":"Oslo"}', '{"city":"Rome"}')
    assert model.offered[0] == [("weather", "Weather for a city.")]
    assert model.offered[1] == []
    assert isinstance(parts[1], RetryPromptPart) and "Unknown tool name" in parts[1].content
    assert RAN == [{"city": "Oslo"}]


def test_prepare_must_return_a_tool_or_none() -> None:
    class Broken(Policy):
        def prepare(self, ctx: ToolPolicyContext, tool: Tool) -> Any:
            return "weather"

    with pytest.raises(InvalidAgentConfiguration, match="must return a Tool"):
        _run([Broken()], '{"city":"Oslo"}')


# -- arguments --------------------------------------------------------------------------------


class Arguments(Policy):
    def __init__(self, action: str) -> None:
        self.action = action
        self.seen: list[dict[str, Any]] = []

    def arguments(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        self.seen.append(dict(arguments))
        if self.action == "metric":
            return {**arguments, "units": "metric"}
        if self.action == "invalid":
            return {**arguments, "unknown": 1}
        if self.action == "retry":
            raise ModelRetry("say the city in English")
        if self.action == "refuse":
            raise ToolRefused("weather lookups are disabled")
        return arguments


def test_arguments_transform_reaches_the_tool() -> None:
    policy = Arguments("metric")
    _, parts = _run([policy], '{"city":"Oslo"}')
    assert policy.seen == [{"city": "Oslo"}]
    assert RAN == [{"city": "Oslo", "units": "metric"}]
    assert parts[0].content == "sunny in Oslo"


def test_transformed_arguments_are_checked_against_the_schema_again() -> None:
    _, parts = _run([Arguments("invalid")], '{"city":"Oslo"}', tool=weather_tool(max_retries=3))
    assert isinstance(parts[0], RetryPromptPart)
    assert "after the tool policies are invalid" in parts[0].content
    assert RAN == []


def test_a_policy_never_sees_arguments_that_failed_the_schema() -> None:
    policy = Arguments("keep")
    _, parts = _run([policy], '{"town":"Oslo"}', tool=weather_tool(max_retries=3))
    assert policy.seen == [] and isinstance(parts[0], RetryPromptPart)


def test_argument_retries_come_from_the_tools_own_budget() -> None:
    _, parts = _run([Arguments("retry")], '{"city":"a"}', tool=weather_tool(max_retries=1))
    assert isinstance(parts[0], RetryPromptPart) and parts[0].content == "say the city in English"
    with pytest.raises(ToolRetriesExceeded) as info:
        _run([Arguments("retry")], '{"city":"a"}', '{"city":"b"}', tool=weather_tool(max_retries=1))
    assert info.value.tool_name == "weather" and info.value.max_retries == 1
    assert RAN == []


def test_argument_refusal_is_a_denied_result_and_costs_no_retry() -> None:
    _, parts = _run([Arguments("refuse")], '{"city":"a"}', '{"city":"b"}', tool=weather_tool(max_retries=0))
    assert [(p.content, p.outcome) for p in parts] == [
        ("weather lookups are disabled", ToolOutcome.denied),
        ("weather lookups are disabled", ToolOutcome.denied),
    ]
    assert RAN == []


# -- call -------------------------------------------------------------------------------------


class Cache(Policy):
    def __init__(self) -> None:
        self.answers: dict[str, Any] = {"Oslo": "cached: cold"}

    def call(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> ToolAnswer | None:
        if arguments["city"] == "Nowhere":
            raise ModelRetry("no such city")
        if arguments["city"] == "Secret":
            raise ToolRefused("classified")
        if arguments["city"] in self.answers:
            return ToolAnswer(self.answers[arguments["city"]])
        return None


def test_the_call_stage_answers_retries_refuses_or_lets_the_tool_run() -> None:
    _, parts = _run([Cache()], '{"city":"Oslo"}', '{"city":"Rome"}', '{"city":"Nowhere"}',
                    '{"city":"Secret"}', tool=weather_tool(max_retries=2))
    assert [(type(p).__name__, p.content) for p in parts] == [
        ("ToolReturnPart", "cached: cold"),
        ("ToolReturnPart", "sunny in Rome"),
        ("RetryPromptPart", "no such city"),
        ("ToolReturnPart", "classified"),
    ]
    assert parts[3].outcome is ToolOutcome.denied
    assert RAN == [{"city": "Rome"}]


def test_a_call_stage_answer_is_bounded_by_the_tools_result_limit() -> None:
    from zigai.tool import ToolLimits

    policy = Cache()
    policy.answers["Oslo"] = "x" * 64
    limits = ToolLimits(max_result_bytes=66)  # the JSON string takes 66 bytes with its quotes
    _, parts = _run([policy], '{"city":"Oslo"}', tool=weather_tool(limits=limits))
    assert parts[0].content == "x" * 64
    policy.answers["Oslo"] = "x" * 65
    _, parts = _run([policy], '{"city":"Oslo"}', tool=weather_tool(limits=limits, max_retries=1))
    assert isinstance(parts[0], RetryPromptPart) and "ToolResultTooLarge" in parts[0].content


# -- returned ---------------------------------------------------------------------------------


class Returned(Policy):
    def __init__(self, action: str) -> None:
        self.action = action

    def returned(self, ctx: ToolPolicyContext, content: Any) -> Any:
        if self.action == "redact":
            return content.replace("sunny", "[weather]")
        if self.action == "retry":
            raise ModelRetry(f"retry {ctx.retry}")
        if self.action == "refuse":
            raise ToolRefused("result withheld")
        return content


def test_returned_transforms_the_result_the_model_sees() -> None:
    _, parts = _run([Returned("redact"), Returned("keep")], '{"city":"Oslo"}')
    assert parts[0].content == "[weather] in Oslo"


def test_returned_retries_count_on_the_tool_and_refusals_withhold_the_result() -> None:
    _, parts = _run([Returned("retry")], '{"city":"a"}', '{"city":"b"}', tool=weather_tool(max_retries=2))
    assert [p.content for p in parts] == ["retry 0", "retry 1"]
    with pytest.raises(ToolRetriesExceeded):
        _run([Returned("retry")], '{"city":"a"}', '{"city":"b"}', tool=weather_tool(max_retries=1))
    _, parts = _run([Returned("refuse")], '{"city":"a"}')
    assert (parts[0].content, parts[0].outcome) == ("result withheld", ToolOutcome.denied)
    assert RAN[0] == {"city": "a"}  # the tool ran; only its result was withheld


# -- approval ---------------------------------------------------------------------------------


class ApproveAbroad(Policy):
    def approval(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> bool:
        if arguments["city"] == "Nowhere":
            raise ModelRetry("no such city")
        if arguments["city"] == "Secret":
            raise ToolRefused("classified")
        return arguments["city"] != "Oslo"


def approval_agent() -> Agent:
    model = ScriptedCalls('{"city":"Rome"}')
    return Agent(FunctionModel(model), tools=[weather_tool()], tool_policies=[ApproveAbroad()])


def test_approval_stage_pauses_the_run_and_the_decision_survives_a_new_process(tmp_path: Path) -> None:
    with approval_agent().run_until_pause("go") as outcome:
        assert outcome.kind == "paused"
        calls = outcome.paused.calls
        state_json = outcome.paused.state_json
    assert [(c.tool_name, c.execution, c.approval.value) for c in calls] == [
        ("weather", "requires_approval", "dynamic"),
    ]
    assert RAN == []
    path = tmp_path / "state.json"
    path.write_text(state_json, encoding="utf-8")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from pathlib import Path
        from test_tool_policy import RAN, approval_agent
        from zigai.agent import ResumeDecision, stringify_resume_decisions
        decisions = stringify_resume_decisions([ResumeDecision.approve("c0")])
        with approval_agent().resume_run_json(Path({str(path)!r}).read_text(), decisions) as outcome:
            print(outcome.result.output, RAN)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          cwd=str(ROOT))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done [{'city': 'Rome'}]"


def test_approval_stage_retry_and_refusal_settle_the_call_without_pausing() -> None:
    _, parts = _run([ApproveAbroad()], '{"city":"Nowhere"}', '{"city":"Secret"}', '{"city":"Oslo"}',
                    tool=weather_tool(max_retries=1))
    assert [(type(p).__name__, p.content) for p in parts] == [
        ("RetryPromptPart", "no such city"),
        ("ToolReturnPart", "classified"),
        ("ToolReturnPart", "sunny in Oslo"),
    ]
    assert RAN == [{"city": "Oslo"}]


class CanonicalCity(Policy):
    """An arguments stage: capitalizes the city, sends back an empty one, refuses 'Forbidden'."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def arguments(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        self.log.append(f"arguments {arguments['city']}")
        if not arguments["city"]:
            raise ModelRetry("name a city")
        if arguments["city"] == "forbidden":
            raise ToolRefused("not that one")
        return {**arguments, "city": str(arguments["city"]).capitalize()}


class LoggedApproval(Policy):
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def approval(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> bool:
        self.log.append(f"approval {arguments['city']}")
        return arguments["city"] == "Oslo"


def test_approval_sees_the_arguments_after_the_arguments_stage_which_runs_once() -> None:
    log: list[str] = []
    _, parts = _run([CanonicalCity(log), LoggedApproval(log)], '{"city":"rome"}')
    assert log == ["arguments rome", "approval Rome"]  # transformed before approval; not re-run
    assert [p.content for p in parts] == ["sunny in Rome"] and RAN == [{"city": "Rome"}]
    seen: list[Any] = []
    agent = Agent(FunctionModel(ScriptedCalls('{"city":"oslo"}')), tools=[weather_tool()],
                  tool_policies=[CanonicalCity(log)],
                  tool_approval=lambda ctx, name, args: seen.append(dict(args)) or False)
    agent.run("go").close()
    assert seen == [{"city": "Oslo"}]  # Agent.tool_approval is an approval stage too


def test_an_arguments_stage_retry_or_refusal_never_reaches_approval_and_spends_the_budget() -> None:
    log: list[str] = []
    _, parts = _run([CanonicalCity(log), LoggedApproval(log)], '{"city":""}', '{"city":"forbidden"}',
                    '{"city":"rome"}', tool=weather_tool(max_retries=1))
    assert log == ["arguments ", "arguments forbidden", "arguments rome", "approval Rome"]
    assert [(type(p).__name__, p.content) for p in parts] == [
        ("RetryPromptPart", "name a city"), ("ToolReturnPart", "not that one"), ("ToolReturnPart", "sunny in Rome"),
    ]
    log.clear()
    with pytest.raises(ToolRetriesExceeded):
        _run([CanonicalCity(log), LoggedApproval(log)], '{"city":""}', '{"city":""}',
             tool=weather_tool(max_retries=1))
    assert log == ["arguments ", "arguments "]
    assert RAN == [{"city": "Rome"}]  # only the first run's call ever ran


def test_a_paused_call_approved_on_the_transformed_arguments_runs_with_them() -> None:
    log: list[str] = []
    agent = Agent(FunctionModel(ScriptedCalls('{"city":"oslo"}')), tools=[weather_tool()],
                  tool_policies=[CanonicalCity(log), LoggedApproval(log)])
    with agent.run_until_pause("go") as outcome:
        assert outcome.paused is not None
        state_json = outcome.paused.state_json
    assert log == ["arguments oslo", "approval Oslo"] and RAN == []
    with agent.resume_run(state_json, [ResumeDecision.approve("c0")]) as resumed:
        assert resumed.result is not None and resumed.result.output == "done"
    assert RAN == [{"city": "Oslo"}]


def test_the_call_stage_runs_after_a_resumed_approval() -> None:
    class Audit(ApproveAbroad):
        calls: list[str] = []

        def call(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> None:
            self.calls.append(str(arguments["city"]))

    model = ScriptedCalls('{"city":"Rome"}')
    agent = Agent(FunctionModel(model), tools=[weather_tool()], tool_policies=[Audit()])
    with agent.run_until_pause("go") as outcome:
        state_json = outcome.paused.state_json
    assert Audit.calls == []
    with agent.resume_run(state_json, [ResumeDecision.approve("c0")]) as resumed:
        assert resumed.result.output == "done"
    assert Audit.calls == ["Rome"] and RAN == [{"city": "Rome"}]


# -- composition and configuration -------------------------------------------------------------


def test_stages_compose_in_registration_order_across_a_parallel_step() -> None:
    trace: list[str] = []

    class Named(Policy):
        def __init__(self, name: str) -> None:
            self.name = name

        def arguments(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
            trace.append(f"{self.name}:args:{ctx.tool_call_id}")
            return arguments

        def returned(self, ctx: ToolPolicyContext, content: Any) -> Any:
            trace.append(f"{self.name}:returned:{ctx.tool_call_id}")
            return content

    def model(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if len(messages) > 1:
            return ResponseMessage((TextPart("done"),))
        return ResponseMessage((
            ToolCallPart("weather", '{"city":"a"}', "x"), ToolCallPart("weather", '{"city":"b"}', "y"),
        ))

    agent = Agent(FunctionModel(model), tools=[weather_tool()], tool_policies=[Named("1"), Named("2")])
    with agent.run("go") as result:
        assert [p.content for p in _tool_parts(result.messages)] == ["sunny in a", "sunny in b"]
    assert trace == [
        "1:args:x", "2:args:x", "1:args:y", "2:args:y",
        "1:returned:x", "2:returned:x", "1:returned:y", "2:returned:y",
    ]


def test_tool_policies_must_be_policies() -> None:
    with pytest.raises(InvalidAgentConfiguration, match="zigai.tool.Policy"):
        Agent(FunctionModel(ScriptedCalls()), tool_policies=[lambda tool: tool])


def test_a_policy_that_overrides_nothing_changes_nothing() -> None:
    _, parts = _run([Policy()], '{"city":"Oslo"}')
    assert parts[0].content == "sunny in Oslo"


# -- failure classification ---------------------------------------------------------------------


def _raising(error: BaseException) -> Any:
    def function(args: dict[str, Any]) -> str:
        raise error

    return function


def test_recoverable_errors_become_retry_prompts_and_others_stay_fatal() -> None:
    lookup = Tool.manual("weather", "W", SCHEMA, _raising(KeyError("city")), recoverable_errors=(KeyError,))
    _, parts = _run([], '{"city":"a"}', tool=lookup)
    assert isinstance(parts[0], RetryPromptPart) and parts[0].content == "KeyError: 'city'"
    fatal = Tool.manual("weather", "W", SCHEMA, _raising(ValueError("bad")), recoverable_errors=(KeyError,))
    with pytest.raises(ValueError, match="bad"):
        _run([], '{"city":"a"}', tool=fatal)
    with pytest.raises(ValueError, match="bad"):
        _run([], '{"city":"a"}', tool=Tool.manual("weather", "W", SCHEMA, _raising(ValueError("bad"))))


def test_a_classifier_predicate_decides_but_cancellation_stays_fatal() -> None:
    def anything(error: BaseException) -> bool:
        return True

    flaky = Tool.manual("weather", "W", SCHEMA, _raising(OSError("down")), recoverable_errors=anything)
    _, parts = _run([], '{"city":"a"}', tool=flaky.replace(max_retries=1))
    assert parts[0].content == "OSError: down"
    assert flaky.replace(name="other").is_recoverable(OSError()) is True
    cancelled = Tool.manual("weather", "W", SCHEMA, _raising(Cancelled("stop")), recoverable_errors=anything)
    with pytest.raises(Cancelled):
        _run([], '{"city":"a"}', tool=cancelled)
    assert not flaky.is_recoverable(KeyboardInterrupt())
    assert not flaky.is_recoverable(MemoryError())


def test_recoverable_errors_must_be_exception_types_or_a_predicate() -> None:
    with pytest.raises(ToolDefinitionError, match="recoverable_errors"):
        weather_tool(recoverable_errors=("KeyError",))
    assert weather_tool(recoverable_errors=KeyError).is_recoverable(KeyError())


def test_the_base_policy_stages_pass_everything_through() -> None:
    from zigai.control import RunControl
    from zigai.usage import RunUsage

    ctx = ToolPolicyContext(None, RunUsage(), 0, (), RunControl(), "weather", "c1")
    base, tool = Policy(), weather_tool()
    assert base.prepare(ctx, tool) is tool
    args = {"city": "Oslo"}
    assert base.arguments(ctx, args) is args
    assert base.approval(ctx, args) is False and base.call(ctx, args) is None
    assert base.returned(ctx, "x") == "x"
    assert not any(Policy.overrides(stage) for stage in ("prepare", "arguments", "approval", "call", "returned"))


@pytest.mark.parametrize("stage", ["arguments", "call"])
def test_stages_returning_the_wrong_type_are_configuration_errors(stage: str) -> None:
    class Wrong(Policy):
        def arguments(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> Any:
            return "not a mapping" if stage == "arguments" else arguments

        def call(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> Any:
            return "not an answer" if stage == "call" else None

    with pytest.raises(InvalidAgentConfiguration, match=stage):
        _run([Wrong()], '{"city":"Oslo"}')


def test_non_json_policy_values_are_configuration_errors() -> None:
    class BadArgs(Policy):
        def arguments(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
            return {"city": object()}

    class BadResult(Policy):
        def returned(self, ctx: ToolPolicyContext, content: Any) -> Any:
            return object()

    with pytest.raises(InvalidAgentConfiguration, match="not JSON"):
        _run([BadArgs()], '{"city":"Oslo"}')
    with pytest.raises(InvalidAgentConfiguration, match="not JSON"):
        _run([BadResult()], '{"city":"Oslo"}')
