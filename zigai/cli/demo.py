"""``zigai demo``: a complete streamed weather tool loop through the real HTTP stack, offline.

The command starts :class:`~zigai.cli.replay.ReplayServer` on 127.0.0.1 (ephemeral port) with
the project's own cassette ``cassettes/demo_weather_stream.yaml``, points an OpenAI Responses
``Provider`` at it (plain HTTP to loopback is allowed only by the demo's explicit
:class:`~zigai.security.UrlPolicy`), and streams an agent run that calls the local
``get_weather`` tool once and then answers.  Everything between the agent and the socket is
production code: ``HttpTransport`` (urllib3), the SSE decoder, the Responses stream decoder.
The server is stopped before the command returns, and the replay is strict: a request that
differs from the cassette fails the demo (exit code 1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO, TypedDict

from zigai.cli.errors import CliUsageError, ExitCode

__all__ = ["CASSETTE_NAME", "DEMO_PROMPT", "DEMO_SYSTEM", "Weather", "get_weather", "cassette_path",
           "demo_command"]

CASSETTE_NAME = "demo_weather_stream.yaml"
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


def cassette_path() -> Path:
    """``cassettes/demo_weather_stream.yaml`` of the source checkout this package runs from."""
    path = Path(__file__).resolve().parents[2] / "cassettes" / CASSETTE_NAME
    if not path.is_file():
        raise CliUsageError(
            f"the demo cassette {CASSETTE_NAME} was not found next to the package "
            "(install zigai from a source checkout: pip install -e .)"
        )
    return path


def build_demo_agent(base_url: str, wrap_model: Any = None) -> Any:
    """The demo agent: OpenAI Responses over HttpTransport to ``base_url`` + the weather tool."""
    from zigai.agent import Agent, RunLimits
    from zigai.providers import openai
    from zigai.reflect import tool
    from zigai.security import UrlPolicy

    policy = UrlPolicy(allow_http=True, allow_local_network=True,
                       allowed_hosts=frozenset({"127.0.0.1"}))
    provider = openai.Provider("zigai-demo-not-a-secret", base_url=f"{base_url}/v1", url_policy=policy)
    model: Any = openai.Client(DEMO_MODEL, provider)
    if wrap_model is not None:
        model = wrap_model(model)
    return Agent(
        model,
        instructions=DEMO_SYSTEM,
        tools=[tool("get_weather", None, get_weather)],
        limits=RunLimits(max_requests=4),
        run_timeout_ms=30_000,
        name="zigai-demo",
    )


def demo_command(out: TextIO, err: TextIO) -> int:
    from zigai.cli.progress import Progress, StreamingModel
    from zigai.cli.replay import ReplayServer, load_exchanges

    path = cassette_path()
    exchanges = load_exchanges(path.read_text(encoding="utf-8"), source=str(path))
    progress = Progress(out, err)
    with ReplayServer(exchanges) as server:
        err.write(f"zigai demo: replaying cassettes/{CASSETTE_NAME} on {server.base_url} "
                  "(HttpTransport + SSE + OpenAI Responses adapter)\n")
        agent = build_demo_agent(server.base_url, lambda model: StreamingModel(model, progress))
        progress.event("prompt", DEMO_PROMPT)
        try:
            with agent.run(DEMO_PROMPT) as result:
                usage = result.usage
        except Exception:
            server.check()  # a cassette mismatch explains the failure better
            raise
        server.check()
    out.write("\n")
    progress.event("done", f"{usage.requests} requests, {usage.tool_calls} tool call, "
                           f"{usage.input_tokens} input + {usage.output_tokens} output tokens")
    return ExitCode.ok
