"""Rate-limit header values reach the before-retry hook and error observers as plain integers
(issue 31, defect 5), through a real provider talking to a real loopback server."""

from __future__ import annotations

from typing import Any

import pytest
from support.loopback import LoopbackServer, Received, Reply

from zigai.agent import Agent, ProviderErrorPolicy
from zigai.provider import RateLimited
from zigai.providers import openai_compatible as oc
from zigai.retry import RetryPolicy
from zigai.security import UrlPolicy
from zigai.transport import Headers, HttpTransport, extract_rate_limits
from zigai.transport.retry_after import MAX_RATE_LIMIT_VALUES

POLICY = UrlPolicy.local_development()
COMPLETION = {
    "id": "r1", "object": "chat.completion", "created": 0, "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}
OPENAI_HEADERS = (
    ("x-ratelimit-limit-requests", "60"),
    ("x-ratelimit-remaining-requests", "0"),
    ("X-RateLimit-Limit-Tokens", "150000"),
    ("x-ratelimit-remaining-tokens", "149984"),
    ("x-ratelimit-reset-requests", "1s"),  # a duration, not a count: left out
    ("retry-after", "0"),
)
ANTHROPIC_HEADERS = (
    ("anthropic-ratelimit-requests-limit", "50"),
    ("anthropic-ratelimit-requests-remaining", "0"),
    ("anthropic-ratelimit-input-tokens-remaining", "12000"),
    ("anthropic-ratelimit-requests-reset", "2026-12-05T06:00:00Z"),  # a date: left out
    ("retry-after", "0"),
)


def _agent(transport: HttpTransport, url: str, attempts: list[Any], views: list[Any]) -> Agent:
    provider = oc.Provider("key", transport, url_policy=POLICY, base_url=f"{url}/v1")
    model = oc.Client("m", provider, fallback_profile="full")
    return Agent(
        model, url_policy=POLICY,
        retry_policy=RetryPolicy(max_attempts=2, initial_delay_ms=0, before_retry=attempts.append),
        provider_error_policy=ProviderErrorPolicy(observer=views.append),
    )


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        (OPENAI_HEADERS, {
            "x-ratelimit-limit-requests": 60, "x-ratelimit-remaining-requests": 0,
            "x-ratelimit-limit-tokens": 150000, "x-ratelimit-remaining-tokens": 149984,
        }),
        (ANTHROPIC_HEADERS, {
            "anthropic-ratelimit-requests-limit": 50, "anthropic-ratelimit-requests-remaining": 0,
            "anthropic-ratelimit-input-tokens-remaining": 12000,
        }),
    ],
    ids=["openai_groq_style", "anthropic_style"],
)
@pytest.mark.parametrize("stream", [False, True], ids=["buffered", "streamed"])
def test_the_hook_and_the_observer_get_the_rate_limit_counts_as_ints(
    headers: tuple[tuple[str, str], ...], expected: dict[str, int], stream: bool
) -> None:
    answers = iter([Reply.of_json({"error": {"message": "slow down"}}, status=429, headers=headers)])

    def handler(request: Received) -> Reply:
        reply = next(answers, None)
        if reply is not None:
            return reply
        if request.json().get("stream"):
            return Reply.sse([
                '{"id":"r1","object":"chat.completion.chunk","created":0,"model":"m","choices":'
                '[{"index":0,"delta":{"role":"assistant","content":"hello"},"finish_reason":"stop"}]}',
                "[DONE]",
            ])
        return Reply.of_json(COMPLETION)

    attempts: list[Any] = []
    views: list[Any] = []
    with LoopbackServer(handler) as server, HttpTransport(url_policy=POLICY, default_timeout_s=10.0) as transport:
        agent = _agent(transport, server.url, attempts, views)
        if stream:
            with agent.run_stream("hi") as streamed:
                assert "".join(streamed.stream_text(delta=True)) == "hello"
        else:
            with agent.run("hi") as result:
                assert result.output == "hello"
    (attempt,) = attempts
    (view,) = views
    assert dict(attempt.rate_limits) == expected == dict(view.rate_limits)
    assert all(type(v) is int for v in attempt.rate_limits.values())
    assert isinstance(attempt.error, RateLimited) and attempt.error.rate_limits == expected


def test_extraction_is_bounded_and_keeps_only_plain_counts() -> None:
    many = [(f"x-ratelimit-n{i}", str(i)) for i in range(MAX_RATE_LIMIT_VALUES + 5)]
    assert len(extract_rate_limits(Headers.of(many))) == MAX_RATE_LIMIT_VALUES
    odd = Headers.of([
        ("x-ratelimit-huge", "9" * 19), ("x-ratelimit-max", "9" * 18), ("x-ratelimit-neg", "-1"),
        ("ratelimit-remaining", " 7 "), ("ratelimit-policy", "100;w=60"), ("content-length", "5"),
        ("x-ratelimit-" + "a" * 60, "1"), ("x-ratelimit-max", "1"),
    ])
    assert extract_rate_limits(odd) == {"x-ratelimit-max": 10**18 - 1, "ratelimit-remaining": 7}


def test_an_error_without_rate_limit_headers_carries_an_empty_mapping() -> None:
    import pickle

    error = RateLimited("slow down", status=429)
    assert error.rate_limits == {}
    copy = pickle.loads(pickle.dumps(RateLimited("x", status=429, rate_limits={"x-ratelimit-limit-requests": 1})))
    assert copy.rate_limits == {"x-ratelimit-limit-requests": 1}


def test_the_standard_transport_reports_the_counts_in_its_metadata() -> None:
    from zigai.transport import TransportRequest

    def handler(request: Received) -> Reply:
        return Reply.of_json({"ok": True}, headers=OPENAI_HEADERS)

    with LoopbackServer(handler) as server, HttpTransport(url_policy=POLICY, default_timeout_s=10.0) as transport:
        buffered = transport.send(TransportRequest("GET", f"{server.url}/v1/models"))
        with transport.stream_lines(TransportRequest("GET", f"{server.url}/v1/models")) as streamed:
            assert streamed.rate_limits == buffered.rate_limits
            streamed.read_body()
    assert buffered.rate_limits == {
        "x-ratelimit-limit-requests": 60, "x-ratelimit-remaining-requests": 0,
        "x-ratelimit-limit-tokens": 150000, "x-ratelimit-remaining-tokens": 149984,
    }
