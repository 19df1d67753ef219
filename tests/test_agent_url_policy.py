"""Agent.url_policy governs model endpoints too: a URL must pass the agent's policy *and* the
provider's (the stricter wins), checked before any socket opens (issue 31, defect 3).

The refused cases point a real provider at a real listening socket on 127.0.0.1 and assert
that no connection ever reached it; the allowed case completes a run over that socket.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from support.loopback import LoopbackServer, Received, Reply
from support.silent_socket import no_connection, silent_listener

from zigai.agent import Agent, InvalidAgentConfiguration
from zigai.messages import RequestMessage
from zigai.model import ModelRequest
from zigai.provider import ProviderHttpRequest
from zigai.providers import openai_compatible as oc
from zigai.security import UrlPolicy, UrlPolicyViolation, UrlRejection
from zigai.transport import HttpTransport

LOCAL = UrlPolicy.local_development()
COMPLETION = {
    "id": "r1", "object": "chat.completion", "created": 0, "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    with silent_listener() as sock:
        yield sock


def _model(port: int, provider_policy: UrlPolicy, transport: HttpTransport) -> oc.Client:
    provider = oc.Provider("key", transport, url_policy=provider_policy, base_url=f"http://127.0.0.1:{port}/v1")
    return oc.Client("m", provider, fallback_profile="full")


@pytest.mark.parametrize(
    ("agent_policy", "provider_policy", "reason"),
    [
        (UrlPolicy.local_development(allowed_hosts=["models.example"]), LOCAL, UrlRejection.host_not_allowed),
        (UrlPolicy(), LOCAL, UrlRejection.scheme_not_allowed),
        (UrlPolicy.local_development(allowed_hosts=["localhost"]), LOCAL, UrlRejection.host_not_allowed),
    ],
    ids=["agent_allowlist_names_another_host", "agent_strict_policy_refuses_http", "exact_host_match"],
)
def test_the_stricter_policy_refuses_the_model_endpoint_before_any_socket_opens(
    listener: socket.socket, agent_policy: UrlPolicy, provider_policy: UrlPolicy, reason: UrlRejection
) -> None:
    port = listener.getsockname()[1]
    with HttpTransport(url_policy=LOCAL, default_timeout_s=5.0) as transport:
        agent = Agent(_model(port, provider_policy, transport), url_policy=agent_policy)
        with pytest.raises(UrlPolicyViolation) as caught:
            agent.run("hi")
        assert caught.value.reason is reason
        with pytest.raises(UrlPolicyViolation):  # the streaming route checks the same way
            with agent.run_stream("hi") as stream:
                for _ in stream:
                    pass
    assert no_connection(listener)


def test_a_direct_model_request_carries_the_callers_policy(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    with HttpTransport(url_policy=LOCAL, default_timeout_s=5.0) as transport:
        model = _model(port, LOCAL, transport)
        only_other = UrlPolicy.local_development(allowed_hosts=["models.example"])
        with pytest.raises(UrlPolicyViolation):
            model.request(ModelRequest((RequestMessage.user("hi"),), url_policy=only_other))
    assert no_connection(listener)
    with pytest.raises(TypeError, match="UrlPolicy"):
        ModelRequest((RequestMessage.user("hi"),), url_policy="https://x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="UrlPolicy"):
        ProviderHttpRequest("responses", url_policy="https://x")  # type: ignore[arg-type]


def test_when_both_policies_allow_the_endpoint_the_run_reaches_it() -> None:
    def handler(request: Received) -> Reply:
        return Reply.of_json(COMPLETION)

    with LoopbackServer(handler) as server, HttpTransport(url_policy=LOCAL, default_timeout_s=10.0) as transport:
        port = int(server.url.rsplit(":", 1)[1])
        agent_policy = UrlPolicy.local_development(allowed_hosts=["127.0.0.1"])
        with Agent(_model(port, LOCAL, transport), url_policy=agent_policy).run("hi") as result:
            assert result.output == "hello"
        # Without an agent policy the provider's own policy alone governs the endpoint.
        with Agent(_model(port, LOCAL, transport)).run("hi") as result:
            assert result.output == "hello"
        assert len(server.requests) == 2


def test_agent_url_policy_must_be_a_url_policy() -> None:
    from zigai.testing import TestModel

    with pytest.raises(InvalidAgentConfiguration, match="url_policy"):
        Agent(TestModel(), url_policy={"allow_http": True})  # type: ignore[arg-type]
