"""Streamed-run workloads: 16,000 text deltas of 1 KB, to show accumulation is linear.

``stream_16k_deltas_per_s`` serves one Chat Completions SSE body (16,000 ``chat.completion.chunk``
events, each carrying a 1,024-character ``delta.content``, then ``finish_reason`` and
``[DONE]``) from a 127.0.0.1 HTTP server and consumes the model stream (``client.stream``)
over the standard ``HttpTransport`` and the ``openai_compatible`` adapter: real socket, real
SSE decode, the adapter's part bookkeeping and the stream's accumulation into the final
``ResponseMessage``.  A quadratic accumulation (one new part
string per delta) copies ~128 GB here and takes minutes; linear takes well under a second.

The peer is PydanticAI's ``run_stream_sync`` over a ``FunctionModel`` streaming the same
16,000 deltas: PydanticAI's own SSE path needs the ``openai`` SDK, which the dev extra does
not install, so the peer number covers its accumulation and event loop but no wire decode.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["WORKLOADS", "sse_body"]

DELTAS = 16_000
DELTA_CHARS = 1024
_PIECE = "x" * (DELTA_CHARS - 6)


def _delta(n: int) -> str:
    return f"{n:05d} " + _PIECE  # 1,024 characters, distinct per delta


def sse_body(deltas: int = DELTAS) -> bytes:
    chunks = [
        "data: " + json.dumps({"id": "b1", "object": "chat.completion.chunk", "model": "m",
                               "choices": [{"index": 0, "delta": {"content": _delta(n)}}]})
        for n in range(deltas)
    ]
    chunks.append("data: " + json.dumps(
        {"id": "b1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    chunks.append("data: [DONE]")
    return ("\n\n".join(chunks) + "\n\n").encode()


@contextmanager
def _serving(body: bytes) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _median(reps: int, once: Callable[[], float]) -> float:
    once()  # warm-up
    return statistics.median(once() for _ in range(max(1, reps)))


def zigai_stream_16k_deltas_per_s(reps: int, deltas: int = DELTAS) -> float:
    from zigai.messages import RequestMessage, UserPromptPart
    from zigai.model import ModelRequest
    from zigai.providers import openai_compatible as oc
    from zigai.security import UrlPolicy
    from zigai.transport import HttpTransport

    policy = UrlPolicy.local_development()
    request = ModelRequest((RequestMessage((UserPromptPart("Stream"),)),))
    with _serving(sse_body(deltas)) as root, HttpTransport(url_policy=policy) as transport:
        provider = oc.Provider("bench-key", transport, url_policy=policy, base_url=root)
        client = oc.Client("m", provider, fallback_profile="full")

        def once() -> float:
            start = time.perf_counter()
            with client.stream(request) as streamed:
                count = sum(1 for e in streamed if e.event_kind in ("part_start", "part_delta"))
                text = streamed.response().text
            elapsed = time.perf_counter() - start
            assert count == deltas, count
            assert len(text) == deltas * DELTA_CHARS
            return deltas / elapsed

        return _median(reps, once)


def peer_stream_16k_deltas_per_s(reps: int, deltas: int = DELTAS) -> float:
    """PydanticAI 2.31: ``run_stream_sync`` + ``stream_text(delta=True, debounce_by=None)``."""
    from pydantic_ai import Agent
    from pydantic_ai.models.function import FunctionModel

    async def stream(messages: list[Any], info: Any) -> Any:
        for n in range(deltas):
            yield _delta(n)

    agent = Agent(FunctionModel(stream_function=stream))

    def once() -> float:
        start = time.perf_counter()
        with agent.run_stream_sync("Stream") as result:
            count = sum(1 for _ in result.stream_text(delta=True, debounce_by=None))
        elapsed = time.perf_counter() - start
        assert count == deltas, count
        return deltas / elapsed

    return _median(reps, once)


WORKLOADS: list[dict[str, Any]] = [
    {"name": "stream_16k_deltas_per_s", "unit": "deltas/s", "lower_is_better": False,
     "run": zigai_stream_16k_deltas_per_s, "peer": peer_stream_16k_deltas_per_s},
]
