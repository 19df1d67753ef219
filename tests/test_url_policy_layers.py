"""The agent's url_policy governs every layer that opens a URL during its run, not only the
model endpoint: MCP HTTP toolsets, the built-in browser (each redirect hop too) and the image
capability.  One rule combines two policies everywhere, ``stricter_policy``: a URL must pass
both (issue 31, defect 3's class).

Refusals are checked against a real listening socket on 127.0.0.1 that must never see a
connection; the allowed cases complete over real loopback servers.
"""

from __future__ import annotations

import itertools
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from support.loopback import LoopbackServer, Received, Reply
from support.silent_socket import no_connection, silent_listener

from zigai import Agent, mcp
from zigai.capabilities_builtin import GeneratedImage, HttpBrowser, builtin_capabilities
from zigai.messages import ResponseMessage, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from zigai.security import UrlPolicy, UrlPolicyViolation, UrlRejection, stricter_policy
from zigai.testing import FunctionModel

LOCAL = UrlPolicy.local_development()


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    with silent_listener() as sock:
        yield sock


def _call_then_done(call: ToolCallPart) -> FunctionModel:
    def respond(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if not any(isinstance(m, ResponseMessage) for m in messages):
            return ResponseMessage((call,))
        return ResponseMessage((TextPart("done"),))
    return FunctionModel(respond)


def _parts(result: Any, kind: type) -> list[Any]:
    return [p for m in result.all_messages() for p in getattr(m, "parts", ()) if isinstance(p, kind)]


# -- the one combination rule ---------------------------------------------------------------------

POLICIES = [
    None,
    UrlPolicy(),
    LOCAL,
    UrlPolicy(allow_http=True),
    UrlPolicy(allowed_hosts=["api.example.com", "b.example.com"]),
    UrlPolicy.local_development(allowed_hosts=["127.0.0.1", "api.example.com"]),
    UrlPolicy.local_development(allowed_hosts=[]),
]
URLS = [
    "https://api.example.com/v1", "http://api.example.com/v1", "https://b.example.com/",
    "http://127.0.0.1:8080/", "https://127.0.0.1/", "https://localhost/", "ftp://api.example.com/",
    "https://10.0.0.1/",
]


@pytest.mark.parametrize(("first", "second"), list(itertools.product(POLICIES, repeat=2)))
def test_stricter_policy_accepts_exactly_what_both_accept(first: UrlPolicy | None, second: UrlPolicy | None) -> None:
    combined = stricter_policy(first, second)
    if first is None and second is None:
        assert combined is None
        return
    assert combined is not None
    for url in URLS:
        expected = all(p.allows(url) for p in (first, second) if p is not None)
        assert combined.allows(url) is expected, url
    for address in ("127.0.0.1", "93.184.216.34", "10.1.1.1"):
        assert _pins(combined, address) is all(_pins(p, address) for p in (first, second) if p is not None)


def _pins(policy: UrlPolicy, address: str) -> bool:
    try:
        policy.check_resolved_address("h.example.com", address)
    except UrlPolicyViolation:
        return False
    return True


def test_stricter_policy_keeps_a_single_policy_and_refuses_other_values() -> None:
    assert stricter_policy(LOCAL) is LOCAL and stricter_policy(None, LOCAL, None) is LOCAL
    assert stricter_policy(LOCAL, UrlPolicy.local_development()) is LOCAL
    assert stricter_policy() is None
    with pytest.raises(TypeError, match="UrlPolicy or None"):
        stricter_policy(LOCAL, "https://example.com")  # type: ignore[arg-type]


# -- MCP HTTP toolsets ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("agent_policy", "reason"),
    [(UrlPolicy(), UrlRejection.scheme_not_allowed),
     (UrlPolicy.local_development(allowed_hosts=["mcp.example.com"]), UrlRejection.host_not_allowed)],
    ids=["strict_agent_refuses_http", "agent_allowlist_names_another_host"],
)
def test_an_agents_policy_refuses_its_mcp_server_before_any_socket_opens(
    listener: socket.socket, agent_policy: UrlPolicy, reason: UrlRejection
) -> None:
    port = listener.getsockname()[1]
    transport = mcp.StreamableHttpTransport(f"http://127.0.0.1:{port}/mcp", url_policy=LOCAL)
    with mcp.Client(transport, default_timeout_ms=3_000) as client:
        agent = Agent(_call_then_done(ToolCallPart("add", "{}", "c1")), toolsets=[mcp.McpToolset(client)],
                      url_policy=agent_policy)
        with pytest.raises(UrlPolicyViolation) as caught:
            agent.run("go")
        assert caught.value.reason is reason
    assert no_connection(listener)


def _adder(seen: list[str]) -> mcp.Server:
    server = mcp.Server("policy-peer", "1.0")
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}

    def add(args: dict[str, Any], request: mcp.ServerRequest) -> str:
        seen.append("add")
        return str(args["a"] + 1)

    server.add_tool(mcp.ToolInfo("add", schema, "Add one."), add)
    return server


def test_a_listed_mcp_tool_is_refused_at_call_time_by_a_stricter_agent() -> None:
    seen: list[str] = []
    with mcp.serve_http(_adder(seen)) as running, \
            mcp.Client(mcp.StreamableHttpTransport(running.url, url_policy=LOCAL), default_timeout_ms=10_000) as client:
        tools = mcp.McpToolset(client).list_tools()  # listed outside any run: no agent policy
        allowed = Agent(_call_then_done(ToolCallPart("add", '{"a": 1}', "c1")), tools=tools,
                        url_policy=UrlPolicy.local_development(allowed_hosts=["127.0.0.1"]))
        with allowed.run("go") as result:
            assert [p.content for p in _parts(result, ToolReturnPart)] == ["2"]
        strict = Agent(_call_then_done(ToolCallPart("add", '{"a": 1}', "c2")), tools=tools, url_policy=UrlPolicy())
        with pytest.raises(UrlPolicyViolation):
            strict.run("go")
    assert seen == ["add"]  # the strict agent's call never reached the server


def test_an_agent_without_a_policy_leaves_the_transports_policy_alone() -> None:
    seen: list[str] = []
    with mcp.serve_http(_adder(seen)) as running, \
            mcp.Client(mcp.StreamableHttpTransport(running.url, url_policy=LOCAL), default_timeout_ms=10_000) as client:
        agent = Agent(_call_then_done(ToolCallPart("add", '{"a": 41}', "c1")), toolsets=[mcp.McpToolset(client)])
        with agent.run("go") as result:
            assert [p.content for p in _parts(result, ToolReturnPart)] == ["42"]
    assert seen == ["add"]


# -- the built-in browser and image capabilities --------------------------------------------------


def test_the_browser_refuses_what_the_agent_refuses_before_any_socket_opens(listener: socket.socket) -> None:
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
    with HttpBrowser(LOCAL) as http:
        agent = Agent(_call_then_done(ToolCallPart("browser_open", json.dumps({"url": url}), "c1")),
                      capabilities=[builtin_capabilities(browser=http, url_policy=LOCAL)["browser"]],
                      url_policy=UrlPolicy())
        with agent.run("read it") as result:
            [retry] = _parts(result, RetryPromptPart)
            assert "not allowed" in str(retry.content) and "plain http" in str(retry.content)
    assert no_connection(listener)


def test_every_browser_redirect_hop_must_pass_the_agents_policy(listener: socket.socket) -> None:
    target = f"http://127.0.0.1:{listener.getsockname()[1]}/secret"

    def site(request: Received) -> Reply:
        return Reply(302, (("Location", target),))

    with LoopbackServer(site) as server, HttpBrowser(LOCAL) as http:
        start = server.url.replace("127.0.0.1", "localhost") + "/start"
        agent = Agent(_call_then_done(ToolCallPart("browser_open", json.dumps({"url": start}), "c1")),
                      capabilities=[builtin_capabilities(browser=http, url_policy=LOCAL)["browser"]],
                      url_policy=UrlPolicy.local_development(allowed_hosts=["localhost"]))
        with agent.run("read it") as result:
            [retry] = _parts(result, RetryPromptPart)
            assert "not allowed" in str(retry.content) and "allowlist" in str(retry.content)
        assert [r.target for r in server.requests] == ["/start"]
    assert no_connection(listener)


def test_the_browser_follows_redirects_the_agents_policy_allows() -> None:
    def site(request: Received) -> Reply:
        if request.target == "/start":
            return Reply(302, (("Location", "/home"),))
        return Reply(200, (("Content-Type", "text/plain"),), b"home page")

    with LoopbackServer(site) as server, HttpBrowser(LOCAL) as http:
        agent = Agent(_call_then_done(ToolCallPart("browser_open", json.dumps({"url": server.url + "/start"}), "c1")),
                      capabilities=[builtin_capabilities(browser=http, url_policy=LOCAL)["browser"]],
                      url_policy=UrlPolicy.local_development(allowed_hosts=["127.0.0.1"]))
        with agent.run("read it") as result:
            [returned] = _parts(result, ToolReturnPart)
            assert returned.content["text"] == "home page" and returned.content["url"] == server.url + "/home"


class _Images:
    def __init__(self) -> None:
        self.described: list[str] = []

    def generate(self, prompt: str, *, size: str) -> GeneratedImage:
        return GeneratedImage("image/png", b"x")

    def describe(self, url: str, *, question: str) -> str:
        self.described.append(url)
        return "a cat"


def test_the_image_capability_applies_the_agents_policy_to_urls_it_describes() -> None:
    images = _Images()
    calls = iter(["https://cdn.example.com/a.png", "https://images.example.com/b.png"])

    def respond(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        url = next(calls, None)
        if url is None:
            return ResponseMessage((TextPart("done"),))
        return ResponseMessage((ToolCallPart("image_describe", json.dumps({"url": url}), url[-5:]),))

    agent = Agent(FunctionModel(respond), capabilities=[builtin_capabilities(image=images)["image"]],
                  url_policy=UrlPolicy(allowed_hosts=["images.example.com"]))
    with agent.run("describe") as result:
        assert "not on the allowlist" in str(_parts(result, RetryPromptPart)[0].content)
        assert [p.content for p in _parts(result, ToolReturnPart)] == ["a cat"]
    assert images.described == ["https://images.example.com/b.png"]


# -- embeddings made during a run -----------------------------------------------------------------


def test_an_embedding_request_carries_the_callers_policy_and_is_refused_before_any_socket_opens(
    listener: socket.socket,
) -> None:
    from zigai.embeddings import Embedder, OpenAIEmbeddingModel
    from zigai.providers import openai
    from zigai.transport import HttpTransport

    port = listener.getsockname()[1]
    with HttpTransport(url_policy=LOCAL, default_timeout_s=5.0) as transport:
        provider = openai.Provider("key", transport=transport, url_policy=LOCAL, base_url=f"http://127.0.0.1:{port}/v1")
        embedder = Embedder(OpenAIEmbeddingModel(provider, "text-embedding-3-small"))
        for policy, reason in ((UrlPolicy(), UrlRejection.scheme_not_allowed),
                               (UrlPolicy.local_development(allowed_hosts=["localhost"]), UrlRejection.host_not_allowed)):
            with pytest.raises(UrlPolicyViolation) as caught:
                embedder.embed(["a"], url_policy=policy)
            assert caught.value.reason is reason
            with pytest.raises(UrlPolicyViolation):
                embedder.embed_one("a", url_policy=policy)
        with pytest.raises(TypeError, match="UrlPolicy or None"):
            embedder.embed(["a"], url_policy="strict")  # type: ignore[arg-type]
    assert no_connection(listener)


def test_an_embedding_the_callers_policy_allows_reaches_the_server() -> None:
    from zigai.embeddings import Embedder, EmbeddingRequest, OpenAIEmbeddingModel
    from zigai.providers import openai
    from zigai.transport import HttpTransport

    answer = {"object": "list", "model": "m", "data": [{"object": "embedding", "index": 0, "embedding": [1.0, 2.0]}],
              "usage": {"prompt_tokens": 1, "total_tokens": 1}}
    with LoopbackServer(lambda request: Reply.of_json(answer)) as server, \
            HttpTransport(url_policy=LOCAL, default_timeout_s=5.0) as transport:
        provider = openai.Provider("key", transport=transport, url_policy=LOCAL, base_url=server.url + "/v1")
        embedder = Embedder(OpenAIEmbeddingModel(provider, "text-embedding-3-small"))
        assert embedder.embed_one("a", url_policy=UrlPolicy.local_development(allowed_hosts=["127.0.0.1"])) == (1.0, 2.0)
        assert [r.target for r in server.requests] == ["/v1/embeddings"]
    with pytest.raises(TypeError, match="EmbeddingRequest.url_policy"):
        EmbeddingRequest(("a",), url_policy="strict")  # type: ignore[arg-type]


# -- a run's own policy and delegated agents ------------------------------------------------------


def _loopback_model(port: int, transport: Any) -> Any:
    from zigai.providers import openai_compatible as oc

    provider = oc.Provider("key", transport, url_policy=LOCAL, base_url=f"http://127.0.0.1:{port}/v1")
    return oc.Client("m", provider, fallback_profile="full")


def test_run_options_url_policy_tightens_the_agents_for_one_run(listener: socket.socket) -> None:
    from zigai.agent import InvalidAgentConfiguration, RunOptions
    from zigai.transport import HttpTransport

    with HttpTransport(url_policy=LOCAL, default_timeout_s=5.0) as transport:
        agent = Agent(_loopback_model(listener.getsockname()[1], transport), url_policy=LOCAL)
        with pytest.raises(UrlPolicyViolation) as caught:
            agent.run(options=RunOptions(prompt="hi", url_policy=UrlPolicy()))
        assert caught.value.reason is UrlRejection.scheme_not_allowed
    assert no_connection(listener)
    with pytest.raises(InvalidAgentConfiguration, match="RunOptions.url_policy"):
        RunOptions(url_policy="strict")  # type: ignore[arg-type]


def test_a_delegated_agent_is_governed_by_the_delegating_agents_policy(listener: socket.socket) -> None:
    from zigai.multi_agent import Session
    from zigai.transport import HttpTransport

    with HttpTransport(url_policy=LOCAL, default_timeout_s=5.0) as transport:
        child = Agent(_loopback_model(listener.getsockname()[1], transport))  # no policy of its own
        scope = Session("s").scope()
        delegate = scope.as_tool(child, name="ask_child", description="Ask the child agent.")
        parent = Agent(_call_then_done(ToolCallPart("ask_child", '{"prompt": "hi"}', "c1")), tools=[delegate],
                       url_policy=UrlPolicy())
        with pytest.raises(UrlPolicyViolation):
            parent.run("go")
    assert no_connection(listener)


def test_the_browser_keeps_a_bounded_number_of_pools_for_distinct_policies() -> None:
    from zigai.capabilities_builtin import browser as browser_module
    from zigai.control import CancellationToken

    def site(request: Received) -> Reply:
        return Reply(200, (("Content-Type", "text/plain"),), b"ok")

    limit = browser_module._MAX_POOLED_POLICIES
    with LoopbackServer(site) as server, HttpBrowser(LOCAL) as http:
        for index in range(limit + 2):  # each caller policy allows 127.0.0.1 and one other host
            policy = UrlPolicy.local_development(allowed_hosts=["127.0.0.1", f"h{index}.example.com"])
            page = http.fetch(server.url + "/", max_bytes=64, deadline=None, cancellation=CancellationToken(),
                              url_policy=policy)
            assert page.text == "ok"
        assert len(http._transports) == limit  # the last two fetches used one-off, closed pools
        assert len(server.requests) == limit + 2
    assert http._transports == {}
