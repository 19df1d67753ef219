"""Provider-client replays over our own recordings, plus the shared corpus's when it is present.

A :class:`Replay` is one recorded conversation driven through a provider *client* (no agent):
the first request is built from the replay's messages, tools, output format and settings; while
the model calls a function tool, the replay answers with ``tool_result`` and asks again; a
replay with a ``follow_up`` then asks that buffered second turn with the answer in its history.
The transport is a strict :class:`~support.cassettes.ReplayTransport`, so every request the client
encodes must equal the recorded one, and every recorded response must be consumed.

The provider test modules parametrize their replay tests with :func:`local_cases` — our own
recordings from ``cassettes/local/``, always present, so a fresh clone runs these tests — plus
cases from the shared corpus (:func:`corpus_file`), which exist only when the corpus does
(``ZIGAI_CONFORMANCE_DIR``, default ``../shared/conformance``).  The corpus is thus an extra check
that widens the same tests, never a reason for them to skip.

This is test support: the ``zigai`` package never imports it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from support import local_model
from support.cassettes import ReplayTransport
from support.corpus import corpus_dir, corpus_file
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
from zigai.model import TEXT_OUTPUT, ModelRequest, OutputFormat, PartStartEvent, ToolDefinition
from zigai.output.prepare import prepare_output
from zigai.provider import ProviderBadRequest
from zigai.settings import ModelSettings

__all__ = [
    "Replay",
    "assert_refused",
    "assert_structured_answer",
    "assert_text_answer",
    "assert_thinking_answer",
    "assert_tool_loop",
    "corpus_dir",
    "corpus_file",
    "local_cases",
    "replay_params",
]


@dataclass(frozen=True)
class Replay:
    """One recorded conversation and how to drive a client through it."""

    id: str
    path: Path
    client: Callable[[Any], Any]  # transport -> provider client
    messages: tuple[Message, ...]
    instructions: tuple[str, ...] = ()
    tools: tuple[ToolDefinition, ...] = ()
    output_format: OutputFormat = TEXT_OUTPUT
    settings: ModelSettings = field(default_factory=ModelSettings)
    streamed: bool = False
    tool_result: Any = None  # what every function-tool call returns
    extra_check: Callable[[tuple[ResponseMessage, ...]], None] | None = None  # source-specific
    #: False for a synthetic recording whose responses state no finish (stop) reason.
    reports_finish: bool = True
    #: Offer the tools only until a tool return is in the history (for a server, like
    #: llm-katan, that calls a declared tool on every turn).
    tools_until_returned: bool = False
    #: A second user turn, asked buffered after the conversation with its answer in history.
    follow_up: str | None = None

    def run(self, transport: Any = None,
            events: list[Any] | None = None) -> tuple[ResponseMessage, ...]:
        """Every response of the conversation, in order; all recorded interactions consumed.

        With ``transport`` (a recording one) the conversation runs over it instead; with
        ``events`` every streamed event is appended to that list."""
        if transport is not None:
            return self._converse(transport, events)
        with ReplayTransport.load(self.path) as replay:
            responses = self._converse(replay, events)
            replay.assert_all_consumed()
        return responses

    def _converse(self, transport: Any, events: list[Any] | None) -> tuple[ResponseMessage, ...]:
        function_tools = {t.name for t in self.tools if t.kind == "function"}
        history = list(self.messages)
        responses: list[ResponseMessage] = []
        client = self.client(transport)
        while True:
            offered = () if self.tools_until_returned and responses else self.tools
            response = self._ask(client, tuple(history), offered, self.streamed, events)
            responses.append(response)
            calls = [p for p in response.parts
                     if isinstance(p, ToolCallPart) and p.tool_name in function_tools]
            if not calls:
                break
            history += [response, RequestMessage(parts=tuple(
                ToolReturnPart(c.tool_name, c.tool_call_id, self.tool_result) for c in calls))]
        if self.follow_up is not None:
            history += [responses[-1], RequestMessage.user(self.follow_up)]
            responses.append(self._ask(client, tuple(history), (), False, events))
        if self.extra_check is not None:
            self.extra_check(tuple(responses))
        return tuple(responses)

    def _ask(self, client: Any, messages: tuple[Message, ...], tools: tuple[ToolDefinition, ...],
             streamed: bool, events: list[Any] | None) -> ResponseMessage:
        request = ModelRequest(messages=messages, instructions=self.instructions, tools=tools,
                               output_format=self.output_format, settings=self.settings)
        if not streamed:
            response: ResponseMessage = client.request(request)
            return response
        with client.stream(request) as stream:
            for event in stream:
                if events is not None:
                    events.append(event)
        return stream.response()


def local_cases(protocol: str, names: Sequence[str]) -> list[Replay]:
    """Our own llama-server recordings of ``names`` for ``protocol``, as client-level replays.

    Each request is what the agent of ``support.local_model`` sends for the scenario (same
    few-shot history, tools, output contract and settings), built here without an agent, so
    the recordings check the adapter on its own."""
    cases = []
    for name in names:
        spec = local_model.scenario(name)
        path = local_model.cassette_path(protocol, name)

        def client(transport: Any, protocol: str = protocol,
                   spec: local_model.Scenario = spec) -> Any:
            return local_model.build_model(protocol, local_model.DEFAULT_URL, transport, spec)

        tools = (local_model.weather_tool([]).definition(),) if spec.tool else ()
        prepared = prepare_output(local_model.output_spec(protocol, spec), client(None).profile)
        cases.append(Replay(
            id=f"local-{protocol}-{name}", path=path, client=client,
            messages=(*local_model.history_for(protocol, spec), RequestMessage.user(spec.prompt)),
            instructions=(prepared.instruction,) if prepared.instruction else (),
            tools=tools + prepared.tool_definitions, output_format=prepared.output_format,
            settings=local_model.settings_for(protocol, spec), streamed=spec.streamed,
            tool_result=local_model.WEATHER_RESULT,
            extra_check=_city_weather if spec.structured else None,
            follow_up=spec.follow_up,
        ))
    return cases


def replay_params(cases: Sequence[Replay]) -> list[Any]:
    """``pytest.param`` per case, with the case id as the test id."""
    return [pytest.param(case, id=case.id) for case in cases]


# ------------------------------------------------------------------------------ structural checks


def _assert_usage(response: ResponseMessage) -> None:
    usage = response.usage
    assert usage.input_tokens > 0 and usage.output_tokens > 0, f"usage not reported: {usage}"


def assert_text_answer(responses: tuple[ResponseMessage, ...]) -> str:
    """One response, finished by ``stop``, with text and usage; returns the text."""
    assert len(responses) == 1, f"{len(responses)} responses, expected one answer"
    (response,) = responses
    _assert_usage(response)
    assert response.finish_reason is FinishReason.stop, f"finish reason {response.finish_reason}"
    assert response.text.strip(), f"no text in {response.parts}"
    return response.text


def assert_thinking_answer(responses: tuple[ResponseMessage, ...], events: list[Any]) -> None:
    """Every response (the answer, and a follow-up's) opens with reasoning (text, or an
    encrypted signature) and goes on to text, finished by ``stop`` with usage; the streamed
    events start the thinking part before the text part."""
    assert responses, "no responses"
    for response in responses:
        _assert_usage(response)
        assert response.finish_reason is FinishReason.stop, f"finish reason {response.finish_reason}"
        first = response.parts[0]
        # OpenAI keeps unsummarised reasoning encrypted: a signature then stands for the text.
        assert isinstance(first, ThinkingPart) and (first.content.strip() or first.signature), (
            f"first part {first!r}")
        assert response.text.strip(), f"no text after the thinking in {response.parts}"
    starts = [type(e.part) for e in events if isinstance(e, PartStartEvent)]
    assert ThinkingPart in starts and TextPart in starts, f"streamed part starts {starts}"
    assert starts.index(ThinkingPart) < starts.index(TextPart), f"streamed part starts {starts}"


def assert_tool_loop(responses: tuple[ResponseMessage, ...], tool: str,
                     reports_finish: bool = True) -> ToolCallPart:
    """A call of ``tool`` with JSON-object arguments, then a text answer, finished by
    ``tool_call`` and ``stop`` (unless the recording ``reports_finish`` not); returns the call."""
    assert len(responses) == 2, f"{len(responses)} responses, expected call then answer"
    first, final = responses
    for response in responses:
        _assert_usage(response)
    if reports_finish:
        assert first.finish_reason is FinishReason.tool_call, f"first finish {first.finish_reason}"
        assert final.finish_reason is FinishReason.stop, f"final finish {final.finish_reason}"
    calls = [p for p in first.parts if isinstance(p, ToolCallPart)]
    assert [c.tool_name for c in calls] == [tool], f"tool calls {calls}"
    assert isinstance(calls[0].args_as_dict(), dict) and calls[0].tool_call_id
    assert final.text.strip(), f"no final text in {final.parts}"
    return calls[0]


def assert_structured_answer(responses: tuple[ResponseMessage, ...]) -> Any:
    """One response carrying a JSON object — as text, or as the arguments of an output tool
    (then finished by ``tool_call``); returns the decoded value."""
    assert len(responses) == 1, f"{len(responses)} responses, expected one answer"
    (response,) = responses
    _assert_usage(response)
    calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
    if calls:
        assert response.finish_reason is FinishReason.tool_call, response.finish_reason
        assert len(calls) == 1, f"tool calls {calls}"
        value = calls[0].args_as_dict()
    else:
        assert response.finish_reason is FinishReason.stop, response.finish_reason
        value = json.loads(response.text)
    assert isinstance(value, dict), f"not a JSON object: {value!r}"
    return value


def _city_weather(responses: tuple[ResponseMessage, ...]) -> None:
    value = assert_structured_answer(responses)
    assert set(value) == {"city", "temperature_c"}, value
    assert isinstance(value["city"], str) and type(value["temperature_c"]) is int, value


def assert_refused(case: Replay) -> None:
    """The recorded request was refused: the client raises the bad request it maps to, with
    the server's status and error type (``support.local_model.check_rejection``)."""
    with pytest.raises(ProviderBadRequest) as refused:
        case.run()
    local_model.check_rejection(refused.value)
