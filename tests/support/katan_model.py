"""The project's own recordings of llm-katan, for the wire protocols llama-server does not speak.

llm-katan (dev extra, ``llm-katan==0.22.0``) is a real multi-protocol test server; with
``--backend echo`` it answers every request with an echo of what it extracted, and whenever a
request declares tools it calls the first one with arguments generated from its schema.
``scripts/record_katan.py`` starts it on :data:`PORT` of 127.0.0.1, drives each :data:`CASES`
entry through our provider client with :class:`~support.cassettes.RecordingTransport`, and
writes ``cassettes/katan/<protocol>/<scenario>.yaml``; the provider test modules replay them
strictly through :func:`katan_cases`.

Because katan calls a declared tool on every turn, a tool loop offers the tool only until its
return is in the history (``Replay.tools_until_returned``).  Every check is structural — katan
echoes, so there is no wording to check.

This is test support: the ``zigai`` package never imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support.cassettes import ReplayTransport
from support.replays import Replay, assert_structured_answer, corpus_file
from zigai.control import RunControl
from zigai.messages import RequestMessage, ResponseMessage
from zigai.model import TEXT_OUTPUT, ModelRequest, OutputFormat, ToolDefinition
from zigai.provider import ProviderServerError, RateLimited
from zigai.retry import RetryAttempt, RetryPolicy, run_with_retries
from zigai.security import UrlPolicy
from zigai.settings import ModelSettings

__all__ = [
    "BASE_URL", "CASES", "ERROR_PHASES", "ERROR_PROTOCOLS", "PORT", "KatanCase", "build_client",
    "cassette_path", "check_error_sequence", "error_sequence_checks", "error_cassette", "error_request", "katan_cases",
]

ROOT = Path(__file__).resolve().parent.parent.parent
CASSETTES = ROOT / "cassettes" / "katan"
#: The recordings' fixed port (their request URLs name it); recording needs it free.
PORT = 8093
BASE_URL = f"http://127.0.0.1:{PORT}"
SERVED_MODEL = "katan-echo"
PROMPT = "Reply with one word: pong"
TOOL_PROMPT = "What is the weather in Madrid?"
# llm-katan 0.22.0 reads a Gemini key only from Authorization or ?key= (the documented header
# is x-goog-api-key, which our adapter sends too); tests/test_interop_llm_katan.py pins that.
GEMINI_AUTH = (("Authorization", "Bearer katan-gemini-key"),)
SETTINGS = ModelSettings(max_tokens=64, temperature=0.0)

WEATHER = ToolDefinition(
    "weather", "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
     "additionalProperties": False},
)
WEATHER_RESULT = {"temperature_c": 31}
STRUCTURED = OutputFormat("json_schema", name="out", schema={
    "type": "object", "properties": {"response": {"type": "string"}}, "required": ["response"],
    "additionalProperties": False})


def build_client(protocol: str, transport: Any, base_url: str = BASE_URL) -> Any:
    """Our client for one of katan's protocols at ``base_url``."""
    policy = UrlPolicy.local_development()
    if protocol == "google":
        from zigai.providers import google

        return google.Client("gemini-2.5-flash", google.Provider(
            "katan-gemini-key", transport, base_url=f"{base_url}/v1beta", url_policy=policy,
            headers=GEMINI_AUTH))
    if protocol == "groq":
        from zigai.providers import groq

        return groq.Client("llama-3.3-70b-versatile", groq.Provider(
            "katan-groq-key", transport, base_url=f"{base_url}/v1", url_policy=policy))
    if protocol == "anthropic":
        from zigai.providers import anthropic

        return anthropic.Client("claude-sonnet-4-5", anthropic.Provider(
            "katan-anthropic-key", transport, base_url=f"{base_url}/v1", url_policy=policy))
    if protocol == "chat":
        from zigai.providers import openai_compatible

        return openai_compatible.Client("katan-echo", openai_compatible.Provider(
            "katan-key", transport, base_url=f"{base_url}/v1", name="katan", url_policy=policy))
    raise ValueError(f"unknown katan protocol {protocol!r}")


#: The error sequence's phases: llm-katan's failure flags, then how many identical requests
#: that server answers.  ``--rate-limit-after 1`` answers the first and refuses the next with
#: 429; ``--error-rate 1.0`` answers 500; a plain server answers again.  Recorded in this
#: order into one cassette, so a replay sees success, 429, 500, success.
ERROR_PHASES: tuple[tuple[tuple[str, ...], int], ...] = (
    (("--rate-limit-after", "1"), 2),
    (("--error-rate", "1.0"), 1),
    ((), 1),
)
#: The protocols with a recorded error sequence (llm-katan does not serve the Responses API).
ERROR_PROTOCOLS = ("google", "anthropic", "chat")


def error_request() -> ModelRequest:
    return ModelRequest(messages=(RequestMessage.user(PROMPT),), settings=SETTINGS)


def error_cassette(protocol: str) -> Path:
    return cassette_path(protocol, "error_sequence")


def error_sequence_checks(protocol: str, corpus_relative: str,
                          corpus_check: Callable[[Path], None]) -> list[Any]:
    """``pytest.param`` checks for a provider's error-sequence test: our recording of
    ``protocol`` always, the corpus's ``corpus_relative`` with ``corpus_check`` when present."""
    checks = [pytest.param(lambda: check_error_sequence(protocol), id=f"katan-{protocol}")]
    path = corpus_file(corpus_relative)
    if path is not None:
        checks.append(pytest.param(lambda: corpus_check(path),
                                   id="corpus-" + corpus_relative.removesuffix(".yaml")))
    return checks


def check_error_sequence(protocol: str) -> None:
    """Replay ``protocol``'s recorded error sequence twice: each status maps to its error
    (success, ``RateLimited``, ``ProviderServerError``, success), and our retry policy turns
    the 429 and the 500 into retries that end in the recorded success."""
    request = error_request()
    with ReplayTransport.load(error_cassette(protocol)) as transport:
        client = build_client(protocol, transport)
        assert client.request(request).text.strip()
        with pytest.raises(RateLimited) as limited:
            client.request(request)
        assert limited.value.status == 429
        with pytest.raises(ProviderServerError) as failed:
            client.request(request)
        assert failed.value.status == 500
        assert client.request(request).text.strip()
        transport.assert_all_consumed()
    retried: list[RetryAttempt] = []
    with ReplayTransport.load(error_cassette(protocol)) as transport:
        client = build_client(protocol, transport)
        client.request(request)
        response = run_with_retries(
            lambda attempt, key: client.request(request),
            policy=RetryPolicy(max_attempts=3, initial_delay_ms=0, jitter=False),
            control=RunControl.start(10_000), on_retry=retried.append)
        assert response.text.strip()
        assert [(a.attempt, a.category) for a in retried] == [(1, "rate_limit"), (2, "server_error")]
        transport.assert_all_consumed()


@dataclass(frozen=True)
class KatanCase:
    protocol: str
    name: str
    streamed: bool = False
    tool: bool = False
    structured: bool = False


# No streamed Gemini tool loop: llm-katan 0.22.0 answers a streamGenerateContent request that
# declares tools with one plain JSON body instead of an event stream, so there is no stream.
CASES = (
    KatanCase("google", "buffered_text"),
    KatanCase("google", "streamed_text", streamed=True),
    KatanCase("google", "tool_loop", tool=True),
    KatanCase("google", "structured_output", structured=True),
    KatanCase("groq", "buffered_text"),
    KatanCase("groq", "tool_loop", tool=True),
)


def cassette_path(protocol: str, name: str) -> Path:
    return CASSETTES / protocol / f"{name}.yaml"


def _structured_echo(responses: tuple[ResponseMessage, ...]) -> None:
    value = assert_structured_answer(responses)
    assert set(value) == {"response"} and isinstance(value["response"], str), value


def replay_for(case: KatanCase) -> Replay:
    """The client-level replay of ``case`` (the recording script drives the same object)."""

    def client(transport: Any, protocol: str = case.protocol) -> Any:
        return build_client(protocol, transport)

    return Replay(
        id=f"katan-{case.protocol}-{case.name}", path=cassette_path(case.protocol, case.name),
        client=client, messages=(RequestMessage.user(TOOL_PROMPT if case.tool else PROMPT),),
        tools=(WEATHER,) if case.tool else (),
        output_format=STRUCTURED if case.structured else TEXT_OUTPUT,
        settings=SETTINGS, streamed=case.streamed, tool_result=WEATHER_RESULT,
        extra_check=_structured_echo if case.structured else None,
        tools_until_returned=case.tool,
    )


def katan_cases(protocol: str, names: list[str]) -> list[Replay]:
    """Our llm-katan recordings of ``names`` for ``protocol``, as client-level replays."""
    by_key = {(c.protocol, c.name): c for c in CASES}
    return [replay_for(by_key[(protocol, name)]) for name in names]
