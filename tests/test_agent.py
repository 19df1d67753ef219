"""Agent.run end to end with scripted models: text runs, instructions, history, limits, errors."""

from __future__ import annotations

import pickle
import threading

import pytest
from support.agent_script import Script, call, reply

from zigai.agent import (
    Agent,
    AgentRun,
    ContentFiltered,
    EmptyModelResponse,
    IncompleteToolCall,
    InvalidAgentConfiguration,
    OutputRetriesExceeded,
    PauseRequired,
    RequestLimitExceeded,
    ResponseTruncated,
    ResultClosed,
    RunLimits,
    RunOptions,
    RunState,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)
from zigai.errors import AgentError
from zigai.messages import (
    FinishReason,
    ImageContent,
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    TextContent,
    TextPart,
    UrlSource,
    UserPromptPart,
)
from zigai.model import ModelProfile, UnsupportedModelFeature
from zigai.output import OutputChoice, OutputResult, OutputSpec
from zigai.reflect import tool
from zigai.settings import ModelSettings, UnsupportedModelSetting
from zigai.testing import FunctionModel, TestModel
from zigai.tool import ToolExecution
from zigai.usage import RequestUsage, RunUsage


def _echo(text: str) -> str:
    return text


def _recorder(ran: list[str]):  # type: ignore[no-untyped-def]
    def record(text: str) -> str:
        ran.append(text)
        return "ok"

    return record


def test_text_run_returns_the_text_usage_and_owned_history() -> None:
    script = Script([reply("hello there", usage=RequestUsage(input_tokens=7, output_tokens=2))])
    agent = Agent(script.model)
    with agent.run("hi") as result:
        assert result.output == "hello there"
        assert result.output_name is None
        assert result.finish_reason is FinishReason.stop
        assert result.usage == RunUsage(requests=1, input_tokens=7, output_tokens=2, attempts=1)
        assert len(result.messages) == 2
        first = result.messages[0]
        assert isinstance(first, RequestMessage)
        assert first.parts == (UserPromptPart("hi", timestamp=first.timestamp),)
        assert result.new_messages() == result.messages


def test_result_is_a_context_manager_and_refuses_use_after_close() -> None:
    script = Script([reply("x")])
    result = Agent(script.model).run("hi")
    result.close()
    result.deinit()  # closing twice is harmless
    for access in (lambda: result.output, lambda: result.messages, result.new_messages,
                   lambda: result.usage, lambda: result.finish_reason):
        with pytest.raises(ResultClosed):
            access()
    assert result.closed


def test_instructions_resolve_static_then_dynamic_then_run_specific_ignoring_empties() -> None:
    script = Script([reply("ok")])
    seen = []

    def dynamic(ctx):  # type: ignore[no-untyped-def]
        seen.append(ctx.deps)
        return "dynamic one"

    agent = Agent(
        script.model,
        instructions=("static one", "", "static two"),
        dynamic_instructions=(dynamic, lambda ctx: "", lambda ctx: None),
    )
    with agent.run("hi", instructions="run one", deps="D") as result:
        assert script.requests[0].instructions == ("static one", "static two", "dynamic one", "run one")
        assert result.messages[0].instructions == "static one\n\nstatic two\n\ndynamic one\n\nrun one"
    assert seen == ["D"]


def test_instructions_are_sent_on_every_request_but_recorded_once() -> None:
    echo = tool("echo", "Echo.", _echo)
    script = Script([reply(call("echo", {"text": "a"})), reply("done")])
    agent = Agent(script.model, instructions="be brief", tools=[echo])
    with agent.run("hi") as result:
        assert [r.instructions for r in script.requests] == [("be brief",), ("be brief",)]
        requests = [m for m in result.messages if isinstance(m, RequestMessage)]
        assert [r.instructions for r in requests] == ["be brief", None]


def test_message_history_in_and_new_messages_out() -> None:
    first = Script([reply("one")])
    agent = Agent(first.model)
    with agent.run("first") as r1:
        history = r1.messages
    second = Script([reply("two")])
    with Agent(second.model).run("second", message_history=history) as r2:
        assert r2.messages[:2] == history
        assert len(r2.new_messages()) == 2
        assert r2.new_messages()[0].parts == (UserPromptPart("second", timestamp=r2.new_messages()[0].timestamp),)
        assert second.requests[0].messages[:2] == history


def test_history_ending_in_a_request_may_run_without_a_prompt() -> None:
    script = Script([reply("answer")])
    history = (RequestMessage.user("question"),)
    with Agent(script.model).run(message_history=history) as result:
        assert result.output == "answer"
        assert result.new_messages() == result.messages[1:]


def test_a_run_without_prompt_or_pending_request_is_rejected() -> None:
    script = Script([])
    with pytest.raises(InvalidAgentConfiguration):
        Agent(script.model).run()
    assert script.requests == []


def test_request_limit_accepts_exactly_the_limit_and_fails_one_past_it() -> None:
    echo = tool("echo", "Echo.", _echo)

    def script(n_calls: int) -> Script:
        return Script([reply(call("echo", {"text": str(i)}, f"c{i}")) for i in range(n_calls)] + [reply("end")])

    ok = script(2)
    with Agent(ok.model, tools=[echo], limits=RunLimits(max_requests=3)).run("go") as result:
        assert result.usage.requests == 3
    over = script(3)
    with pytest.raises(RequestLimitExceeded) as info:
        Agent(over.model, tools=[echo], limits=RunLimits(max_requests=3)).run("go")
    assert info.value.limit == 3 and info.value.value == 4
    assert isinstance(info.value, UsageLimitExceeded)
    assert len(over.requests) == 3


def test_run_limits_override_per_run() -> None:
    script = Script([reply("x")])
    with pytest.raises(RequestLimitExceeded):
        Agent(script.model).run("hi", limits=RunLimits(max_requests=0))
    assert script.requests == []


def test_token_limits_are_checked_after_each_response() -> None:
    usage = RequestUsage(input_tokens=10, output_tokens=5)
    at_limit = Script([reply("x", usage=usage)])
    with Agent(at_limit.model, limits=RunLimits(max_total_tokens=15)).run("hi") as result:
        assert result.usage.total_tokens == 15
    over = Script([reply("x", usage=usage)])
    with pytest.raises(UsageLimitExceeded) as info:
        Agent(over.model, limits=RunLimits(max_total_tokens=14)).run("hi")
    assert (info.value.limit_name, info.value.limit, info.value.value) == ("max_total_tokens", 14, 15)
    for name in ("max_input_tokens", "max_output_tokens"):
        s = Script([reply("x", usage=usage)])
        with pytest.raises(UsageLimitExceeded):
            Agent(s.model, limits=RunLimits(**{name: 4})).run("hi")


def test_usage_aggregates_requests_tokens_and_tool_calls() -> None:
    echo = tool("echo", "Echo.", _echo)
    u = RequestUsage(input_tokens=3, output_tokens=1)
    script = Script([
        reply(call("echo", {"text": "a"}, "1"), call("echo", {"text": "b"}, "2"), usage=u),
        reply("done", usage=u),
    ])
    with Agent(script.model, tools=[echo]).run("go") as result:
        assert result.usage == RunUsage(requests=2, tool_calls=2, input_tokens=6, output_tokens=2, attempts=2)


@pytest.mark.parametrize(
    ("response", "error"),
    [
        (reply("partial", finish=FinishReason.length), ResponseTruncated),
        (reply("", finish=FinishReason.length), ResponseTruncated),
        (reply(call("x", '{"a": '), finish=FinishReason.length), IncompleteToolCall),
        (reply("blocked", finish=FinishReason.content_filter), ContentFiltered),
        (reply("", finish=FinishReason.content_filter), ContentFiltered),
        (reply(finish=FinishReason.stop), EmptyModelResponse),
        (reply("", finish=FinishReason.stop), EmptyModelResponse),
    ],
)
def test_finish_reasons_fail_with_distinct_errors_before_the_empty_check(
    response: ResponseMessage, error: type[Exception]
) -> None:
    script = Script([response])
    with pytest.raises(error) as info:
        Agent(script.model).run("hi")
    assert isinstance(info.value, UnexpectedModelBehavior)


def test_settings_merge_model_then_agent_then_run() -> None:
    script = Script([reply("x")])
    model = script.model

    class WithSettings:
        settings = ModelSettings(temperature=0.1, max_tokens=10, seed=1)
        model_name = "m"
        provider_name = "p"
        profile = model.profile

        def request(self, request):  # type: ignore[no-untyped-def]
            return model.request(request)

        def stream(self, request):  # type: ignore[no-untyped-def]
            raise NotImplementedError

    agent = Agent(WithSettings(), model_settings=ModelSettings(temperature=0.5, top_p=0.9))
    with agent.run("hi", model_settings=ModelSettings(top_p=0.2)):
        sent = script.requests[0].settings
    assert (sent.temperature, sent.max_tokens, sent.seed, sent.top_p) == (0.5, 10, 1, 0.2)


def test_unsupported_settings_fail_before_the_model_is_called() -> None:
    script = Script([reply("x")], profile=ModelProfile(settings=frozenset({"temperature"})))
    with pytest.raises(UnsupportedModelSetting):
        Agent(script.model).run("hi", model_settings=ModelSettings(top_p=0.3))
    assert script.requests == [] and script.model.request_count == 0


def test_unsupported_features_fail_before_the_model_is_called() -> None:
    calls = []
    model = FunctionModel(lambda m, i: calls.append(1) or reply("x"),
                          profile=ModelProfile(supports_tools=False))
    echo = tool("echo", "Echo.", _echo)
    with pytest.raises(UnsupportedModelFeature):
        Agent(model, tools=[echo]).run("hi")
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    bare = FunctionModel(lambda m, i: calls.append(1) or reply("x"),
                         profile=ModelProfile(supports_tools=False, json_object_output=False,
                                              json_schema_output=False))
    for spec in (OutputSpec.json_object(), OutputSpec.json_schema("out", schema),
                 OutputSpec.tool([OutputChoice("out", schema)])):
        with pytest.raises(UnsupportedModelFeature):
            Agent(bare, output=spec).run("hi")
    image = ImageContent(UrlSource("https://example.com/cat.png"))
    with pytest.raises(UnsupportedModelFeature):
        Agent(model).run([TextContent("look"), image])
    assert calls == [] and model.request_count == 0 and bare.request_count == 0


def test_history_processors_shape_the_provider_view_but_never_the_owned_history() -> None:
    script = Script([reply("one"), reply("two")])
    with Agent(script.model).run("first") as r1:
        history = r1.messages
    keep_last = lambda view: view[-1:]  # noqa: E731
    with Agent(script.model, history_processors=[keep_last]).run("second", message_history=history) as r2:
        assert script.requests[1].messages == (r2.messages[-2],)
        assert len(r2.messages) == 4


def test_requires_approval_tool_raises_pause_required_before_any_call_runs() -> None:
    ran = []
    publish = tool("publish", "Publish.", _recorder(ran),
                   execution=ToolExecution.requires_approval)
    other = tool("other", "Other.", _recorder(ran))
    script = Script([reply(call("other", {"text": "a"}, "1"), call("publish", {"text": "b"}, "2"))])
    with pytest.raises(PauseRequired) as info:
        Agent(script.model, tools=[publish, other]).run("go")
    assert ran == []
    assert info.value.tool_names == ("publish",) and info.value.tool_call_ids == ("2",)
    assert "run_until_pause" in str(info.value)


def test_step_drives_the_explicit_state_machine() -> None:
    echo = tool("echo", "Echo.", _echo)
    script = Script([reply(call("echo", {"text": "a"})), reply("done")])
    run = Agent(script.model, tools=[echo]).iter("go")
    states = [run.state]
    with run:
        while run.state is not RunState.done:
            states.append(run.step())
    assert states == [
        RunState.start, RunState.prepare_request, RunState.model_request, RunState.handle_response,
        RunState.execute_tools, RunState.prepare_request, RunState.model_request,
        RunState.handle_response, RunState.finalize, RunState.done,
    ]
    assert run.result is not None and run.result.output == "done"
    assert isinstance(run, AgentRun)


def test_text_output_validator_retry_then_accept() -> None:
    script = Script([reply("bad"), reply("good")])

    def validator(name, ctx, value):  # type: ignore[no-untyped-def]
        assert name == "text"
        return OutputResult.retry("say good") if value == "bad" else OutputResult.output(value.upper())

    with Agent(script.model, output_validators=[validator]).run("hi") as result:
        assert result.output == "GOOD"
        assert result.messages[2].parts == (RetryPromptPart("say good", timestamp=result.messages[2].timestamp),)


def test_output_retries_bounded_exactly() -> None:
    always_bad = lambda name, ctx, value: OutputResult.retry("no")  # noqa: E731
    ok = Script([reply("a"), reply("b"), reply("c")])
    ok_agent = Agent(ok.model, output_validators=[
        lambda n, c, v: OutputResult.retry("no") if v != "c" else OutputResult.output(v)],
        max_output_retries=2)
    with ok_agent.run("hi") as result:
        assert result.output == "c"
    over = Script([reply("a"), reply("b"), reply("c")])
    with pytest.raises(OutputRetriesExceeded) as info:
        Agent(over.model, output_validators=[always_bad], max_output_retries=2).run("hi")
    assert info.value.max_retries == 2 and info.value.last_error == "no"


def test_agent_is_immutable_and_shared_between_threads() -> None:
    model = FunctionModel(lambda messages, info: reply(messages[-1].parts[0].content[::-1]))
    agent = Agent(model)
    with pytest.raises(AttributeError):
        agent.max_tool_retries = 3  # type: ignore[misc]
    outputs: dict[int, str] = {}

    def work(i: int) -> None:
        with agent.run(f"p{i}") as result:
            outputs[i] = result.output

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outputs == {i: f"p{i}"[::-1] for i in range(16)}


def test_invalid_configuration_is_rejected() -> None:
    model = TestModel()
    for kwargs in ({"max_tool_retries": -1}, {"run_timeout_ms": -5}, {"tools": ["x"]},
                   {"end_strategy": "nope"}, {"output": "text"}):
        with pytest.raises(InvalidAgentConfiguration):
            Agent(model, **kwargs)
    with pytest.raises(InvalidAgentConfiguration):
        RunLimits(max_requests=-1)
    with pytest.raises(InvalidAgentConfiguration):
        RunOptions(timeout_ms=-1)


def test_agent_errors_pickle_with_attributes() -> None:
    error = RequestLimitExceeded("over", limit_name="max_requests", limit=3, value=4)
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.limit, copy.value) == ("over", 3, 4)
    pause = pickle.loads(pickle.dumps(PauseRequired("p", tool_names=("a",), tool_call_ids=("1",))))
    assert pause.tool_names == ("a",)
    assert isinstance(copy, AgentError)


def test_text_parts_are_concatenated_for_text_output() -> None:
    script = Script([ResponseMessage((TextPart("a"), TextPart("b")))])
    with Agent(script.model).run("hi") as result:
        assert result.output == "ab"


def test_system_prompts_open_a_fresh_conversation_only() -> None:
    seen: list[tuple] = []

    def answer(messages, info):  # type: ignore[no-untyped-def]
        seen.append(messages)
        return ResponseMessage(parts=(TextPart("ok"),))

    agent = Agent(FunctionModel(answer), system_prompt=("Be brief.", "", "Be kind."),
                  instructions="Use metric units.")
    with agent.run("hi") as first:
        opening = first.messages[0]
        assert [type(p).__name__ for p in opening.parts] == [
            "SystemPromptPart", "SystemPromptPart", "UserPromptPart"]
        assert [p.content for p in opening.parts[:2]] == ["Be brief.", "Be kind."]
        assert opening.instructions == "Use metric units."
        history = first.messages
    with agent.run("again", message_history=history) as second:
        added = second.new_messages()[0]
        assert [type(p).__name__ for p in added.parts] == ["UserPromptPart"]
        assert added.instructions == "Use metric units."


def test_system_prompt_must_be_text() -> None:
    with pytest.raises(InvalidAgentConfiguration):
        Agent(TestModel(), system_prompt=(1,))  # type: ignore[arg-type]


def test_deps_type_is_checked_before_the_model_is_called() -> None:
    calls: list[int] = []

    def answer(messages, info):  # type: ignore[no-untyped-def]
        calls.append(1)
        return ResponseMessage(parts=(TextPart("ok"),))

    agent = Agent(FunctionModel(answer), deps_type=dict)
    with agent.run("hi", deps={"user": 1}) as result:
        assert result.output == "ok"
    with pytest.raises(InvalidAgentConfiguration, match="dict"):
        agent.run("hi", deps=["not", "a", "dict"])
    assert calls == [1]


def _image_prompt(url: str) -> tuple:
    return (TextContent("describe"), ImageContent(UrlSource(url)))


@pytest.mark.parametrize(
    "url", ["http://example.com/a.png", "https://127.0.0.1/a.png", "https://localhost/a.png",
            "https://user:pw@example.com/a.png", "https://10.1.2.3/x.png"],
)
def test_media_urls_obey_the_agent_url_policy_before_any_request(url: str) -> None:
    from zigai.security import UrlPolicyViolation

    model = TestModel()
    with pytest.raises(UrlPolicyViolation):
        Agent(model).run(_image_prompt(url))
    assert model.request_count == 0


def test_public_https_media_and_an_explicit_local_policy_pass() -> None:
    from zigai.security import UrlPolicy

    with Agent(TestModel()).run(_image_prompt("https://example.com/a.png")) as result:
        assert result.output
    local = Agent(TestModel(), url_policy=UrlPolicy.local_development())
    with local.run(_image_prompt("http://127.0.0.1:8000/a.png")) as result:
        assert result.output


def test_uploaded_files_must_belong_to_the_models_provider() -> None:
    from zigai.agent import ForeignUploadedFile
    from zigai.messages import UploadedFile, UploadedFileContent

    model = TestModel()
    own = UploadedFileContent(UploadedFile("test", "file-1"))
    with Agent(model).run((TextContent("read"), own)) as result:
        assert result.output
    foreign = UploadedFileContent(UploadedFile("openai", "file-1"))
    before = model.request_count
    with pytest.raises(ForeignUploadedFile, match="openai"):
        Agent(model).run((TextContent("read"), foreign))
    assert model.request_count == before
