"""Scripted agents for the UI adapter tests: text, tool loop, structured, approval, failure.

Every agent streams through ``FunctionModel`` so the adapters see real part events; the
Python tests, the official ``ag-ui-protocol`` validation and the Node peers all use these.
:func:`router` serves every scenario of one protocol under ``/<name>/`` on one WSGI app.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from zigai.agent import Agent, RunLimits
from zigai.messages import ResponseMessage, ToolReturnPart
from zigai.output import OutputSpec
from zigai.testing import DeltaThinking, DeltaToolCall, FunctionModel
from zigai.tool import Tool, ToolExecution

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
PLACE = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "rank": {"type": "integer"}},
    "required": ["city", "rank"],
    "additionalProperties": False,
}
PUBLISHED: list[str] = []


def _responses(messages: tuple[Any, ...]) -> int:
    return sum(isinstance(m, ResponseMessage) for m in messages)


def _returns(messages: tuple[Any, ...]) -> list[ToolReturnPart]:
    return [p for m in messages for p in getattr(m, "parts", ()) if isinstance(p, ToolReturnPart)]


def text_agent() -> Agent:
    def stream(messages: tuple[Any, ...], info: Any) -> Iterator[Any]:
        yield DeltaThinking("Let me greet.")
        yield "Hello"
        yield ", world"

    return Agent(FunctionModel(stream_function=stream, model_name="scripted-text"))


def weather(args: dict[str, Any]) -> dict[str, Any]:
    return {"city": args["city"], "sky": "sunny", "temperature_c": 21}


def tool_agent() -> Agent:
    def stream(messages: tuple[Any, ...], info: Any) -> Iterator[Any]:
        if _responses(messages) == 0:
            yield "Checking the weather."
            yield DeltaToolCall(name="weather", json_args='{"city":', tool_call_id="call_weather_1")
            yield DeltaToolCall(json_args=' "Paris"}')
            return
        result = _returns(messages)[-1].content
        yield f"It is {result['sky']} in {result['city']}."

    tools = [Tool.manual("weather", "Current weather for a city.", CITY, weather)]
    return Agent(FunctionModel(stream_function=stream, model_name="scripted-tools"), tools=tools)


def structured_agent() -> Agent:
    def stream(messages: tuple[Any, ...], info: Any) -> Iterator[Any]:
        yield from ['{"ci', 'ty": "Par', 'is", ', '"rank', '": 1', "2}"]

    return Agent(FunctionModel(stream_function=stream, model_name="scripted-structured"),
                 output=OutputSpec.json_schema("place", PLACE))


def publish(args: dict[str, Any]) -> str:
    PUBLISHED.append(args["city"])
    return f"published {args['city']}"


def approval_agent() -> Agent:
    def stream(messages: tuple[Any, ...], info: Any) -> Iterator[Any]:
        returns = _returns(messages)
        if not returns:
            yield DeltaToolCall(name="publish", json_args='{"city": "Oslo"}', tool_call_id="call_pub_1")
            return
        yield f"Done: {returns[-1].content}"

    tools = [Tool.manual("publish", "Publish a city report.", CITY, publish,
                         execution=ToolExecution.requires_approval)]
    return Agent(FunctionModel(stream_function=stream, model_name="scripted-approval"), tools=tools)


def failing_agent() -> Agent:
    """Asks for a tool but may make only one request: the run fails with RequestLimitExceeded."""
    agent = tool_agent()
    return Agent(agent.model, tools=agent.tools, limits=RunLimits(max_requests=1))


THEME = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}


def save_theme(args: dict[str, Any], ctx: Any) -> str:
    """A server tool that reads the client's context and updates the shared state."""
    shared = ctx.deps
    user = next((entry.value for entry in shared.context if entry.description == "user"), "nobody")
    shared.patch([{"op": "replace", "path": "/theme", "value": args["color"]}])
    return f"theme {args['color']} saved for {user}"


def frontend_agent() -> Agent:
    """Calls the browser's ``pick_color`` tool, then a server tool that updates the state."""

    def stream(messages: tuple[Any, ...], info: Any) -> Iterator[Any]:
        names = [r.tool_name for r in _returns(messages)]
        if "pick_color" not in names:
            yield DeltaToolCall(name="pick_color", json_args='{"options": ["red", "blue"]}',
                                tool_call_id="call_pick_1")
        elif "save_theme" not in names:
            color = _returns(messages)[-1].content
            yield DeltaToolCall(name="save_theme", json_args=json.dumps({"color": color}),
                                tool_call_id="call_save_1")
        else:
            yield f"Done: {_returns(messages)[-1].content}"

    tools = [Tool.manual("save_theme", "Save the theme.", THEME, save_theme, takes_context=True)]
    return Agent(FunctionModel(stream_function=stream, model_name="scripted-frontend"), tools=tools)


SCENARIOS = {
    "text": text_agent, "tools": tool_agent, "structured": structured_agent,
    "approval": approval_agent, "failing": failing_agent,
}
def files_agent() -> Agent:
    """Answers with what the user's prompt carried: text, then each file's kind and source."""

    def describe(item: Any) -> str:
        source = item.source
        where = f"{len(source.data)} bytes" if source.kind == "bytes" else source.url
        return f"{item.kind} {source.media_type} {where}"

    def stream(messages: tuple[Any, ...], info: Any) -> Iterator[Any]:
        prompt = next(p for m in reversed(messages) for p in getattr(m, "parts", ())
                      if p.part_kind == "user-prompt")
        content = prompt.content if isinstance(prompt.content, tuple) else ()
        yield "; ".join(item.text if item.kind == "text" else describe(item) for item in content)

    return Agent(FunctionModel(stream_function=stream, model_name="scripted-files"))


def cancelling_agent() -> Agent:
    """Streams a first sentence, then waits (30 s at most) for the client to cancel the run;
    the next event checks the run control, so a cancel ends the run with ``Cancelled``."""

    def stream(messages: tuple[Any, ...], info: Any) -> Iterator[Any]:
        yield "Working on it"
        info.request.control.token.wait(30)
        yield " and done."

    return Agent(FunctionModel(stream_function=stream, model_name="scripted-cancel"))


# served by the router too, but they need a client that sends frontend tools or files, or
# that cancels the run
CLIENT_TOOL_SCENARIOS = {"frontend": frontend_agent, "files": files_agent, "cancelling": cancelling_agent}


def router(protocol: str, **options: Any) -> Any:
    """One WSGI app serving every scenario under ``/<name>/`` (fresh agents, one app each)."""
    from zigai.ui import ui_app

    apps = {f"/{name}/": ui_app(build(), protocol, **options)  # type: ignore[arg-type]
            for name, build in {**SCENARIOS, **CLIENT_TOOL_SCENARIOS}.items()}

    def route(environ: dict[str, Any], start_response: Any) -> Any:
        path = environ.get("PATH_INFO", "")
        for prefix, app in apps.items():
            if path.startswith(prefix):
                return app(dict(environ, PATH_INFO="/" + path[len(prefix):]), start_response)
        start_response("404 Not Found", [("Content-Type", "application/json")])
        return [json.dumps({"error": "no scenario"}).encode()]

    route.apps = apps  # type: ignore[attr-defined]
    return route
