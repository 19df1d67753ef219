"""The zigai server the official MCP conformance suite's ``server`` mode talks to.

Registers the fixtures the suite's server scenarios name (``test_simple_text``,
``test://static-text``, ``test_prompt_with_arguments``, the SEP-2322 input tools, the 2025
scenarios' ``test_sampling`` / ``test_elicitation*`` / ``test_tool_with_logging`` and
``test://watched-resource``, the Tasks
extension's ``slow_compute`` / ``confirm_delete`` / ...) on a :class:`zigai.mcp.Server` with a
:class:`zigai.mcp.TaskServer`, serves it on 127.0.0.1 and prints ``READY <url>`` once it accepts
connections.  It stops on SIGTERM / SIGINT (the harness sends TERM when it is done).

    python scripts/mcp_conformance_server.py [--port N]
"""

from __future__ import annotations

import argparse
import base64
import json
import signal
import sys
import threading
import time
from typing import Any

from zigai.mcp import (
    TASKS_EXTENSION,
    AudioBlock,
    CallToolResult,
    ClientCapabilities,
    Completion,
    EmbeddedResourceBlock,
    GetPromptResult,
    ImageBlock,
    InputKind,
    InputRequest,
    InternalError,
    LogLevel,
    McpRequestCancelled,
    PromptArgument,
    PromptMessage,
    Server,
    ServerRequest,
    TaskContext,
    TaskServer,
    TextBlock,
    TextResourceContents,
    ToolInfo,
    serve_http,
)

# A 1x1 red PNG and a 1-sample silent WAV: the smallest valid media the scenarios accept.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==")


def _tool(name: str, description: str) -> ToolInfo:
    return ToolInfo.from_json({"name": name, "description": description,
                               "inputSchema": {"type": "object", "properties": {}}})


def build_server() -> tuple[Server, TaskServer]:
    server = Server("zigai-conformance-server", "1.0.0")

    def simple_text(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        return CallToolResult((TextBlock("This is a simple text response for testing."),))

    def image(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        return CallToolResult((ImageBlock(PNG, "image/png"),))

    def audio(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        return CallToolResult((AudioBlock(WAV, "audio/wav"),))

    def embedded(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        return CallToolResult((EmbeddedResourceBlock(TextResourceContents(
            "test://embedded-resource", "This is an embedded resource content.", "text/plain")),))

    def mixed(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        return CallToolResult((
            TextBlock("Multiple content types test:"),
            ImageBlock(PNG, "image/png"),
            EmbeddedResourceBlock(TextResourceContents(
                "test://mixed-content-resource", json.dumps({"test": "data", "value": 123}), "application/json")),
        ))

    def failing(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        return CallToolResult((TextBlock("This tool intentionally returns an error for testing"),), is_error=True)

    def progress(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        for step in (0, 50, 100):
            request.progress(step, 100)
            if step < 100:
                time.sleep(0.05)
        return CallToolResult((TextBlock("Progress test completed"),))

    def logging_tool(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        for step in range(3):
            request.log(LogLevel.info, {"step": step}, "conformance")
        return CallToolResult((TextBlock("Logged three messages (only sent when a log level was asked for)"),))

    def streaming(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        request.progress(1, 2, "working")
        time.sleep(0.05)
        return CallToolResult((TextBlock("Streamed only notifications before the response"),))

    def needs_sampling(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        return CallToolResult((TextBlock("The client declared sampling"),))

    def change_tools(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        server.notify_tools_changed()
        return CallToolResult((TextBlock("tools/list_changed published"),))

    def change_prompts(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        server.notify_prompts_changed()
        return CallToolResult((TextBlock("prompts/list_changed published"),))

    server.add_tool(_tool("test_missing_capability", "Needs the client's sampling capability"), needs_sampling,
                    requires=ClientCapabilities(sampling={}))
    for name, description, handler in (
        ("test_logging_tool", "Logs at info level", logging_tool),
        ("test_streaming_elicitation", "Streams a progress notification, then answers", streaming),
        ("test_trigger_tool_change", "Publishes notifications/tools/list_changed", change_tools),
        ("test_trigger_prompt_change", "Publishes notifications/prompts/list_changed", change_prompts),
        ("test_simple_text", "Returns a simple text block", simple_text),
        ("test_image_content", "Returns an image block", image),
        ("test_audio_content", "Returns an audio block", audio),
        ("test_embedded_resource", "Returns an embedded resource", embedded),
        ("test_multiple_content_types", "Returns text, image and resource blocks", mixed),
        ("test_error_handling", "Always answers with a tool error", failing),
        ("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100", progress),
    ):
        server.add_tool(_tool(name, description), handler)

    server.add_resource("test://static-text", lambda uri, request: "This is the content of the static text resource.",
                        name="static-text", description="A static text resource", mime_type="text/plain")
    server.add_resource("test://static-binary", lambda uri, request: PNG, name="static-binary",
                        description="A static binary resource", mime_type="image/png")

    def template(uri: str, values: dict[str, str], request: ServerRequest) -> str:
        return json.dumps({"id": values["id"], "templateTest": True, "data": f"Data for ID: {values['id']}"},
                          separators=(",", ":"))

    server.add_resource_template("test://template/{id}/data", template, name="template",
                                 description="A resource per id", mime_type="application/json")

    server.add_prompt("test_simple_prompt", lambda args, request: "This is a simple prompt for testing.",
                      description="A prompt without arguments")
    server.add_prompt(
        "test_prompt_with_arguments",
        lambda args, request: f"Prompt with arguments: arg1='{args['arg1']}', arg2='{args['arg2']}'",
        description="A prompt with two arguments",
        arguments=(PromptArgument("arg1", "First test argument", True),
                   PromptArgument("arg2", "Second test argument", True)))

    def with_resource(args: dict[str, str], request: ServerRequest) -> GetPromptResult:
        return GetPromptResult((
            PromptMessage("user", EmbeddedResourceBlock(TextResourceContents(
                args["resourceUri"], "Embedded resource content for testing.", "text/plain"))),
            PromptMessage("user", TextBlock("Please process the embedded resource above.")),
        ))

    server.add_prompt("test_prompt_with_embedded_resource", with_resource,
                      description="A prompt embedding a resource",
                      arguments=(PromptArgument("resourceUri", "URI of the resource to embed", True),))

    def with_image(args: dict[str, str], request: ServerRequest) -> GetPromptResult:
        return GetPromptResult((PromptMessage("user", ImageBlock(PNG, "image/png")),
                                PromptMessage("user", TextBlock("Please analyze the image above."))))

    server.add_prompt("test_prompt_with_image", with_image, description="A prompt with an image")

    words = ("paris", "park", "party", "pasta", "peace")

    def complete(ref: Any, argument: str, value: str, context: dict[str, str], request: ServerRequest) -> Completion:
        found = tuple(word for word in words if word.startswith(value))
        return Completion(found, len(found), False)

    server.set_completion(complete)
    _add_input_scenarios(server)
    _add_session_scenarios(server)
    _add_schema_and_header_scenarios(server)
    return server, _add_task_scenarios(server)


def _add_schema_and_header_scenarios(server: Server) -> None:
    """A tool whose schema uses the 2020-12 vocabulary (kept verbatim in tools/list) and one
    whose argument is mirrored into an ``Mcp-Param-Region`` header (validated against the body)."""
    rich = {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                              "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                       "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                       "phone": {"type": "string"}, "email": {"type": "string"}},
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]}, "else": {"required": ["email"]},
        "additionalProperties": False,
    }
    server.add_tool(ToolInfo.from_json({"name": "json_schema_2020_12_tool", "description": "A 2020-12 schema",
                                        "inputSchema": rich}),
                    lambda arguments, request: CallToolResult((TextBlock("ok"),)))
    server.add_tool(ToolInfo.from_json({
        "name": "test_header_param", "description": "Echoes a region mirrored into a header",
        "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
                        "required": ["region"]}}),
        lambda arguments, request: CallToolResult((TextBlock(f"region {arguments.get('region')}"),)))


def _add_session_scenarios(server: Server) -> None:
    """The fixtures of the suite's 2025-11-25 server scenarios: tools that ask the client (a 2025
    session sends real requests; a 2026 client gets input_required), a logging tool and the
    resource the subscribe scenarios watch."""

    def with_logging(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        for step, text in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
            if step:
                time.sleep(0.05)
            request.log(LogLevel.info, text, "conformance")
        return CallToolResult((TextBlock("Logged three messages at info level"),))

    def sampling(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        answer = request.ask(_sample("llm", str(arguments.get("prompt", "")), 100))["llm"]
        return CallToolResult((TextBlock(f"LLM response: {_answer_text(answer)}"),))

    def user_input(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        schema = {"type": "object", "required": ["username", "email"], "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}}}
        answer = request.ask(InputRequest("user", InputKind.elicitation, {
            "message": str(arguments.get("message", "")), "requestedSchema": schema}))["user"]
        return CallToolResult((TextBlock(f"User response: action={answer['action']}, "
                                         f"content={json.dumps(answer.get('content', {}))}"),))

    def elicit_schema(key: str, properties: dict[str, Any]) -> Any:
        def handler(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
            answer = request.ask(InputRequest(key, InputKind.elicitation, {
                "message": "Please review the form", "requestedSchema": {"type": "object", "properties": properties}}))
            return CallToolResult((TextBlock(f"Elicitation completed: action={answer[key]['action']}, "
                                             f"content={json.dumps(answer[key].get('content', {}))}"),))
        return handler

    defaults = {"name": {"type": "string", "default": "John Doe"}, "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": True}}
    titled = [{"const": f"value{n}", "title": title} for n, title in ((1, "First Option"), (2, "Second Option"),
                                                                       (3, "Third Option"))]
    enums = {"untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
             "titledSingle": {"type": "string", "oneOf": titled},
             "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"]},
             "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
             "titledMulti": {"type": "array", "items": {"anyOf": [
                 {"const": f"value{n}", "title": title} for n, title in ((1, "First Choice"), (2, "Second Choice"),
                                                                         (3, "Third Choice"))]}}}
    for name, description, handler, arguments in (
        ("test_tool_with_logging", "Logs three info messages 50 ms apart", with_logging, {}),
        ("test_sampling", "Asks the client's model", sampling, {"prompt": {"type": "string"}}),
        ("test_elicitation", "Asks the user for a username and email", user_input, {"message": {"type": "string"}}),
        ("test_elicitation_sep1034_defaults", "Elicits a form with defaults", elicit_schema("form", defaults), {}),
        ("test_elicitation_sep1330_enums", "Elicits a form with every enum shape", elicit_schema("form", enums), {}),
    ):
        server.add_tool(ToolInfo.from_json({"name": name, "description": description,
                                            "inputSchema": {"type": "object", "properties": arguments}}), handler)
    server.add_resource("test://watched-resource", lambda uri, request: "A resource the subscribe scenarios watch.",
                        name="watched-resource", description="A resource to subscribe to", mime_type="text/plain")


def _elicit(key: str, message: str, field: str, kind: str = "string") -> InputRequest:
    return InputRequest(key, InputKind.elicitation, {
        "message": message,
        "requestedSchema": {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}})


def _sample(key: str, text: str, max_tokens: int) -> InputRequest:
    return InputRequest(key, InputKind.sampling, {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": max_tokens})


def _answer_text(answer: dict[str, Any]) -> str:
    content = answer.get("content")
    return str(content.get("text", "")) if isinstance(content, dict) else ""


def _add_input_scenarios(server: Server) -> None:
    """The SEP-2322 fixtures: tools and a prompt that answer input_required until given input."""
    roots = InputRequest("client_roots", InputKind.roots, {})

    def elicitation(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        answer = request.ask(_elicit("user_name", "What is your name?", "name"))["user_name"]
        name = (answer.get("content") or {}).get("name", "stranger")
        return CallToolResult((TextBlock(f"Hello, {name}!"),))

    def sampling(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        answer = request.ask(_sample("capital_question", "What is the capital of France?", 100))["capital_question"]
        return CallToolResult((TextBlock(_answer_text(answer)),))

    def list_roots(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        listed = request.ask(roots)["client_roots"]["roots"]
        return CallToolResult((TextBlock("Client roots: " + ", ".join(root["uri"] for root in listed)),))

    def request_state(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        confirm = _elicit("confirm", "Please confirm", "ok", "boolean")
        request.ask(confirm, state="awaiting-confirmation")
        verified = request.request_state == "awaiting-confirmation"
        return CallToolResult((TextBlock("state-ok" if verified else "state-missing"),))

    def multiple(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        answers = request.ask(_elicit("user_name", "What is your name?", "name"),
                              _sample("greeting", "Generate a greeting", 50), roots, state="all-three")
        name = (answers["user_name"].get("content") or {}).get("name", "stranger")
        return CallToolResult((TextBlock(f"{_answer_text(answers['greeting'])} {name}; "
                                         f"{len(answers['client_roots']['roots'])} root(s)"),))

    def multi_round(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        first = request.ask(_elicit("step1", "Step 1: What is your name?", "name"), state="round-1")
        second = request.ask(_elicit("step2", "Step 2: What is your favorite color?", "color"), state="round-2")
        name = (first["step1"].get("content") or {}).get("name")
        color = (second["step2"].get("content") or {}).get("color")
        return CallToolResult((TextBlock(f"{name} likes {color}"),))

    def capabilities(arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        declared = request.client_capabilities
        wanted = [item for item, capability in (
            (_elicit("user_name", "What is your name?", "name"), declared.elicitation),
            (_sample("greeting", "Generate a greeting", 50), declared.sampling),
            (roots, declared.roots)) if capability is not None]
        if wanted:
            request.ask(*wanted)
        return CallToolResult((TextBlock(f"answered {len(wanted)} declared input request(s)"),))

    for name, description, handler in (
        ("test_input_required_result_elicitation", "Asks the client's name by elicitation", elicitation),
        ("test_input_required_result_sampling", "Asks the client to sample an answer", sampling),
        ("test_input_required_result_list_roots", "Asks the client for its roots", list_roots),
        ("test_input_required_result_request_state", "Asks for confirmation with a request state", request_state),
        ("test_input_required_result_tampered_state", "Asks for confirmation with a sealed state", request_state),
        ("test_input_required_result_multiple_inputs", "Asks for three inputs at once", multiple),
        ("test_input_required_result_multi_round", "Asks in two rounds", multi_round),
        ("test_input_required_result_capabilities", "Asks only for what the client declared", capabilities),
    ):
        server.add_tool(_tool(name, description), handler)

    def prompt(args: dict[str, str], request: ServerRequest) -> GetPromptResult:
        answer = request.ask(_elicit("user_context", "What context should the prompt use?", "context"))
        context = (answer["user_context"].get("content") or {}).get("context", "")
        return GetPromptResult((PromptMessage("user", TextBlock(f"Use this context: {context}")),))

    server.add_prompt("test_input_required_result_prompt", prompt, description="A prompt that asks for context")


def _add_task_scenarios(server: Server) -> TaskServer:
    """The Tasks extension (SEP-2663) fixtures the suite's tasks-* server scenarios name."""
    tasks = TaskServer(server, poll_interval_ms=100, ttl_ms=300_000)
    server.add_tool(ToolInfo.from_json({
        "name": "greet", "description": "Greets synchronously",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}),
        lambda arguments, request: CallToolResult((TextBlock(f"Hello, {arguments.get('name', 'World')}!"),)))

    def slow_compute(arguments: dict[str, Any], context: TaskContext) -> CallToolResult:
        end = time.monotonic() + float(arguments.get("seconds", 1))
        while time.monotonic() < end:
            if context.cancelled:
                raise McpRequestCancelled("slow_compute was cancelled")
            time.sleep(0.02)
        return CallToolResult((TextBlock(f"computed {arguments.get('label', 'result')}"),))

    def failing_job(arguments: dict[str, Any], context: TaskContext) -> CallToolResult:
        time.sleep(1)
        return CallToolResult((TextBlock("the job failed"),), is_error=True)

    def protocol_error_job(arguments: dict[str, Any], context: TaskContext) -> CallToolResult:
        raise InternalError("the job crashed")

    def confirm_delete(arguments: dict[str, Any], context: TaskContext) -> CallToolResult:
        answer = context.ask(_elicit("confirm", "Delete the file?", "confirm", "boolean"))["confirm"]
        return CallToolResult((TextBlock(f"delete: {answer.get('action')}"),))

    def multi_input(arguments: dict[str, Any], context: TaskContext) -> CallToolResult:
        answers = context.ask(_elicit("first", "First value?", "value"), _elicit("second", "Second value?", "value"))
        return CallToolResult((TextBlock(f"got {sorted(answers)}"),))

    for name, work, properties, required in (
        ("slow_compute", slow_compute, {"seconds": "number", "label": "string"}, False),
        ("failing_job", failing_job, {}, True),
        ("protocol_error_job", protocol_error_job, {}, False),
        ("confirm_delete", confirm_delete, {}, False),
        ("multi_input", multi_input, {}, False),
    ):
        tasks.add_tool(ToolInfo.from_json({"name": name, "description": f"Task fixture {name}", "inputSchema": {
            "type": "object", "properties": {key: {"type": kind} for key, kind in properties.items()}}}),
            work, required=required)

    def with_task(arguments: dict[str, Any], request: ServerRequest) -> Any:
        answer = request.ask(_elicit("user_name", "What is your name?", "name"))["user_name"]
        name = (answer.get("content") or {}).get("name", "stranger")
        return tasks.start(lambda args, context: CallToolResult((TextBlock(f"Hello, {name}!"),)), arguments, request)

    server.add_tool(_tool("test_tool_with_task", "Asks a name, then finishes as a task"), with_task,
                    requires=ClientCapabilities(extensions={TASKS_EXTENSION: {}}))
    return tasks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server, tasks = build_server()
    handle = serve_http(server, "127.0.0.1", args.port)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    print(f"READY {handle.url}", flush=True)
    try:
        stop.wait()
    finally:
        handle.close()
        tasks.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
