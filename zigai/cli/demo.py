"""``zigai demo``: a complete streamed weather tool loop through the real HTTP stack, offline.

The command starts :class:`~zigai.cli.replay.ReplayServer` on 127.0.0.1 (ephemeral port) with
the project's own cassette, shipped as package data (``zigai/cli/data/demo_weather_stream.yaml``,
read with :mod:`importlib.resources`, so any install can run the demo), points an OpenAI
Responses ``Provider`` at it (plain HTTP to loopback is allowed only by the demo's explicit
:class:`~zigai.security.UrlPolicy`), and consumes ``Agent.run_stream`` — text deltas on stdout,
tool progress on stderr — for a run that calls the local ``get_weather`` tool once and answers.  Everything between the agent and the socket is
production code: ``HttpTransport`` (urllib3), the SSE decoder, the Responses stream decoder.
The server is stopped before the command returns, and the replay is strict: a request that
differs from the cassette fails the demo (exit code 1).
"""

from __future__ import annotations

from typing import Any, TextIO, TypedDict

from zigai.cli.errors import CliUsageError, ExitCode

__all__ = ["CASSETTE_PACKAGE", "CASSETTE_DIR", "CASSETTE_NAME", "CASSETTE_RESOURCE", "DEMO_PROMPT", "DEMO_SYSTEM",
           "Weather", "get_weather", "cassette_text", "build_demo_agent", "demo_command"]

CASSETTE_PACKAGE = "zigai.cli"
CASSETTE_DIR = "data"
CASSETTE_NAME = "demo_weather_stream.yaml"
CASSETTE_RESOURCE = f"zigai/cli/{CASSETTE_DIR}/{CASSETTE_NAME}"
DEMO_PROMPT = "What is the weather in Lisbon right now?"
DEMO_SYSTEM = "Answer in one short sentence."
DEMO_MODEL = "gpt-5-mini"


class Weather(TypedDict):
    city: str
    temperature_c: int
    conditions: str


def get_weather(city: str) -> Weather:
    """Current weather for a city (a fixed local table: the demo makes no real lookups)."""
    return {"city": city, "temperature_c": 19, "conditions": "light rain"}


def cassette_text() -> str:
    """The demo cassette, read from the installed package's data (works for any install)."""
    from importlib import resources

    try:
        cassette = resources.files(CASSETTE_PACKAGE) / CASSETTE_DIR / CASSETTE_NAME
        return cassette.read_text(encoding="utf-8")
    except (OSError, ModuleNotFoundError) as exc:
        raise CliUsageError(
            f"the demo cassette {CASSETTE_RESOURCE} is missing from this zigai installation: {exc}"
        ) from None


def build_demo_agent(base_url: str) -> Any:
    """The demo agent: OpenAI Responses over HttpTransport to ``base_url`` + the weather tool."""
    from zigai.agent import Agent, RunLimits
    from zigai.providers import openai
    from zigai.reflect import tool
    from zigai.security import UrlPolicy

    policy = UrlPolicy(allow_http=True, allow_local_network=True,
                       allowed_hosts=frozenset({"127.0.0.1"}))
    provider = openai.Provider("zigai-demo-not-a-secret", base_url=f"{base_url}/v1", url_policy=policy)
    return Agent(
        openai.Client(DEMO_MODEL, provider),
        instructions=DEMO_SYSTEM,
        tools=[tool("get_weather", None, get_weather)],
        limits=RunLimits(max_requests=4),
        run_timeout_ms=30_000,
        name="zigai-demo",
    )


def demo_command(out: TextIO, err: TextIO) -> int:
    from zigai.cli.progress import Progress
    from zigai.cli.replay import ReplayServer, load_exchanges

    exchanges = load_exchanges(cassette_text(), source=CASSETTE_RESOURCE)
    progress = Progress(out, err)
    with ReplayServer(exchanges) as server:
        err.write(f"zigai demo: replaying {CASSETTE_RESOURCE} on {server.base_url} "
                  "(HttpTransport + SSE + OpenAI Responses adapter)\n")
        agent = build_demo_agent(server.base_url)
        progress.event("prompt", DEMO_PROMPT)
        try:
            with agent.run_stream(DEMO_PROMPT) as stream:
                for event in stream:
                    progress.handle(event)
                with stream.result() as result:
                    usage = result.usage
        except Exception:
            server.check()  # a cassette mismatch explains the failure better
            raise
        server.check()
    out.write("\n")
    progress.event("done", f"{usage.requests} requests, {usage.tool_calls} tool call, "
                           f"{usage.input_tokens} input + {usage.output_tokens} output tokens")
    return ExitCode.ok
