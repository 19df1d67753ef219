"""MCP per-call latency, side by side with the official ``mcp`` SDK (issue 33, item 3).

Every number is the median wall time of one ``tools/call`` (``double_3`` on the zigai peer,
``add`` on the SDK peer: both trivial) after a warm-up, in milliseconds, on 127.0.0.1:

* ``mcp_http_call_ms``: the SDK client against the zigai HTTP server (``mcp.serve_http``);
  peer: the same SDK client against the SDK's own Streamable HTTP server (uvicorn).
* ``mcp_http_client_call_ms``: the zigai client against the SDK HTTP server; peer: the SDK
  client against the same server.
* ``mcp_stdio_call_ms``: the zigai client and server over stdio; peer: the SDK client and
  server over stdio.

The servers are the interop peers of ``tests/support`` (the same catalogue on both sides).
The SDK (``mcp`` 2.x) is a dev extra; without it these workloads report 0.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

__all__ = ["WORKLOADS"]

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))  # the interop peers live in tests/support
CALLS = 40
WARMUP = 5


def _sdk_installed() -> bool:
    return importlib.util.find_spec("mcp") is not None and importlib.util.find_spec("uvicorn") is not None


def _median_ms(call: Callable[[], Any], calls: int) -> float:
    for _ in range(WARMUP):
        call()
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


ZIGAI_TOOL = ("double_3", {"x": 7})
SDK_TOOL = ("add", {"a": 3, "b": 4})


def _sdk_client_ms(target: Any, calls: int, tool: tuple[str, dict[str, Any]]) -> float:
    from mcp import Client

    async def main() -> float:
        async with Client(target, mode="auto", read_timeout_seconds=20) as client:
            async def one() -> Any:
                return await client.call_tool(*tool)

            for _ in range(WARMUP):
                await one()
            times = []
            for _ in range(calls):
                started = time.perf_counter()
                await one()
                times.append((time.perf_counter() - started) * 1000)
            return statistics.median(times)

    return asyncio.run(_bounded(main()))


async def _bounded(work: Awaitable[float]) -> float:
    return await asyncio.wait_for(work, 120)


def _zigai_client_ms(transport: Any, calls: int, tool: tuple[str, dict[str, Any]]) -> float:
    from zigai import mcp

    with mcp.Client(transport, default_timeout_ms=20_000) as client:
        return _median_ms(lambda: client.call_tool(*tool), calls)


def _repeat(measure: Callable[[], float], reps: int) -> float:
    if not _sdk_installed():
        return 0.0
    return statistics.median(measure() for _ in range(max(1, reps // 2)))


def zigai_server_http_ms(reps: int) -> float:
    from support.mcp_peers import build_zigai_server

    from zigai import mcp

    def measure() -> float:
        with mcp.serve_http(build_zigai_server(page_size=100)) as running:  # one tools/list page, like the SDK peer
            return _sdk_client_ms(running.url, CALLS, ZIGAI_TOOL)

    return _repeat(measure, reps)


def sdk_server_http_ms(reps: int) -> float:
    def measure() -> float:
        from support.mcp_sdk_peer import sdk_http_server

        with sdk_http_server() as url:
            return _sdk_client_ms(url, CALLS, SDK_TOOL)

    return _repeat(measure, reps)


def zigai_client_http_ms(reps: int) -> float:
    def measure() -> float:
        from support.mcp_sdk_peer import sdk_http_server

        from zigai import mcp
        from zigai.security import UrlPolicy

        with sdk_http_server() as url:
            return _zigai_client_ms(mcp.StreamableHttpTransport(url, url_policy=UrlPolicy.local_development()), CALLS,
                                    SDK_TOOL)

    return _repeat(measure, reps)


def zigai_stdio_ms(reps: int) -> float:
    def measure() -> float:
        from support.mcp_peers import stdio_command

        from zigai import mcp

        options = mcp.StdioOptions(stderr=mcp.StderrMode.discard, env={"PYTHONPATH": str(ROOT)})
        return _zigai_client_ms(mcp.StdioTransport(stdio_command("zigai-stdio"), options), CALLS, ZIGAI_TOOL)

    return _repeat(measure, reps)


def sdk_stdio_ms(reps: int) -> float:
    def measure() -> float:
        from mcp import StdioServerParameters
        from support.mcp_peers import stdio_command

        command = stdio_command("sdk-stdio")
        target = StdioServerParameters(command=command[0], args=command[1:],
                                       env={**os.environ, "PYTHONPATH": str(ROOT)})
        return _sdk_client_ms(target, CALLS, SDK_TOOL)

    return _repeat(measure, reps)


WORKLOADS: list[dict[str, Any]] = [
    {"name": "mcp_http_call_ms", "unit": "ms", "lower_is_better": True,
     "run": zigai_server_http_ms, "peer": sdk_server_http_ms},
    {"name": "mcp_http_client_call_ms", "unit": "ms", "lower_is_better": True,
     "run": zigai_client_http_ms, "peer": sdk_server_http_ms},
    {"name": "mcp_stdio_call_ms", "unit": "ms", "lower_is_better": True,
     "run": zigai_stdio_ms, "peer": sdk_stdio_ms},
]
