"""The zigai server the official MCP conformance suite's ``server`` mode talks to.

Registers the fixtures the suite's server scenarios name (``test_simple_text``,
``test://static-text``, ``test_prompt_with_arguments``, ...) on a plain
:class:`zigai.mcp.Server`, serves it on 127.0.0.1 and prints ``READY <url>`` once it accepts
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
    AudioBlock,
    CallToolResult,
    ClientCapabilities,
    Completion,
    EmbeddedResourceBlock,
    GetPromptResult,
    ImageBlock,
    InputKind,
    InputRequest,
    PromptArgument,
    PromptMessage,
    Server,
    ServerRequest,
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


def build_server() -> Server:
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
            request.log("info", {"step": step}, "conformance")
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
    return server


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    handle = serve_http(build_server(), "127.0.0.1", args.port)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    print(f"READY {handle.url}", flush=True)
    try:
        stop.wait()
    finally:
        handle.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
