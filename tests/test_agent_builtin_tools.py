"""Agent.builtin_tools: provider-managed tools reach the wire, and bad ones fail before any I/O."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.agent_script import Script, reply
from support.mock_transport import MockResponse, MockTransport

from zigai.agent import Agent, InvalidAgentConfiguration
from zigai.model import ManagedTool, ModelProfile, UnsupportedModelFeature
from zigai.providers import anthropic as A
from zigai.providers import google as G
from zigai.providers.openai import Client as OpenAIClient
from zigai.providers.openai import Provider as OpenAIProvider


def _capture(body: dict[str, Any]) -> MockTransport:
    return MockTransport(lambda request: MockResponse.of_json(body))


def _sent(transport: MockTransport) -> dict[str, Any]:
    assert len(transport.requests) == 1
    return json.loads(transport.requests[0].body or b"")


def test_openai_responses_receives_web_search_from_the_agent() -> None:
    transport = _capture({"status": "completed", "output": [
        {"type": "message", "content": [{"type": "output_text", "text": "found"}]}]})
    model = OpenAIClient("gpt-4.1-mini", OpenAIProvider("sk-test", transport=transport))
    agent = Agent(model, builtin_tools=[ManagedTool("web_search", {"search_context_size": "low"})])
    with agent.run("news?") as result:
        assert result.output == "found"
    assert _sent(transport)["tools"] == [{"type": "web_search", "search_context_size": "low"}]


def test_anthropic_receives_web_search_and_web_fetch_from_the_agent() -> None:
    transport = _capture({"content": [{"type": "text", "text": "ok"}], "usage": {}})
    model = A.Client("claude-sonnet-4-5", A.Provider("sk-test", transport), max_tokens=50)
    agent = Agent(model, builtin_tools=["web_search", ManagedTool("web_fetch", {"max_uses": 1})])
    agent.run("read it").close()
    body = _sent(transport)
    assert body["tools"] == [
        {"type": "web_search_20250305", "name": "web_search"},
        {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 1},
    ]
    headers = {k.lower(): v for k, v in transport.requests[0].headers}
    assert "web-fetch" in headers["anthropic-beta"]


def test_gemini_receives_search_url_context_and_code_execution_from_the_agent() -> None:
    transport = _capture({"candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}]})
    model = G.Client("gemini-2.5-flash", G.Provider("k", transport))
    agent = Agent(model, builtin_tools=["web_search", "web_fetch", "code_execution"])
    agent.run("compute").close()
    assert _sent(transport)["tools"] == [{"googleSearch": {}}, {"urlContext": {}}, {"codeExecution": {}}]


def test_a_tool_the_model_profile_lacks_fails_before_any_request() -> None:
    transport = MockTransport(lambda request: pytest.fail("no request may be sent"))
    model = OpenAIClient("gpt-4.1-nano", OpenAIProvider("sk-test", transport=transport))  # no web search
    agent = Agent(model, builtin_tools=["web_search"])
    with pytest.raises(UnsupportedModelFeature, match="web_search"):
        agent.run("x")
    anthropic = Agent(A.Client("claude-sonnet-4-5", A.Provider("k", transport), max_tokens=5),
                      builtin_tools=["image_generation"])
    with pytest.raises(UnsupportedModelFeature, match="image_generation"):
        anthropic.run("x")
    assert transport.requests == []


def test_a_scripted_model_sees_the_managed_tools_in_its_request() -> None:
    script = Script([reply("ok")], profile=ModelProfile(provider_managed_tools=frozenset({"web_search"})))
    Agent(script.model, builtin_tools=["web_search"]).run("x").close()
    assert [m.kind for m in script.requests[0].managed_tools] == ["web_search"]


def test_duplicated_or_unknown_builtin_tools_are_refused_at_construction() -> None:
    model = Script([]).model
    with pytest.raises(InvalidAgentConfiguration, match="twice"):
        Agent(model, builtin_tools=["web_search", ManagedTool("web_search", {"max_uses": 2})])
    with pytest.raises(InvalidAgentConfiguration, match="unknown provider-managed tool"):
        Agent(model, builtin_tools=["teleport"])
    with pytest.raises(InvalidAgentConfiguration, match="ManagedTool"):
        Agent(model, builtin_tools=[42])  # type: ignore[list-item]
    assert Agent(model, builtin_tools="web_fetch").builtin_tools == (ManagedTool("web_fetch"),)
