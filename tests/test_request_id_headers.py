"""``RunOptions.request_id`` on the wire: the documented client correlation header per adapter.

OpenAI documents ``x-client-request-id`` and the OpenAI-compatible APIs (the Chat Completions
family, xAI's Responses API) share it; Azure also documents ``x-ms-client-request-id``.
Anthropic, Gemini / Vertex AI, Mistral Conversations, Cohere and Bedrock document no
client-supplied correlation header, so their adapters send none rather than invent one (the
id still reaches hooks and telemetry through ``ModelRequest.request_id``).  Each adapter's
encoded request is captured at the transport; one end-to-end run goes over a real socket.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from support.mock_transport import MockResponse, MockTransport

from zigai.messages import RequestMessage
from zigai.model import ModelRequest
from zigai.provider import ProviderBadRequest
from zigai.providers import (
    anthropic,
    azure_openai,
    bedrock,
    cohere,
    google,
    groq,
    mistral,
    openai,
    vertex_ai,
    xai,
)
from zigai.providers import openai_compatible as oc

CORRELATION = ("x-client-request-id", "x-ms-client-request-id")
OPENAI = ("x-client-request-id",)
AZURE = ("x-client-request-id", "x-ms-client-request-id")

ADAPTERS: dict[str, tuple[Callable[[Any], Any], tuple[str, ...]]] = {
    "openai_responses": (lambda t: openai.Client("gpt-5", openai.Provider("key-0123456789", transport=t)), OPENAI),
    "openai_compatible": (lambda t: oc.Client("m", oc.Provider("key-0123456789", t, base_url="https://llm.example.com/v1"),
                                              fallback_profile="full"), OPENAI),
    "groq": (lambda t: groq.Client("llama-3.3-70b-versatile", groq.Provider("key-0123456789", t)), OPENAI),
    "xai_responses": (lambda t: xai.Client("grok-4", xai.Provider("key-0123456789", transport=t)), OPENAI),
    "azure_chat": (lambda t: azure_openai.ChatClient("prod", azure_openai.Provider("key-0123456789", t, resource="r")), AZURE),
    "azure_responses": (lambda t: azure_openai.ResponsesClient("prod", azure_openai.Provider("key-0123456789", t, resource="r")),
                        AZURE),
    "anthropic": (lambda t: anthropic.Client("claude-sonnet-4-5", anthropic.Provider("key-0123456789", t)), ()),
    "google": (lambda t: google.Client("gemini-2.5-flash", google.Provider("key-0123456789", t)), ()),
    "vertex_ai": (lambda t: vertex_ai.Client("gemini-2.5-flash", vertex_ai.Provider("key-0123456789", "proj", transport=t)), ()),
    "mistral_conversations": (lambda t: mistral.ConversationsClient(
        "mistral-small-latest", mistral.ConversationsProvider("key-0123456789", t)), ()),
    "cohere": (lambda t: cohere.ChatClient("command-a-03-2025", cohere.ChatProvider("key-0123456789", t)), ()),
    "bedrock": (lambda t: bedrock.Client("anthropic.claude-sonnet-4-5", bedrock.Provider("key-0123456789", "eu-west-1", t)), ()),
}


def _sent_headers(make: Callable[[Any], Any], request_id: str | None) -> dict[str, str]:
    seen: list[Any] = []

    def handler(request: Any) -> MockResponse:
        seen.append(request)
        return MockResponse.of_json({"error": {"message": "stop here"}}, status=400)

    client = make(MockTransport(handler))
    with pytest.raises(ProviderBadRequest):
        client.request(ModelRequest(messages=(RequestMessage.user("hi"),), request_id=request_id))
    (sent,) = seen
    return {name.lower(): value for name, value in sent.headers}


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_each_adapter_sends_the_request_id_under_its_documented_headers_only(adapter: str) -> None:
    make, expected = ADAPTERS[adapter]
    headers = _sent_headers(make, "req-7f3a")
    assert {name: headers[name] for name in CORRELATION if name in headers} == dict.fromkeys(expected, "req-7f3a")
    without = _sent_headers(make, None)
    assert not any(name in without for name in CORRELATION)


def test_an_agent_run_sends_the_id_on_every_attempt_over_a_real_socket() -> None:
    from support.loopback import LoopbackServer, Reply

    from zigai.agent import Agent, RunOptions
    from zigai.retry import RetryPolicy
    from zigai.security import UrlPolicy
    from zigai.transport import HttpTransport

    policy = UrlPolicy.local_development()
    answers = [Reply.of_json({"error": {"message": "busy"}}, status=503), Reply.of_json({
        "id": "r1", "object": "response", "status": "completed", "model": "grok-4",
        "output": [{"type": "message", "id": "m1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "ok", "annotations": []}]}],
        "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4},
    })]
    with LoopbackServer(lambda request: answers.pop(0)) as server, \
            HttpTransport(url_policy=policy, default_timeout_s=10.0) as transport:
        model = xai.Client("grok-4", xai.Provider("key-0123456789", transport=transport, base_url=f"{server.url}/v1",
                                                  url_policy=policy))
        agent = Agent(model, url_policy=policy, retry_policy=RetryPolicy(max_attempts=2, initial_delay_ms=0))
        with agent.run("hi", options=RunOptions(request_id="trace-9")) as result:
            assert result.output == "ok" and result.usage.attempts == 2
    assert [r.headers.get("x-client-request-id") for r in server.requests] == ["trace-9", "trace-9"]
