"""Local model servers through model strings: loopback base URLs, ``openai_compatible:``,
and the retry default of string-named models (issue 12).

Each test talks to a real HTTP server on 127.0.0.1 that the test starts and stops."""

from __future__ import annotations

import json

import pytest
from support.loopback import LoopbackServer, Reply

from zigai.agent import Agent
from zigai.models import MissingCredentials, infer_model
from zigai.models.infer import local_policy_for
from zigai.retry import RetryPolicy
from zigai.security import UrlPolicyViolation

CHAT_REPLY = {
    "id": "c1", "object": "chat.completion", "model": "local-model",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "pong"}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}
RESPONSES_REPLY = {
    "id": "resp_1", "object": "response", "model": "local-model", "status": "completed",
    "output": [{"type": "message", "id": "m1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "pong", "annotations": []}]}],
    "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4},
}
MESSAGES_REPLY = {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "local-model",
    "content": [{"type": "text", "text": "pong"}], "stop_reason": "end_turn",
    "usage": {"input_tokens": 3, "output_tokens": 1},
}


def _json(body: object, status: int = 200) -> Reply:
    return Reply.of_json(body, status)


def _rate_limited() -> Reply:
    return Reply.of_json({"error": {"message": "slow down"}}, 429, (("Retry-After", "0"),))


@pytest.mark.parametrize(("url", "local"), [
    ("http://127.0.0.1:8080/v1", True), ("http://localhost:11434/v1", True),
    ("http://[::1]:8000/v1", True), ("http://127.9.9.9/v1", True),
    ("http://192.168.1.5:8080/v1", False), ("https://api.openai.com/v1", False),
    ("http://localhost.example/v1", False), ("not a url", False),
])
def test_only_loopback_hosts_get_the_local_policy(url: str, local: bool) -> None:
    policy = local_policy_for(url)
    assert (policy is not None) is local
    if policy is not None:
        assert policy.allows(url)
        assert not policy.allows("http://10.0.0.1/v1"), "the local policy is loopback-only"


@pytest.mark.parametrize(("prefix", "variable", "path", "reply"), [
    ("openai", "OPENAI_BASE_URL", "/v1/responses", RESPONSES_REPLY),
    ("anthropic", "ANTHROPIC_BASE_URL", "/v1/messages", MESSAGES_REPLY),
    ("openai_compatible", "OPENAI_COMPATIBLE_BASE_URL", "/v1/chat/completions", CHAT_REPLY),
])
def test_a_loopback_base_url_reaches_the_local_server_without_a_key(
    prefix: str, variable: str, path: str, reply: dict[str, object]
) -> None:
    with LoopbackServer(lambda request: _json(reply)) as server:
        env = {variable: f"{server.url}/v1"}
        agent = Agent(infer_model(f"{prefix}:local-model", env=env))
        with agent.run("ping") as result:
            assert result.output == "pong"
    assert [r.target for r in server.requests] == [path]
    assert json.loads(server.requests[0].body)["model"] == "local-model"


def test_a_given_key_is_still_sent_to_a_local_server() -> None:
    with LoopbackServer(lambda request: _json(CHAT_REPLY)) as server:
        env = {"OPENAI_COMPATIBLE_BASE_URL": f"{server.url}/v1",
               "OPENAI_COMPATIBLE_API_KEY": "sk-local-123"}
        with Agent(infer_model("openai_compatible:m", env=env)).run("ping") as result:
            assert result.output == "pong"
    assert server.requests[0].headers.get("authorization") == "Bearer sk-local-123"


def test_a_remote_base_url_keeps_the_key_requirement_and_the_https_policy() -> None:
    with pytest.raises(MissingCredentials, match="OPENAI_API_KEY"):
        infer_model("openai:gpt-5-mini", env={"OPENAI_BASE_URL": "https://proxy.example/v1"})
    with pytest.raises(UrlPolicyViolation):  # a LAN address is not loopback: refused up front
        infer_model("openai:gpt-5-mini", env={"OPENAI_BASE_URL": "http://192.168.1.5/v1",
                                               "OPENAI_API_KEY": "k"})


def test_openai_compatible_needs_its_base_url_variable() -> None:
    with pytest.raises(MissingCredentials, match="OPENAI_COMPATIBLE_BASE_URL") as info:
        infer_model("openai_compatible:m", env={})
    assert info.value.variables == ("OPENAI_COMPATIBLE_BASE_URL",)


def test_string_models_retry_by_default_and_model_values_do_not() -> None:
    assert Agent("test").retry_policy is None
    assert Agent(infer_model("test")).retry_policy is None
    env_agent = Agent(infer_model("openai_compatible:m", env={
        "OPENAI_COMPATIBLE_BASE_URL": "http://127.0.0.1:9/v1"}))
    assert env_agent.retry_policy is None


def test_a_string_model_retries_a_429_then_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    replies = [_rate_limited(), _json(CHAT_REPLY)]
    with LoopbackServer(lambda request: replies.pop(0)) as server:
        monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", f"{server.url}/v1")
        agent = Agent("openai_compatible:m")
        assert agent.retry_policy == RetryPolicy()
        with agent.run("ping") as result:
            assert result.output == "pong"
        assert len(server.requests) == 2
        off = Agent("openai_compatible:m", retry_policy=RetryPolicy.no_retry())
        replies[:] = [_rate_limited()]
        from zigai.provider import RateLimited

        with pytest.raises(RateLimited):
            off.run("ping")
        assert len(server.requests) == 3
