"""``zigai conformance run``: zigai itself driven through a conformance server over real HTTP.

Job
    For every recording with a scenario, build the run the scenario describes (prompt, parts,
    instructions, tools with their exact results, output mode and schema, settings, history,
    streaming, file operations), send it through zigai's own :class:`~zigai.transport.HttpTransport`
    to the scenario's prefix on a :class:`~zigai.conformance.server.ConformanceServer`, then
    check zigai's result against the scenario's expectations *and* the server's verdict.

From a recording it takes only the route facts (:mod:`zigai.conformance.routes`).  The adapter
keeps the recorded API root; :class:`RebasedTransport` moves each request's origin onto the
scenario prefix (the same origin swap a port makes through its base URL), so absolute URLs in
recorded responses (upload sessions, file URIs) keep working.

Prints ``PASS path``, ``FAIL path: reason`` or ``SKIP path: reason`` per recording (its path
relative to its root) and ends with
``N passed, M failed, K skipped``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import traceback
from collections.abc import Iterable
from typing import Any, TextIO
from urllib.parse import urlsplit

from zigai.conformance.catalog import Entry
from zigai.conformance.routes import (
    Skip,
    build_file_provider,
    build_model,
    detect_route,
)
from zigai.conformance.scenarios import STREAMED_FAMILIES, Scenario
from zigai.conformance.server import ConformanceServer

__all__ = ["RebasedTransport", "RemoteServer", "check_result", "run_entries", "run_entry"]


class RebasedTransport:
    """A Transport that sends every request to ``origin`` (keeping its path and query)."""

    def __init__(self, inner: Any, origin: str) -> None:
        self.inner = inner
        self.origin = origin
        self.limits = inner.limits

    def _moved(self, request: Any) -> Any:
        parts = urlsplit(request.url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        return dataclasses.replace(request, url=self.origin + target)

    def send(self, request: Any) -> Any:
        return self.inner.send(self._moved(request))

    def stream_lines(self, request: Any) -> Any:
        return self.inner.stream_lines(self._moved(request))


def _check_file(descriptor: Any, expect: dict[str, Any], provider_name: str) -> None:
    if descriptor.provider_name != provider_name:
        raise AssertionError(f"descriptor owner {descriptor.provider_name!r} != {provider_name!r}")
    for key, want in (expect.get("file") or {}).items():
        got = getattr(descriptor, key)
        if got != want:
            raise AssertionError(f"file {key} {got!r} != expected {want!r}")


def run_file_operations(provider: Any, scenario: Scenario) -> None:
    """Upload the scenario's file, then inspect / download / delete it through its handle."""
    from zigai.provider import ProviderFileInput

    spec = scenario.file or {}
    content = spec["content"].encode("utf-8")
    upload = ProviderFileInput(spec["filename"], content, spec["media_type"], spec.get("purpose"))
    with provider.upload_file(upload) as uploaded:
        _check_file(uploaded.value, scenario.expect, provider.name)
        handle = uploaded.uploaded_file()
    for operation in scenario.operations[1:]:
        if operation == "inspect":
            with provider.inspect_file(handle) as inspected:
                if inspected.value.file_id != handle.file_id:
                    raise AssertionError(f"inspected {inspected.value.file_id!r} != {handle.file_id!r}")
                _check_file(inspected.value, scenario.expect, provider.name)
        elif operation == "download":
            with provider.download_file(handle) as download:
                if "download_json" in scenario.expect:
                    got = json.loads(download.data)
                    if got != scenario.expect["download_json"]:
                        raise AssertionError(f"downloaded {got!r} != {scenario.expect['download_json']!r}")
        else:
            provider.delete_file(handle)


def _until_returned(ctx: Any) -> Any:
    """Offer the toolset's tools only until a tool return is in the history (a server that
    calls a declared tool on every turn, like llm-katan, then answers in text)."""
    from zigai.messages import RequestMessage, ToolReturnPart

    returned = any(isinstance(part, ToolReturnPart) for message in ctx.messages
                   if isinstance(message, RequestMessage) for part in message.parts)
    return () if returned else None


def _build_agent(scenario: Scenario, model: Any) -> Any:
    from zigai.agent import Agent, OutputChoice, OutputSpec
    from zigai.retry import RetryPolicy
    from zigai.tool import Tool
    from zigai.toolset import Toolset

    tools = []
    if scenario.tool is not None:
        spec = scenario.tool
        returns = spec.get("returns")

        def _weather(args: dict[str, Any]) -> Any:
            return returns

        tools.append(
            Tool.manual(
                spec["name"], spec.get("description", ""),
                spec.get("parameters", {"type": "object"}), _weather,
            )
        )
    toolsets = [Toolset(tools, prepare=_until_returned)] if scenario.tool_until_returned else []
    if toolsets:
        tools = []
    output = OutputSpec.text()
    if scenario.output_schema is not None and scenario.output_mode == "tool":
        output = OutputSpec.tool([OutputChoice(scenario.output_name, scenario.output_schema)])
    elif scenario.output_schema is not None:
        output = OutputSpec.json_schema(scenario.output_name, scenario.output_schema)
    retry = None
    if scenario.retry is not None:
        retry = RetryPolicy(
            max_attempts=int(scenario.retry.get("max_attempts", 1)),
            retry_on=frozenset(scenario.retry.get("retry_on", ())),
            initial_delay_ms=0, max_delay_ms=0, jitter=False, honor_retry_after=False,
        )
    kwargs: dict[str, Any] = {}
    if scenario.system is not None:
        kwargs["system_prompt"] = scenario.system
    if scenario.builtin_tools:
        from zigai.model import ManagedTool

        kwargs["builtin_tools"] = tuple(ManagedTool(name) for name in scenario.builtin_tools)
    return Agent(
        model=model, tools=tools, toolsets=toolsets, output=output,
        model_settings=_settings(scenario.settings), retry_policy=retry, **kwargs,
    )


def _settings(values: dict[str, Any]) -> Any:
    from zigai.settings import ModelSettings, ProviderExtraBody

    if not values:
        return None
    fields: dict[str, Any] = {key: tuple(value) if isinstance(value, list) else value
                              for key, value in values.items()}
    extra = fields.pop("extra_body", None)
    if extra is not None:
        fields["extra_body"] = ProviderExtraBody(extra["tag"], extra["body"])
    return ModelSettings(**fields)


def _prompt(scenario: Scenario) -> Any:
    """The run's user prompt: the string itself, or one content part per list item."""
    return scenario.prompt if isinstance(scenario.prompt, str) else _content(scenario.prompt)


def _content(items: tuple[Any, ...]) -> tuple[Any, ...]:
    """Content parts of a ``prompt`` / ``prompt_parts`` list: strings are text, ``{image: ...}`` images."""
    import base64

    from zigai.messages import BytesSource, ImageContent, TextContent

    parts: list[Any] = []
    for item in items:
        if isinstance(item, str):
            parts.append(TextContent(item))
        else:
            image = item["image"]
            data = base64.b64decode(image["base64"], validate=True)
            parts.append(ImageContent(BytesSource(data, image["media_type"])))
    return tuple(parts)


def _history(scenario: Scenario) -> tuple[Any, ...]:
    """The scenario's prior messages, read through the canonical history codec."""
    if not scenario.history:
        return ()
    from zigai.history import parse

    with parse(json.dumps({"version": 2, "messages": list(scenario.history)})) as owned:
        return tuple(owned.messages)


def _run_once(agent: Any, scenario: Scenario) -> Any:
    from zigai.agent import RunOptions

    options = RunOptions(message_history=_history(scenario), prompt_parts=_content(scenario.prompt_parts))
    if scenario.family in STREAMED_FAMILIES:
        with agent.run_stream(_prompt(scenario), options=options) as stream:
            for _ in stream:
                pass
            return stream.result()
    return agent.run(_prompt(scenario), options=options)


def _tool_calls(messages: Iterable[Any]) -> list[dict[str, Any]]:
    from zigai.messages import ResponseMessage, ToolCallPart

    calls = []
    for message in messages:
        if isinstance(message, ResponseMessage):
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    calls.append({"name": part.tool_name, "args": part.args_as_dict()})
    return calls


def _native_tool_calls(messages: Iterable[Any]) -> list[str]:
    from zigai.messages import NativeToolCallPart, ResponseMessage

    return [part.tool_name for message in messages if isinstance(message, ResponseMessage)
            for part in message.parts if isinstance(part, NativeToolCallPart)]


def check_result(result: Any, expect: dict[str, Any]) -> None:
    from zigai.messages import ResponseMessage, ThinkingPart

    output = result.output
    if "output" in expect:
        if output != expect["output"]:
            raise AssertionError(f"output {output!r} != expected {expect['output']!r}")
    if "output_contains" in expect:
        if not isinstance(output, str) or expect["output_contains"].lower() not in output.lower():
            raise AssertionError(f"output {output!r} does not contain {expect['output_contains']!r}")
    if "tool_calls" in expect:
        got_calls = _tool_calls(result.new_messages())
        if got_calls != expect["tool_calls"]:
            raise AssertionError(f"tool calls {got_calls!r} != expected {expect['tool_calls']!r}")
    if "tool_names" in expect:
        got_names = [call["name"] for call in _tool_calls(result.new_messages())]
        if got_names != expect["tool_names"]:
            raise AssertionError(f"tools called {got_names!r} != expected {expect['tool_names']!r}")
    if "native_tool_calls" in expect:
        got_native = _native_tool_calls(result.new_messages())
        if got_native != expect["native_tool_calls"]:
            raise AssertionError(
                f"provider-run tool calls {got_native!r} != expected {expect['native_tool_calls']!r}"
            )
    for name, want in (expect.get("usage") or {}).items():
        if getattr(result.usage, name) != want:
            raise AssertionError(f"usage {name} {getattr(result.usage, name)} != expected {want}")
    if "requests" in expect and result.usage.requests != expect["requests"]:
        raise AssertionError(f"{result.usage.requests} model requests, expected {expect['requests']}")
    if expect.get("thinking"):
        last = [m for m in result.messages if isinstance(m, ResponseMessage)][-1]
        if not any(isinstance(p, ThinkingPart) for p in last.parts):
            raise AssertionError("final response carries no thinking part")


_CATEGORIES = (("RateLimited", "rate_limit"), ("ProviderServerError", "server_error"),
               ("ProviderResponseDecodeError", "decode"), ("ProviderBadRequest", "bad_request"),
               ("ProviderAuthError", "auth"), ("ProviderNotFound", "not_found"),
               ("ProviderClientError", "client_error"))


def _error_category(exc: BaseException) -> str:
    """The scenario's name for an error: a provider status category, ``decode`` for any
    decoding failure, else the class name."""
    from zigai import provider
    from zigai.errors import ProviderError

    if isinstance(exc, ProviderError) and "Decode" in type(exc).__name__:
        return "decode"
    for name, category in _CATEGORIES:
        if isinstance(exc, getattr(provider, name)):
            return category
    return type(exc).__name__


def _run_follow_up(agent: Any, prompt: str, history: tuple[Any, ...]) -> None:
    """A second, buffered turn over the first run's conversation (what a recording of a
    provider's replay rule, for reasoning say, holds after its first exchange)."""
    from zigai.agent import RunOptions

    with agent.run(prompt, options=RunOptions(message_history=history)) as second:
        check_result(second, {"requests": 1})


class RemoteServer:
    """A conformance server already running at ``base_url`` (``zigai conformance serve``),
    seen through its ``GET /_status``."""

    def __init__(self, base_url: str, http: Any) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = http

    def prefix(self, scenario_id: str) -> str:
        return f"{self.base_url}/s/{scenario_id}"

    def scenario_status(self, scenario_id: str) -> dict[str, Any]:
        from zigai.transport import TransportRequest

        response = self.http.send(TransportRequest("GET", f"{self.base_url}/_status"))
        if response.status != 200:
            raise AssertionError(f"GET {self.base_url}/_status answered HTTP {response.status}")
        for scenario in json.loads(response.body)["scenarios"]:
            if scenario["id"] == scenario_id:
                return dict(scenario)
        raise AssertionError(f"the server at {self.base_url} does not serve scenario {scenario_id!r}")


Server = ConformanceServer | RemoteServer


def _server_verdict(server: Server, entry: Entry) -> None:
    status = server.scenario_status(entry.id)
    if status["first_mismatch"] is not None:
        raise AssertionError(f"server: {status['first_mismatch']['message']}")
    if status["consumed"] < len(entry.interactions):
        pending = ", ".join(f"#{i} {it.method} {it.target}" for i, it in enumerate(entry.interactions)
                            if i >= status["consumed"])
        raise AssertionError(f"{len(entry.interactions) - status['consumed']} unconsumed interaction(s): {pending}")


def run_entry(entry: Entry, server: Server, http: Any) -> None:
    """Run one recording's scenario through ``server``; raises Skip or AssertionError."""
    route = detect_route(entry.path, entry.interactions[0])
    scenario = entry.scenario
    if scenario is None:
        raise Skip("no scenario matches this cassette")
    transport = RebasedTransport(http, server.prefix(entry.id))
    if route.kind == "provider-files" or scenario.family == "provider-files":
        if route.kind != "provider-files" or scenario.family != "provider-files":
            raise AssertionError(f"route {route.kind} does not fit family {scenario.family}")
        run_file_operations(build_file_provider(route, transport), scenario)
        _server_verdict(server, entry)
        return
    model = build_model(route, transport, scenario.profile, scenario.chat_options, scenario.responses_options)
    agent = _build_agent(scenario, model)
    if scenario.family == "provider-error":
        for index, run in enumerate(scenario.runs):
            run_agent = agent
            if "model" in run:  # this run asks for another model of the same route
                other = build_model(dataclasses.replace(route, model_id=run["model"]), transport,
                                    scenario.profile, scenario.chat_options, scenario.responses_options)
                run_agent = _build_agent(scenario, other)
            _expect_run(run_agent, scenario, run.get("expect") or {}, index)
    else:
        with _run_once(agent, scenario) as result:
            check_result(result, scenario.expect)
            if scenario.follow_up is not None:
                _run_follow_up(agent, scenario.follow_up, result.messages)
    _server_verdict(server, entry)


def _expect_run(agent: Any, scenario: Scenario, expect: dict[str, Any], index: int) -> None:
    try:
        result = _run_once(agent, scenario)
    except Exception as exc:  # noqa: BLE001 - the expectation decides
        if "error" not in expect:
            raise AssertionError(f"run {index}: unexpected {type(exc).__name__}: {exc}") from exc
        category = _error_category(exc)
        if category != expect["error"]:
            raise AssertionError(f"run {index}: error {category} ({type(exc).__name__}: {exc}) "
                                 f"!= expected {expect['error']}") from exc
        if "status" in expect and getattr(exc, "status", None) != expect["status"]:
            raise AssertionError(f"run {index}: status {getattr(exc, 'status', None)} != {expect['status']}") from exc
        return
    with result:
        if "error" in expect:
            raise AssertionError(f"run {index}: expected {expect['error']}, got success")
        check_result(result, expect)


def run_entries(entries: list[Entry], server: ConformanceServer | str, out: TextIO) -> tuple[int, int, int]:
    """Run every entry in order against ``server`` (or the base URL of a running one); prints
    one line each and the totals."""
    from zigai.security import UrlPolicy
    from zigai.transport import HttpTransport

    passed = failed = skipped = 0
    with HttpTransport(url_policy=UrlPolicy.local_development(), default_timeout_s=60.0) as http:
        target = RemoteServer(server, http) if isinstance(server, str) else server
        for entry in entries:
            try:
                run_entry(entry, target, http)
            except Skip as exc:
                skipped += 1
                print(f"SKIP {entry.relative}: {exc}", file=out)
            except Exception as exc:  # noqa: BLE001 - every failure is reported, not raised
                failed += 1
                reason = f"{type(exc).__name__}: {exc}"
                mismatch = target.scenario_status(entry.id)["first_mismatch"] if "server:" not in reason else None
                if mismatch is not None:
                    reason = f"server: {mismatch['message']} (zigai: {reason})"
                print(f"FAIL {entry.relative}: {reason.replace(chr(10), ' ')[:600]}", file=out)
                if os.environ.get("ZIGAI_CONFORMANCE_TRACEBACK"):
                    traceback.print_exc(file=out)
            else:
                passed += 1
                print(f"PASS {entry.relative}", file=out)
    print(f"{passed} passed, {failed} failed, {skipped} skipped", file=out)
    return passed, failed, skipped
