"""The project's own recordings: scenarios run against llama-server serving Gemma 3 270M.

``scripts/local_model.sh`` builds and starts the server; ``scripts/record_local.py`` runs every
scenario below against it through :class:`~support.cassettes.RecordingTransport` and writes
``cassettes/local/<protocol>/<scenario>.yaml``; ``tests/test_local_cassettes.py`` replays those
files strictly in the default (offline) suite; ``tests/live/`` runs the same scenarios against a
running server when ``ZIGAI_LIVE_LLAMA=1``.

The model is a small *base* model, so every check is about structure — which tool was called,
that its arguments are a JSON object of the declared shape, event order, finish reasons and
usage — never about wording.  Three things make it dependable: ``temperature=0``, a few-shot
history that shows the expected move, and stop sequences (``"\\n"`` ends a text answer,
``"</tool_call>"`` ends a tool call in the chat template of ``scripts/local_model_chat.jinja``);
without ``max_tokens`` and a stop the model writes until the length limit.

Reasoning: the model has none of its own.  When a request names a reasoning effort, the chat
template shows one ``<think>...</think>answer`` turn and opens ``<think>`` for the answer, and
llama-server (whose template analysis finds those markers) returns everything up to
``</think>`` as reasoning in each protocol's own shape.  The Chat and Responses requests name
the effort through their standard fields (``ModelSettings.thinking``); llama-server's Messages
route turns Anthropic's ``thinking`` into a token budget only and never tells the template, so
that request also carries llama.cpp's ``chat_template_kwargs`` extension.

This is test support: the ``zigai`` package never imports it.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zigai.agent import Agent, OutputChoice, OutputSpec, RunOptions
from zigai.errors import ProviderRequestError
from zigai.messages import (
    FinishReason,
    Message,
    RequestMessage,
    ResponseMessage,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)
from zigai.model import PartDeltaEvent, PartStartEvent
from zigai.provider import ProviderBadRequest
from zigai.providers.openai_compatible import ChatOptions
from zigai.retry import RetryPolicy
from zigai.security import UrlPolicy
from zigai.settings import ModelSettings, ProviderExtraBody
from zigai.tool import Tool

#: The context size ``scripts/local_model.sh`` serves with (``--ctx-size``).
CONTEXT_TOKENS = 4096
ROOT = Path(__file__).resolve().parent.parent.parent
CASSETTES = ROOT / "cassettes" / "local"
DEFAULT_URL = "http://127.0.0.1:8089"
PROTOCOLS = ("chat", "responses", "anthropic")
KEY = "sk-local-not-a-secret"
MODEL_ID = "gemma-3-270m"

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
CITY_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temperature_c": {"type": "integer"}},
    "required": ["city", "temperature_c"],
    "additionalProperties": False,
}


def build_model(protocol: str, base_url: str, transport: Any, spec: Scenario | None = None) -> Any:
    """The zigai client for one of llama-server's three wire protocols at ``base_url``, with
    the client options ``spec`` asks for (Responses reasoning replay)."""
    policy = UrlPolicy.local_development()
    api_root = base_url.rstrip("/") + "/v1"
    if protocol == "chat":
        from zigai.providers import openai_compatible

        provider = openai_compatible.Provider(
            KEY, transport=transport, base_url=api_root, name="llama_server", url_policy=policy
        )
        # llama-server reads an assistant turn's reasoning back from the field it writes it to.
        return openai_compatible.Client(
            MODEL_ID, provider, options=ChatOptions(replay_reasoning_field="reasoning_content"))
    if protocol == "responses":
        from zigai.providers import openai
        from zigai.providers.openai import profiles

        # An unknown model name resolves to the conservative profile (no sampling settings);
        # llama-server's Responses route accepts them, so say so explicitly.
        profile = dataclasses.replace(
            profiles.UNKNOWN_PROFILE, json_schema_output=True,
            settings=profiles.BASE_SETTINGS | profiles.SAMPLING_SETTINGS,
            supports_thinking=True, reasoning_efforts=frozenset({"low", "medium", "high"}),
        )
        return openai.Client(MODEL_ID, openai.Provider(
            KEY, transport=transport, base_url=api_root, url_policy=policy), profile=profile,
            replay_reasoning=spec is not None and spec.replay_reasoning)
    if protocol == "anthropic":
        from zigai.providers import anthropic

        return anthropic.Client(MODEL_ID, anthropic.Provider(
            KEY, transport=transport, base_url=api_root, url_policy=policy))
    raise ValueError(f"unknown protocol {protocol!r}; expected one of {PROTOCOLS}")


def _call(name: str, args: dict[str, Any], call_id: str) -> ResponseMessage:
    return ResponseMessage(parts=(ToolCallPart(name, json.dumps(args), call_id),),
                           finish_reason=FinishReason.tool_call)


def _returned(name: str, call_id: str, content: Any) -> RequestMessage:
    return RequestMessage(parts=(ToolReturnPart(name, call_id, content),))


def _said(content: str) -> ResponseMessage:
    return ResponseMessage(parts=(TextPart(content),), finish_reason=FinishReason.stop)


TEXT_HISTORY: tuple[Message, ...] = (
    RequestMessage.user("Reply with one word: ping"),
    _said("ping"),
)
TOOL_HISTORY: tuple[Message, ...] = (
    RequestMessage.user("What is the weather in Paris?"),
    _call("weather", {"city": "Paris"}, "call_paris"),
    _returned("weather", "call_paris", {"temperature_c": 18}),
    _said("It is 18 C in Paris."),
)
JSON_HISTORY: tuple[Message, ...] = (
    RequestMessage.user("Give the weather in Paris as JSON."),
    _said('{"city": "Paris", "temperature_c": 18}'),
)
#: llama-server's Messages route drops Anthropic's ``output_config``, so structured output
#: there is tool output (grammar-constrained like any tool call); the history shows one.
OUTPUT_TOOL_HISTORY: tuple[Message, ...] = (
    RequestMessage.user("Give the weather in Paris as JSON."),
    _call("city_weather", {"city": "Paris", "temperature_c": 18}, "call_paris_json"),
    _returned("city_weather", "call_paris_json", "Final result processed."),
    _said("Done."),
)


@dataclass(frozen=True)
class Scenario:
    name: str
    prompt: str
    history: tuple[Message, ...]
    streamed: bool = False
    tool: bool = False
    structured: bool = False
    rejected: bool = False  # the server must refuse the request (HTTP 400)
    thinking: bool = False  # reasoning requested: the answer must open with a thinking part
    follow_up: str | None = None  # a second, buffered turn asked after the first one
    replay_reasoning: bool = False  # Responses: the follow-up sends the reasoning item back
    protocols: tuple[str, ...] = PROTOCOLS  # the protocols this scenario is recorded for


SCENARIOS = (
    Scenario("buffered_text", "Reply with one word: pong", TEXT_HISTORY),
    Scenario("streamed_text", "Reply with one word: pong", TEXT_HISTORY, streamed=True),
    Scenario("tool_loop", "What is the weather in Madrid?", TOOL_HISTORY, tool=True),
    Scenario("stream_tool_loop", "What is the weather in Madrid?", TOOL_HISTORY, streamed=True, tool=True),
    Scenario("structured_output", "Give the weather in Madrid as JSON.", JSON_HISTORY, structured=True),
    # One digit is one Gemma token, so this prompt alone fills the server's whole context
    # (local_model.sh serves --ctx-size 4096): a real refusal to map, recorded in 4 KB.
    Scenario("context_overflow", "9" * CONTEXT_TOKENS, (), rejected=True),
    # Streamed reasoning, then a buffered follow-up whose history holds the thinking part, so
    # each protocol's replay rule for thinking is on the wire.
    Scenario("thinking_stream", "Reply with one word: pong", TEXT_HISTORY, streamed=True,
             thinking=True, follow_up="Reply with one word: ping"),
    # The same, with the follow-up replaying the reasoning item in the shape it came in
    # (llama-server sends ``reasoning_text`` content and no summary, and checks that shape).
    Scenario("thinking_replay", "Reply with one word: pong", TEXT_HISTORY, streamed=True,
             thinking=True, follow_up="Reply with one word: ping", replay_reasoning=True,
             protocols=("responses",)),
)
SCENARIO_NAMES = tuple(s.name for s in SCENARIOS)
CASES = tuple((p, s.name) for p in PROTOCOLS for s in SCENARIOS if p in s.protocols)


def scenario(name: str) -> Scenario:
    return next(s for s in SCENARIOS if s.name == name)


def cassette_path(protocol: str, name: str) -> Path:
    return CASSETTES / protocol / f"{name}.yaml"


def _tool_output(protocol: str, spec: Scenario) -> bool:
    return spec.structured and protocol == "anthropic"


def history_for(protocol: str, spec: Scenario) -> tuple[Message, ...]:
    return OUTPUT_TOOL_HISTORY if _tool_output(protocol, spec) else spec.history


def settings_for(protocol: str, spec: Scenario) -> ModelSettings:
    """Deterministic, bounded sampling; the Responses API has no ``stop`` field, but
    llama-server reads one, so it travels as an ``openai`` extra body there."""
    stops = ("\n", "</tool_call>") if spec.tool or _tool_output(protocol, spec) else ("\n",)
    # The thought is one line, so the "\n" stop ends the answer after it.
    thinking = THINKING_EFFORT if spec.thinking else None
    if protocol == "responses":
        extra: dict[str, Any] = {"stop": list(stops)}
        if spec.structured:
            # Its Responses route ignores ``text.format`` but reads the Chat field.
            extra["response_format"] = {"type": "json_schema",
                                        "json_schema": {"name": "city_weather", "schema": CITY_SCHEMA}}
        return ModelSettings(max_tokens=64, temperature=0.0, thinking=thinking,
                             extra_body=ProviderExtraBody("openai", extra))
    if protocol == "anthropic" and spec.thinking:
        # Anthropic takes a budget of at least 1024 tokens, below max_tokens.
        return ModelSettings(
            max_tokens=ANTHROPIC_THINKING_BUDGET + 64, temperature=0.0, stop_sequences=stops,
            thinking_budget_tokens=ANTHROPIC_THINKING_BUDGET,
            extra_body=ProviderExtraBody("anthropic", {
                "chat_template_kwargs": {"reasoning_effort": THINKING_EFFORT}}))
    seed = 7 if protocol == "chat" else None  # the Messages API has no seed
    return ModelSettings(max_tokens=64, temperature=0.0, seed=seed, stop_sequences=stops,
                         thinking=thinking)


THINKING_EFFORT = "high"
ANTHROPIC_THINKING_BUDGET = 1024


#: What the scenarios' weather tool returns, whatever the city.
WEATHER_RESULT = {"temperature_c": 31}


def weather_tool(calls: list[dict[str, Any]]) -> Tool:
    """The scenarios' weather tool; it appends each call's arguments to ``calls``."""

    def weather(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return WEATHER_RESULT

    return Tool.manual("weather", "Get the weather for a city.", WEATHER_SCHEMA, weather)


def output_spec(protocol: str, spec: Scenario) -> OutputSpec:
    """Text, native JSON-schema output, or (Anthropic structured) an output tool."""
    if _tool_output(protocol, spec):
        return OutputSpec.tool([OutputChoice("city_weather", CITY_SCHEMA)])
    if spec.structured:
        return OutputSpec.json_schema("city_weather", CITY_SCHEMA)
    return OutputSpec.text()


def build_agent(protocol: str, spec: Scenario, model: Any) -> tuple[Agent, list[dict[str, Any]]]:
    """The agent for ``spec`` and the list its weather tool appends each call's arguments to."""
    calls: list[dict[str, Any]] = []
    tools = [weather_tool(calls)] if spec.tool else []
    # llama-server may close a kept-alive connection right after a stream ends; the first
    # request reusing it then fails before any byte is sent back, which is safe to retry.
    retry = RetryPolicy(max_attempts=2, retry_on=frozenset({"connection"}), initial_delay_ms=0,
                        max_delay_ms=0, jitter=False)
    return Agent(model=model, tools=tools, output=output_spec(protocol, spec), retry_policy=retry,
                 model_settings=settings_for(protocol, spec)), calls


@dataclass
class Outcome:
    """What a scenario run produced, for :func:`check`."""

    output: Any
    messages: tuple[Message, ...]  # this run's new messages (the few-shot history left out)
    requests: int
    tool_args: list[dict[str, Any]]
    events: list[Any]
    error: ProviderRequestError | None = None  # what a rejected scenario raised
    follow_up: Outcome | None = None  # the scenario's second turn, when it has one


def run(protocol: str, spec: Scenario, model: Any) -> Outcome:
    agent, calls = build_agent(protocol, spec, model)
    history = history_for(protocol, spec)
    options = RunOptions(message_history=history)
    events: list[Any] = []
    if spec.rejected:
        try:
            agent.run(spec.prompt, options=options).close()
        except ProviderRequestError as error:
            return Outcome(None, (), 1, calls, events, error)
        raise AssertionError(f"the server accepted the {spec.name} request")
    if spec.streamed:
        with agent.run_stream(spec.prompt, options=options) as stream:
            for event in stream:
                events.append(event)
            result = stream.result()
    else:
        result = agent.run(spec.prompt, options=options)
    with result:
        conversation = tuple(result.messages)
        outcome = Outcome(result.output, conversation[len(history):], result.usage.requests,
                          calls, events)
    if spec.follow_up is not None:
        with agent.run(spec.follow_up, options=RunOptions(message_history=conversation)) as second:
            outcome.follow_up = Outcome(second.output, tuple(second.messages)[len(conversation):],
                                        second.usage.requests, calls, [])
    return outcome


def check(spec: Scenario, outcome: Outcome, protocol: str = "chat") -> None:
    """Structural expectations; raises AssertionError naming the first one that fails."""
    if spec.rejected or outcome.error is not None:
        assert spec.rejected, f"unexpected provider error {outcome.error!r}"
        check_rejection(outcome.error)
        return
    responses = [m for m in outcome.messages if isinstance(m, ResponseMessage)]
    for response in responses:
        usage = response.usage
        assert usage.input_tokens > 0 and usage.output_tokens > 0, f"usage not reported: {usage}"
    final = responses[-1]
    final_finish = FinishReason.tool_call if _tool_output(protocol, spec) else FinishReason.stop
    assert final.finish_reason is final_finish, f"final finish reason {final.finish_reason}"
    if spec.tool:
        assert outcome.requests == 2, f"{outcome.requests} requests, expected call then answer"
        first = responses[0]
        calls = [p for p in first.parts if isinstance(p, ToolCallPart)]
        assert [c.tool_name for c in calls] == ["weather"], f"tool calls {calls}"
        assert first.finish_reason is FinishReason.tool_call, f"first finish {first.finish_reason}"
        assert len(outcome.tool_args) == 1 and set(outcome.tool_args[0]) == {"city"}
        assert isinstance(outcome.tool_args[0]["city"], str)
    else:
        assert outcome.requests == 1, f"{outcome.requests} requests"
    if spec.structured:
        value = outcome.output
        assert isinstance(value, dict) and set(value) == {"city", "temperature_c"}, value
        assert isinstance(value["city"], str) and type(value["temperature_c"]) is int, value
    else:
        assert isinstance(outcome.output, str) and outcome.output.strip(), repr(outcome.output)
    if spec.streamed:
        _check_stream_order(outcome)
    if spec.thinking:
        _check_thinking(outcome)
    if spec.follow_up is not None:
        assert outcome.follow_up is not None, "the follow-up turn did not run"
        check(dataclasses.replace(spec, streamed=False, follow_up=None), outcome.follow_up, protocol)


def _check_thinking(outcome: Outcome) -> None:
    """The answer opens with non-empty reasoning, then text; streamed, the thinking part
    starts before the text part."""
    (response,) = [m for m in outcome.messages if isinstance(m, ResponseMessage)]
    first = response.parts[0]
    assert isinstance(first, ThinkingPart) and first.content.strip(), f"first part {first!r}"
    assert any(isinstance(p, TextPart) and p.content.strip() for p in response.parts[1:]), (
        f"no text after the thinking in {response.parts}")
    kinds = [type(e.part) for e in outcome.events if isinstance(e, PartStartEvent)]
    if kinds:
        assert ThinkingPart in kinds and TextPart in kinds, f"part starts {kinds}"
        assert kinds.index(ThinkingPart) < kinds.index(TextPart), f"part starts {kinds}"


def check_rejection(error: BaseException | None) -> None:
    """llama-server refuses an over-long prompt with HTTP 400 and a typed error body; every
    protocol maps that to a bad request carrying the server's error type as its code."""
    assert isinstance(error, ProviderBadRequest), f"expected ProviderBadRequest, got {error!r}"
    assert error.status == 400 and error.code == "exceed_context_size_error", (error.status, error.code)
    assert "context" in str(error), str(error)


def _check_stream_order(outcome: Outcome) -> None:
    """Every delta follows the start of its part, and the streamed text equals the output."""
    started: set[int] = set()
    text_by_part: dict[int, list[str]] = {}
    last_text_part: int | None = None
    for event in outcome.events:
        if isinstance(event, PartStartEvent):
            started.add(event.index)
            if isinstance(event.part, TextPart):
                text_by_part[event.index] = [event.part.content]
                last_text_part = event.index
        elif isinstance(event, PartDeltaEvent):
            assert event.index in started, f"delta for part {event.index} before its start"
            content = getattr(event.delta, "content_delta", None)
            if content is not None and event.index in text_by_part:
                text_by_part[event.index].append(content)
    assert started, "the stream produced no part events"
    assert last_text_part is not None, "no text part was streamed"
    # The last streamed text part is the final answer (parts restart per model response).
    assert "".join(text_by_part[last_text_part]) == outcome.output

