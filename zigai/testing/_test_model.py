"""TestModel: a deterministic model that calls every offered tool once, then answers.

Behaviour per request, decided only from the ``ModelRequest`` (so a run is reproducible):

1. **Retries.** If the last request message carries retry prompts for function tools,
   those tools are called again (arguments regenerated with ``seed + retries so far``).
2. **Tool calls.** Otherwise every selected function tool not yet called in the current
   turn (the messages since the latest user prompt that is not a tool's follow-up message)
   is called once, with arguments
   generated from its JSON schema by :func:`~zigai.testing.generate_from_schema` — all in
   one response, or one per response when parallel tool calls are off.  Selection:
   ``call_tools`` ("all" or names; names not offered in a request are skipped), narrowed by
   ``settings.allowed_tools``; ``settings.tool_choice == "none"`` selects nothing.
3. **Answer.** When nothing is left to call: an ``output`` tool is called if one is
   offered (``output_tools[seed % len]`` with ``custom_output_args`` or generated
   arguments); else JSON text for ``json_schema`` (generated or custom) and
   ``json_object`` (custom, or ``{}``) formats; else ``custom_output_text``, the JSON of
   ``custom_output_args``, or a summary of the turn's tool returns —
   ``{"tool_name": content, ...}`` as JSON — or ``"success (no tool calls)"``.

Every response has ``model_name``, ``provider_name``, ``finish_reason`` (``tool_call`` or
``stop``, raw reason the same string), no timestamp, and usage from
:func:`~zigai.testing.estimate_usage`.  ``stream()`` replays the same response as part
events (text in words, arguments in chunks), so it accumulates to an equal message.
Tool call ids are ``test-call-<n>`` with ``n`` counting the calls already in history.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from zigai.errors import JsonError
from zigai.json import bounded_copy, defaults
from zigai.messages import (
    Message,
    RequestMessage,
    ResponseMessage,
    ResponsePart,
    RetryPromptPart,
    SpeechPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from zigai.messages.json_value import thaw_json
from zigai.model import (
    ModelProfile,
    ModelRequest,
    ModelStreamEvent,
    StreamedResponse,
    ToolDefinition,
    check_request_supported,
)
from zigai.testing._common import (
    InvalidTestModelConfig,
    ScriptedModelBase,
    ScriptedStream,
    check_time,
    finish_reason_for,
    response_events,
)
from zigai.testing.schema_data import generate_from_schema

__all__ = ["TestModel", "NO_TOOL_CALLS_TEXT"]

NO_TOOL_CALLS_TEXT = "success (no tool calls)"
"""The default answer when the turn had no tool returns."""


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _current_turn(messages: Sequence[Message], output_names: frozenset[str]) -> Sequence[Message]:
    """The messages from the latest request that starts a turn onwards.

    A request holding a user prompt starts a turn unless it is a tool's follow-up: one that
    comes right after the tool results of a step (only requests in between) that did not end
    the run — no result of an output tool offered in this request.  Follow-ups (an MCP
    image, a ``ToolReturn``'s extra messages) belong to the turn that called the tool.
    """
    start = 0
    for index, message in enumerate(messages):
        if isinstance(message, RequestMessage) and any(
            isinstance(part, (UserPromptPart, SpeechPromptPart)) for part in message.parts
        ) and not _follows_tool_results(messages, index, output_names):
            start = index
    return messages[start:]


def _follows_tool_results(messages: Sequence[Message], index: int, output_names: frozenset[str]) -> bool:
    for earlier in reversed(messages[:index]):
        if not isinstance(earlier, RequestMessage):
            return False
        results = [p for p in earlier.parts if isinstance(p, (ToolReturnPart, RetryPromptPart))]
        if results:
            return not any(p.tool_name in output_names for p in results)
    return False


class TestModel(ScriptedModelBase):
    """A scripted, deterministic :class:`~zigai.model.Model` for application tests."""

    __test__ = False  # not a pytest test class despite its name

    def __init__(
        self,
        *,
        call_tools: Literal["all"] | Sequence[str] = "all",
        custom_output_text: str | None = None,
        custom_output_args: Any = None,
        seed: int = 0,
        profile: ModelProfile | None = None,
        model_name: str = "test",
        provider_name: str = "test",
    ) -> None:
        if call_tools != "all":
            if isinstance(call_tools, str) or not all(isinstance(n, str) for n in call_tools):
                raise InvalidTestModelConfig('call_tools must be "all" or a sequence of tool names')
            call_tools = tuple(call_tools)
        if custom_output_text is not None and custom_output_args is not None:
            raise InvalidTestModelConfig("give custom_output_text or custom_output_args, not both")
        if custom_output_text is not None and not isinstance(custom_output_text, str):
            raise InvalidTestModelConfig("custom_output_text must be a str")
        if custom_output_args is not None:
            try:
                custom_output_args = bounded_copy(custom_output_args, defaults.history)  # own copy
            except JsonError as exc:
                raise InvalidTestModelConfig(f"custom_output_args is not plain JSON within the history profile: {exc}") from None
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise InvalidTestModelConfig("seed must be an int")
        self._init_identity(profile, model_name, provider_name, InvalidTestModelConfig)
        self._call_tools: Literal["all"] | tuple[str, ...] = call_tools
        self._custom_text = custom_output_text
        self._custom_args = custom_output_args
        self._seed = seed

    @property
    def seed(self) -> int:
        return self._seed

    def __repr__(self) -> str:
        return f"TestModel(model_name={self._model_name!r}, seed={self._seed})"

    # -- the Model contract

    def request(self, request: ModelRequest) -> ResponseMessage:
        return self._respond(request)

    def stream(self, request: ModelRequest) -> StreamedResponse:
        response = self._respond(request)

        def source(stream: ScriptedStream) -> Iterator[ModelStreamEvent]:
            stream.usage = response.usage
            stream.finish_reason = response.finish_reason
            stream.raw_finish_reason = response.raw_finish_reason
            yield from response_events(response)

        return ScriptedStream(request, source, model_name=self._model_name,
                              provider_name=self._provider_name)

    # -- decisions

    def _respond(self, request: ModelRequest) -> ResponseMessage:
        check_time(request)
        check_request_supported(request, self._profile)
        self._observe(request)
        parts = self._plan(request)
        finish = finish_reason_for(parts)
        return ResponseMessage(
            parts=parts,
            usage=self._estimate_usage(request, parts),
            model_name=self._model_name,
            provider_name=self._provider_name,
            finish_reason=finish,
            raw_finish_reason=finish.value,
        )

    def _selected_tools(self, request: ModelRequest) -> list[ToolDefinition]:
        if request.settings.tool_choice == "none":
            return []
        allowed = request.settings.allowed_tools
        return [
            tool for tool in request.tools
            if tool.kind == "function"
            and (self._call_tools == "all" or tool.name in self._call_tools)
            and (allowed is None or tool.name in allowed)
        ]

    def _plan(self, request: ModelRequest) -> tuple[ResponsePart, ...]:
        messages = request.messages
        turn = _current_turn(messages, frozenset(t.name for t in request.tools if t.kind == "output"))
        last = messages[-1] if messages else None
        by_name = {tool.name: tool for tool in request.tools}
        retry_counts: dict[str | None, int] = {}
        for message in turn:
            if isinstance(message, RequestMessage):
                for part in message.parts:
                    if isinstance(part, RetryPromptPart):
                        retry_counts[part.tool_name] = retry_counts.get(part.tool_name, 0) + 1
        retried: list[ToolDefinition] = []
        if isinstance(last, RequestMessage):
            for part in last.parts:
                tool = by_name.get(part.tool_name or "") if isinstance(part, RetryPromptPart) \
                    else None
                if tool is not None and tool.kind == "function" and tool not in retried:
                    retried.append(tool)
        if retried:
            calls = retried
        else:
            called = {
                part.tool_name
                for message in turn if isinstance(message, ResponseMessage)
                for part in message.parts if isinstance(part, ToolCallPart)
            }
            calls = [tool for tool in self._selected_tools(request) if tool.name not in called]
        first_id = sum(
            1 for message in messages if isinstance(message, ResponseMessage)
            for part in message.parts if isinstance(part, ToolCallPart)
        )
        if calls:
            parallel = (request.settings.parallel_tool_calls is not False
                        and self._profile.supports_parallel_tool_calls)
            if not parallel:
                calls = calls[:1]
            return tuple(
                ToolCallPart(
                    tool.name,
                    _json_text(generate_from_schema(tool.parameters_json_schema,
                                                    self._seed + retry_counts.get(tool.name, 0))),
                    f"test-call-{first_id + offset}",
                )
                for offset, tool in enumerate(calls)
            )
        return (self._answer(request, turn, retry_counts, first_id),)

    def _answer(self, request: ModelRequest, turn: Sequence[Message],
                retry_counts: Mapping[str | None, int], call_id: int) -> ResponsePart:
        allowed = request.settings.allowed_tools
        output_tools = [tool for tool in request.tools if tool.kind == "output"
                        and (allowed is None or tool.name in allowed)]
        if output_tools:
            tool = output_tools[self._seed % len(output_tools)]
            args = self._custom_args
            if args is None:
                seed = self._seed + retry_counts.get(tool.name, 0)
                args = generate_from_schema(tool.parameters_json_schema, seed)
            if not isinstance(args, Mapping):
                raise InvalidTestModelConfig(
                    f"custom_output_args for output tool {tool.name!r} must be a JSON object"
                )
            return ToolCallPart(tool.name, _json_text(args), f"test-call-{call_id}")
        if self._custom_text is not None:
            return TextPart(self._custom_text)
        fmt = request.output_format
        if self._custom_args is not None:
            return TextPart(_json_text(self._custom_args))
        if fmt.kind == "json_schema":
            seed = self._seed + retry_counts.get(None, 0)
            return TextPart(_json_text(generate_from_schema(fmt.schema, seed)))
        if fmt.kind == "json_object":
            return TextPart("{}")
        returns = {
            part.tool_name: thaw_json(part.content)
            for message in turn if isinstance(message, RequestMessage)
            for part in message.parts if isinstance(part, ToolReturnPart)
        }
        return TextPart(_json_text(returns) if returns else NO_TOOL_CALLS_TEXT)
