"""Context budgets: every boundary exact at its limit, one over fails with its named error."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from zigai.agent import Agent, InvalidAgentConfiguration, RunOptions
from zigai.context_budget import (
    ByteUsage,
    ContextBudget,
    ContextLimitExceeded,
    ContextMediaTooLarge,
    ContextOverflow,
    ContextPromptTooLarge,
    ContextSchemaTooLarge,
    ContextTokenLimitExceeded,
    ContextToolsTooLarge,
    measure_bytes,
)
from zigai.messages import (
    BytesSource,
    ImageContent,
    RequestMessage,
    ResponseMessage,
    TextContent,
    TextPart,
    UrlSource,
    UserPromptPart,
)
from zigai.settings import ModelSettings
from zigai.testing import FunctionModel
from zigai.tool import Tool

# instructions "abcd" (4) + prompt "hello" (5): 9 prompt bytes; tool "lookup" + "Look up."
# (6 + 8): 14 tool bytes; its schema {"type":"object"}: 17 schema bytes.  Default estimate:
# ceil((9 + 14 + 17) / 4) = 10, plus 4 for the one message and 8 for the one tool: 22 tokens.
PROMPT, TOOLS, SCHEMAS, TOKENS = 9, 14, 17, 22


def _agent(budget: ContextBudget | None = None, seen: list[Any] | None = None, **options: Any) -> Agent:
    def model(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if seen is not None:
            seen.append(info.request)
        return ResponseMessage((TextPart("ok"),))

    tool = Tool.manual("lookup", "Look up.", {"type": "object"}, lambda args: "x")
    return Agent(FunctionModel(model), instructions="abcd", tools=[tool], context_budget=budget, **options)


def _fits(budget: ContextBudget, prompt: Any = "hello", **options: Any) -> bool:
    try:
        with _agent(budget, **options).run(prompt):
            return True
    except ContextLimitExceeded:
        return False


def test_the_measured_bytes_of_a_request() -> None:
    seen: list[Any] = []
    with _agent(seen=seen).run("hello"):
        pass
    usage = measure_bytes(seen[0])
    assert usage == ByteUsage(prompt=PROMPT, tools=TOOLS, schemas=SCHEMAS, media=0, messages=1, tool_definitions=1)


@pytest.mark.parametrize(("field", "exact", "error"), [
    ("max_prompt_bytes", PROMPT, ContextPromptTooLarge),
    ("max_tool_bytes", TOOLS, ContextToolsTooLarge),
    ("max_schema_bytes", SCHEMAS, ContextSchemaTooLarge),
    ("max_input_tokens", TOKENS, ContextTokenLimitExceeded),
])
def test_each_boundary_accepts_its_exact_limit_and_refuses_one_more(
    field: str, exact: int, error: type[ContextLimitExceeded]
) -> None:
    assert _fits(ContextBudget(**{field: exact}))
    with pytest.raises(error) as info:
        with _agent(ContextBudget(**{field: exact - 1})).run("hello"):
            pass
    assert (info.value.limit, info.value.value) == (exact - 1, exact)


def test_media_sources_are_bounded_by_their_raw_bytes() -> None:
    image = ImageContent(BytesSource(b"x" * 100, "image/png"))
    url = ImageContent(UrlSource("https://example.com/a.png"))  # 25 bytes
    prompt = (TextContent("hello"), image, url)
    assert _fits(ContextBudget(max_media_bytes=125), prompt)
    with pytest.raises(ContextMediaTooLarge) as info:
        with _agent(ContextBudget(max_media_bytes=124)).run(prompt):
            pass
    assert info.value.value == 125


def test_total_tokens_reserve_the_output_from_the_budget_or_max_tokens() -> None:
    assert _fits(ContextBudget(max_total_tokens=TOKENS + 100, reserve_output_tokens=100))
    assert not _fits(ContextBudget(max_total_tokens=TOKENS + 99, reserve_output_tokens=100))
    settings = ModelSettings(max_tokens=50)
    assert _fits(ContextBudget(max_total_tokens=TOKENS + 50), model_settings=settings)
    with pytest.raises(ContextTokenLimitExceeded, match="total tokens"):
        with _agent(ContextBudget(max_total_tokens=TOKENS + 49), model_settings=settings).run("hello"):
            pass
    assert _fits(ContextBudget(max_total_tokens=TOKENS))  # no max_tokens: nothing reserved


def test_a_token_estimator_replaces_the_default_estimate() -> None:
    calls: list[ByteUsage] = []

    def estimator(request: Any, usage: ByteUsage) -> int:
        calls.append(usage)
        return 7

    assert _fits(ContextBudget(max_input_tokens=7, estimator=estimator))
    assert not _fits(ContextBudget(max_input_tokens=6, estimator=estimator))
    assert calls[0].prompt == PROMPT
    with pytest.raises(TypeError, match="estimator returned"):
        _fits(ContextBudget(max_input_tokens=6, estimator=lambda request, usage: -1))


def _long_history() -> list[Any]:
    history: list[Any] = []
    for i in range(3):
        history.append(RequestMessage((UserPromptPart(f"question {i} " + "x" * 100),)))
        history.append(ResponseMessage((TextPart(f"answer {i}"),)))
    return history


def test_the_overflow_hook_compacts_only_the_provider_view() -> None:
    overflows: list[ContextOverflow] = []

    def keep_last(overflow: ContextOverflow) -> Any:
        overflows.append(overflow)
        return overflow.request.messages[-1:]

    seen: list[Any] = []
    budget = ContextBudget(max_prompt_bytes=50, on_overflow=keep_last)
    with _agent(budget, seen=seen).run("hello", message_history=_long_history()) as result:
        assert len(result.messages) == 8  # canonical history: everything, plus this exchange
        assert result.new_messages()[0].parts[0].content == "hello"
    assert len(overflows) == 1 and overflows[0].boundary == "prompt"
    assert overflows[0].measurement.bytes.prompt > 50
    assert [len(r.messages) for r in seen] == [1]


def test_a_compaction_that_still_overflows_fails_after_one_remeasure() -> None:
    calls: list[int] = []

    def too_little(overflow: ContextOverflow) -> Any:
        calls.append(1)
        return overflow.request.messages[-3:]

    budget = ContextBudget(max_prompt_bytes=50, on_overflow=too_little)
    with pytest.raises(ContextPromptTooLarge):
        with _agent(budget).run("hello", message_history=_long_history()):
            pass
    assert calls == [1]
    with pytest.raises(ContextPromptTooLarge):
        with _agent(ContextBudget(max_prompt_bytes=50, on_overflow=lambda o: None)).run(
                "hello", message_history=_long_history()):
            pass
    with pytest.raises(InvalidAgentConfiguration, match="on_overflow must return"):
        with _agent(ContextBudget(max_prompt_bytes=50, on_overflow=lambda o: ["text"])).run(
                "hello", message_history=_long_history()):
            pass


def test_measurement_follows_history_processors_and_precedes_request_hooks() -> None:
    def keep_last(messages: tuple[Any, ...]) -> Any:
        return messages[-1:]

    with _agent(ContextBudget(max_prompt_bytes=PROMPT), history_processors=[keep_last]).run(
            "hello", message_history=_long_history()):
        pass
    events: list[str] = []
    agent = _agent(ContextBudget(max_prompt_bytes=PROMPT - 1), hooks=[lambda e: events.append(e.kind)])
    with pytest.raises(ContextPromptTooLarge):
        agent.run("hello")
    assert events == ["run_start", "run_error"]


def test_run_options_replace_the_agents_budget() -> None:
    agent = _agent(ContextBudget(max_prompt_bytes=1))
    with agent.run("hello", options=RunOptions(context_budget=ContextBudget(max_prompt_bytes=PROMPT))):
        pass
    with pytest.raises(InvalidAgentConfiguration, match="ContextBudget"):
        RunOptions(context_budget={"max_prompt_bytes": 1})  # type: ignore[arg-type]


def test_errors_pickle_with_their_boundary() -> None:
    with pytest.raises(ContextToolsTooLarge) as info:
        with _agent(ContextBudget(max_tool_bytes=TOOLS - 1)).run("hello"):
            pass
    copy = pickle.loads(pickle.dumps(info.value))
    assert (type(copy), copy.boundary, copy.limit, copy.value) == (ContextToolsTooLarge, "tools", TOOLS - 1, TOOLS)


@pytest.mark.parametrize("bad", [{"max_prompt_bytes": -1}, {"max_input_tokens": True},
                                 {"estimator": 3}, {"on_overflow": "x"}])
def test_bad_budgets_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ContextBudget(**bad)


def test_every_part_kind_is_counted_in_its_class() -> None:
    from zigai.messages import (
        AudioContent,
        BinaryContent,
        CompactionPart,
        FilePart,
        NativeToolCallPart,
        NativeToolReturnPart,
        ProviderFileSource,
        ProviderPart,
        RetryPromptPart,
        SpeechPart,
        SystemPromptPart,
        TaggedText,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
        ToolSearchReturnPart,
        UploadedFile,
        UploadedFileContent,
    )
    from zigai.model import ModelRequest, OutputFormat, ToolDefinition

    native = ProviderPart("openai")
    request = ModelRequest(
        messages=(
            RequestMessage((
                SystemPromptPart("sys"),                                   # prompt 3
                UserPromptPart((TaggedText("t", "tag"), BinaryContent(b"12345", "image/png"),
                                UploadedFileContent(UploadedFile("openai", "file-1")),
                                ImageContent(ProviderFileSource("fid")))),  # prompt 3, media 5+6+3
                RetryPromptPart("again"),                                  # prompt 5
            )),
            ResponseMessage((
                TextPart("hi"), ThinkingPart("hm"), CompactionPart("cc"),  # prompt 2+2+2
                ToolCallPart("f", '{"a":1}', "c1"),                        # tools 1+7
                NativeToolCallPart("web", "n1", native, "{}"),             # tools 3+2
                NativeToolReturnPart("web", "n1", native, {"k": 1}),       # tools 3+7
                ToolSearchReturnPart("s1", ("ab", "cd")),                  # tools 4
                FilePart(BytesSource(b"1234", "image/png")),               # media 4
                SpeechPart(AudioContent(BytesSource(b"12", "audio/wav")), "said"),  # media 2, prompt 4
            )),
            RequestMessage((
                ToolReturnPart("f", "c1", {"x": "y"}),                     # tools 1+9
                RetryPromptPart("fix", tool_name="f", tool_call_id="c1"),  # tools 3+1
            )),
        ),
        instructions=("ins",),                                             # prompt 3
        tools=(ToolDefinition("tool", "desc", {"type": "object"}),),      # tools 4+4, schema 17
        output_format=OutputFormat("json_schema", "out", {"type": "object"}),  # schema 17
    )
    usage = measure_bytes(request)
    assert usage == ByteUsage(
        prompt=3 + 3 + 5 + 2 + 2 + 2 + 4 + 3, tools=8 + 5 + 10 + 4 + 10 + 4 + 8,
        schemas=34, media=5 + 6 + 3 + 4 + 2, messages=3, tool_definitions=1,
    )


def test_json_sizes_follow_the_compact_encoding_and_odd_values_never_break_measuring() -> None:
    from zigai.context_budget import _json_bytes, _source, measure
    from zigai.messages import AudioContent, FrozenDict, SpeechPromptPart, ToolAvailabilityPart
    from zigai.model import ModelRequest

    assert _json_bytes("é") == 2                       # a string result is sent as its text
    assert _json_bytes(FrozenDict({"a": (1, 2)})) == len('{"a":[1,2]}')
    assert _json_bytes({"a": object()}) > 0            # unencodable: measured by its repr
    assert _source(object()) == 0
    request = ModelRequest(messages=(RequestMessage((
        ToolAvailabilityPart(added=("ab",), removed=("c",)),
        SpeechPromptPart(AudioContent(UrlSource("https://x.io/a.wav")), "hey"),
    )),))
    usage = measure_bytes(request)
    assert (usage.tools, usage.prompt, usage.media) == (3, 3, len("https://x.io/a.wav"))
    direct = measure(request, ContextBudget(estimator=lambda request, usage: 5))
    assert direct.input_tokens == 5 and direct.total_tokens == 5
