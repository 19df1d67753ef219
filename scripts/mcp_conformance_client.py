"""The zigai client the official MCP conformance suite's ``client`` mode runs.

The suite starts one mock server per scenario and runs ``python mcp_conformance_client.py
<server-url>`` with ``MCP_CONFORMANCE_SCENARIO`` (the scenario name) and, for some scenarios,
``MCP_CONFORMANCE_CONTEXT`` (a JSON object: credentials, tool calls to make) in the
environment.  This entry does what an application would do with the public zigai API: list
the tools, call them (answering any multi round-trip input through :func:`answer_input`, an
unattended InputHandler), and, where the server asks for authorization, authorize through
:mod:`zigai.mcp.auth.discovery`.  It exits 0 when the session worked and 1 (with the error on stderr)
when zigai refused something, which is the correct outcome for the scenarios that test a
refusal.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from zigai.mcp import (
    PROTOCOL_VERSION,
    Client,
    ClientCapabilities,
    Implementation,
    InputKind,
    InputRequest,
    InputResponse,
    StreamableHttpTransport,
    ToolInfo,
)
from zigai.mcp.auth.flow import OAuthProvider
from zigai.mcp.auth.tokens import OAuthClient
from zigai.security import UrlPolicy
from zigai.transport import HttpTransport, RedirectPolicy, TransportRequest

# Where this client would publish its client ID metadata document (the suite's auth servers
# accept this URL as the client_id of a CIMD client; nothing fetches it during the run).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://127.0.0.1:53682/callback"


def _auto_approve(policy: UrlPolicy) -> Any:
    """A redirect handler for the suite's auto-approving servers: GET the authorization URL and
    return the ``Location`` it redirects to (what a browser would be sent to)."""
    http = HttpTransport(url_policy=policy, redirect_policy=RedirectPolicy.return_response)

    def handler(url: str) -> str:
        response = http.send(TransportRequest("GET", url))
        location = response.headers.get("location")
        if not 300 <= response.status < 400 or not location:
            raise RuntimeError(f"the authorization endpoint answered HTTP {response.status} without a redirect")
        return location

    return handler


def _auth(scenario: str, context: dict[str, Any], policy: UrlPolicy) -> OAuthProvider | None:
    if not scenario.startswith("auth/"):
        return None
    client = None
    if context.get("client_id") and context.get("client_secret"):
        client = OAuthClient(context["client_id"], context["client_secret"], "client_secret_basic",
                             issuer=context.get("issuer"))
    grant = "client_credentials" if scenario.startswith("auth/client-credentials") else "authorization_code"
    return OAuthProvider(grant=grant, redirect_uri=REDIRECT_URI, redirect_handler=_auto_approve(policy),
                         client=client, client_metadata_url=CLIENT_METADATA_URL,
                         client_name="zigai-conformance-client", url_policy=policy)


def _arguments(tool: ToolInfo) -> dict[str, Any]:
    """Plausible arguments for the required parameters of ``tool`` (the mock servers echo them)."""
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    properties = schema.get("properties") or {}
    samples = {"number": 1, "integer": 1, "boolean": True, "string": "zigai", "object": {}, "array": []}
    arguments = {}
    for name in schema.get("required") or ():
        kind = (properties.get(name) or {}).get("type", "string")
        arguments[name] = samples.get(kind if isinstance(kind, str) else "string", "zigai")
    return arguments


def answer_input(request: InputRequest) -> InputResponse:
    """The unattended user: accept elicitations with a value per requested field, offer the
    working directory as the one root, and answer sampling with a fixed text."""
    if request.kind is InputKind.roots:
        return InputResponse.roots([(Path.cwd().as_uri(), "workspace")])
    if request.kind is InputKind.sampling:
        return InputResponse.sampled("zigai conformance answer", model="zigai-conformance")
    schema = request.params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    samples: dict[Any, Any] = {"boolean": True, "number": 1, "integer": 1, "string": "zigai"}

    def value(spec: Any) -> Any:  # the field's default, else its first choice, else a sample of its type
        if not isinstance(spec, dict):
            return "zigai"
        if "default" in spec:
            return spec["default"]
        choices = spec.get("enum") or [option.get("const") for option in spec.get("oneOf") or []
                                       if isinstance(option, dict) and "const" in option]
        return choices[0] if choices else samples.get(spec.get("type"), "zigai")

    values = {name: value(spec) for name, spec in (properties or {}).items()}
    return InputResponse.accept(values)


def run(url: str, scenario: str, context: dict[str, Any]) -> None:
    policy = UrlPolicy.local_development()
    transport = StreamableHttpTransport(url, url_policy=policy, auth=_auth(scenario, context, policy))
    capabilities = ClientCapabilities(roots={}, sampling={}, elicitation={})
    # under --requirements 2026-07-28 the client pins that revision (no negotiation probe);
    # ZIGAI_MCP_NEGOTIATE=1 lets it negotiate, as an application's default client does
    pinned = None if os.environ.get("ZIGAI_MCP_NEGOTIATE") == "1" else PROTOCOL_VERSION
    with Client(transport, client_info=Implementation("zigai-conformance-client", "1.0.0"),
                capabilities=capabilities, default_timeout_ms=20_000, input_handler=answer_input,
                protocol_version=pinned) as client:
        tools = [tool for page in client.list_all_tools() for tool in page.items]
        calls = context.get("toolCalls")
        if calls:
            for call in calls:
                client.call_tool(call["name"], call.get("arguments") or {})
            return
        if scenario == "json-schema-2020-12-preservation":
            # The scenario asks the client to hand one tool's inputSchema, exactly as received,
            # to the echo tool (the one taking a 'schema' object) so it can see what survived.
            echo = next(tool for tool in tools if "schema" in (tool.input_schema.get("required") or ()))
            focal = next(tool for tool in tools if tool is not echo)
            client.call_tool(echo.name, {"schema": focal.input_schema})
            return
        for tool in tools:
            client.call_tool(tool.name, _arguments(tool))
        if scenario == "http-standard-headers":
            for resource in client.list_resources().items:
                client.read_resource(resource.uri)
            from zigai.mcp import PromptRequest

            for prompt in client.list_prompts().items:
                client.get_prompt(PromptRequest(prompt.name))


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: mcp_conformance_client.py <server-url>", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    try:
        run(argv[1], scenario, context)
    except Exception as exc:  # the suite reads the exit status; the message goes to its log
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
