"""The project's own recordings of real error sequences from a LiteLLM proxy.

``scripts/record_litellm.py`` puts a LiteLLM proxy (``litellm[proxy]==1.106.12``, installed
in a venv of its own — it is not a dependency of zigai) in front of our local llama-server and
drives one error sequence per wire protocol through our client with
:class:`~support.cassettes.RecordingTransport`, keeping the ``retry-after`` response header.
Every status comes from the proxy's own code paths, none is written by hand:

1. **500**: the model group's only deployment points at llama-server before it is started, so
   the upstream connection is refused (``InternalServerError``).
2. **429 with Retry-After**: that failure puts the deployment in cooldown
   (``allowed_fails_policy`` 0, ``cooldown_time`` :data:`COOLDOWN_S`); the next request finds
   no deployment and the proxy answers 429 with ``retry-after`` set to the cooldown (not on
   its Anthropic route: :data:`COOLDOWN_RETRY_AFTER_S`).
3. **200**: llama-server is started and the cooldown waited out.
4. **503 with Retry-After**: the proxy admits one request at a time
   (``max_in_flight_requests_per_worker`` 1, no queue); while another request is held by an
   upstream that accepts and never answers, ours is refused with ``retry-after: 1``.
5. **200**: that upstream is closed and the proxy admits again.
6. **400 with a code**: a model name the proxy does not route (:data:`UNKNOWN_MODEL`).

The provider test modules replay these strictly: the mapped error classes, ``retry_after_s``,
and that :class:`~zigai.retry.RetryPolicy` retries the 5xx and the 429s (honouring the recorded
Retry-After, with the waits recorded instead of slept) but not the 400.

This is test support: the ``zigai`` package never imports it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support.cassettes import ReplayTransport
from zigai.control import CancellationToken, RunControl
from zigai.messages import RequestMessage
from zigai.model import ModelRequest
from zigai.provider import ProviderBadRequest, ProviderServerError, RateLimited
from zigai.retry import RetryAttempt, RetryPolicy, run_with_retries
from zigai.security import UrlPolicy
from zigai.settings import ModelSettings

__all__ = [
    "ADMISSION_RETRY_S", "BASE_URL", "COOLDOWN_RETRY_AFTER_S", "COOLDOWN_S", "KEY", "LLAMA_PORT",
    "MODEL_ID", "PORT", "PROTOCOLS", "STALL_PORT", "STATUSES", "UNKNOWN_MODEL", "build_client",
    "error_cassette", "error_request", "litellm_check",
]

ROOT = Path(__file__).resolve().parent.parent.parent
CASSETTES = ROOT / "cassettes" / "litellm"
#: The proxy's fixed port (the recordings' request URLs name it); recording needs it free.
PORT = 8095
#: Where the deployment expects llama-server, and the upstream that never answers.
LLAMA_PORT = 8096
STALL_PORT = 8097
BASE_URL = f"http://127.0.0.1:{PORT}"
#: The proxy's model group (named like llama-server's alias) and a name it does not route.
MODEL_ID = "gemma-3-270m"
UNKNOWN_MODEL = "no-such-model"
#: The replay's API key (recording sends the proxy's real master key, which never reaches a cassette).
KEY = "sk-litellm-not-a-secret"
#: The deployment's cooldown, which the proxy sends back as the 429's Retry-After -- except
#: on its Anthropic route, whose 429 (in 1.106.12) carries no Retry-After header at all.
COOLDOWN_S = 3
COOLDOWN_RETRY_AFTER_S: dict[str, int | None] = {"responses": COOLDOWN_S, "chat": COOLDOWN_S,
                                                 "anthropic": None}
#: What the proxy's admission control sends as the 503's Retry-After.
ADMISSION_RETRY_S = 1
STATUSES = [500, 429, 200, 503, 200, 400]
PROTOCOLS = ("responses", "chat", "anthropic")
PROMPT = "Reply with one word: pong"
SETTINGS = ModelSettings(max_tokens=16)


def build_client(protocol: str, transport: Any, *, model: str = MODEL_ID, api_key: str = KEY) -> Any:
    """Our client for one of the proxy's routes (``/v1/responses``, ``/v1/chat/completions``,
    ``/v1/messages``)."""
    policy = UrlPolicy.local_development()
    api_root = f"{BASE_URL}/v1"
    if protocol == "responses":
        from zigai.providers import openai

        return openai.Client(model, openai.Provider(api_key, transport=transport, base_url=api_root,
                                                    url_policy=policy))
    if protocol == "chat":
        from zigai.providers import openai_compatible

        return openai_compatible.Client(model, openai_compatible.Provider(
            api_key, transport=transport, base_url=api_root, name="litellm", url_policy=policy))
    if protocol == "anthropic":
        from zigai.providers import anthropic

        return anthropic.Client(model, anthropic.Provider(
            api_key, transport=transport, base_url=api_root, url_policy=policy))
    raise ValueError(f"unknown protocol {protocol!r}; expected one of {PROTOCOLS}")


def error_request() -> ModelRequest:
    return ModelRequest(messages=(RequestMessage.user(PROMPT),), settings=SETTINGS)


def error_cassette(protocol: str) -> Path:
    return CASSETTES / protocol / "error_sequence.yaml"


class _NoWaitToken(CancellationToken):
    """A token whose waits return at once and are kept, so a retry's sleep costs no time."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None) -> bool:
        self.waits.append(timeout)
        return False


def _sequence(protocol: str, transport: ReplayTransport) -> None:
    client = build_client(protocol, transport)
    request = error_request()
    with pytest.raises(ProviderServerError) as refused:
        client.request(request)
    assert refused.value.status == 500 and refused.value.retry_after_s is None
    with pytest.raises(RateLimited) as limited:
        client.request(request)
    assert limited.value.status == 429
    assert limited.value.retry_after_s == COOLDOWN_RETRY_AFTER_S[protocol]
    assert client.request(request).text.strip()
    with pytest.raises(ProviderServerError) as busy:
        client.request(request)
    assert busy.value.status == 503 and busy.value.retry_after_s == ADMISSION_RETRY_S
    assert client.request(request).text.strip()
    with pytest.raises(ProviderBadRequest) as bad:
        build_client(protocol, transport, model=UNKNOWN_MODEL).request(request)
    # the OpenAI-shaped routes send the status as error.code; Anthropic's error has a type only
    assert bad.value.status == 400
    assert bad.value.code == ("invalid_request_error" if protocol == "anthropic" else "400")
    assert UNKNOWN_MODEL in str(bad.value)


def _retried(protocol: str, transport: ReplayTransport) -> None:
    request = error_request()
    token = _NoWaitToken()
    control = RunControl.start(60_000, token=token)
    policy = RetryPolicy(max_attempts=3, initial_delay_ms=200, jitter=False)
    retried: list[RetryAttempt] = []

    def attempt(model: str) -> Any:
        client = build_client(protocol, transport, model=model)
        return run_with_retries(lambda n, key: client.request(request), policy=policy,
                                control=control, on_retry=retried.append)

    assert attempt(MODEL_ID).text.strip()  # 500, then 429 (Retry-After 3 or none), then 200
    assert attempt(MODEL_ID).text.strip()  # 503 (Retry-After 1), then 200
    with pytest.raises(ProviderBadRequest):  # not retryable: one attempt, no wait
        attempt(UNKNOWN_MODEL)
    told = COOLDOWN_RETRY_AFTER_S[protocol]
    cooldown_wait = 0.4 if told is None else told  # the second backoff step, or the server's word
    assert [(a.attempt, a.category, a.planned_delay_s, a.retry_after_s) for a in retried] == [
        (1, "server_error", 0.2, None),
        (2, "rate_limit", cooldown_wait, told),
        (1, "server_error", ADMISSION_RETRY_S, ADMISSION_RETRY_S),
    ]
    assert token.waits == [0.2, cooldown_wait, ADMISSION_RETRY_S]


def litellm_check(protocol: str) -> Any:
    """A ``pytest.param`` replaying ``protocol``'s recorded sequence twice: status by status
    (each mapped error and its Retry-After), then through ``RetryPolicy``."""

    def check() -> None:
        path = error_cassette(protocol)
        for run in (_sequence, _retried):
            with ReplayTransport.load(path) as transport:
                run(protocol, transport)
                transport.assert_all_consumed()

    return pytest.param(check, id=f"litellm-{protocol}")

