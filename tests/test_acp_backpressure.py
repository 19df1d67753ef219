"""ACP read-ahead is bounded (issue 32, defect 10): an agent that writes faster than the client
takes messages is pushed back by the pipe, with a real child process and a real pipe."""

from __future__ import annotations

import json
import sys
import threading
import time
import tracemalloc
from pathlib import Path

from zigai.acp import AcpClient, EditorHandlers, StdioTransport

LINE_BYTES = 1024
TOTAL_BYTES = 120 * 1024 * 1024
LINES = TOTAL_BYTES // LINE_BYTES

FLOOD = f"""
import sys
head, tail = '{{"jsonrpc":"2.0","method":"session/update","params":{{"n":%9d,"p":"', '"}}}}\\n'
padding = "x" * ({LINE_BYTES} - len(head % 0) - len(tail))
out = sys.stdout.buffer
for index in range({LINES}):
    out.write((head % index + padding + tail).encode())
out.flush()
"""


def test_an_agent_flooding_valid_lines_is_pushed_back_and_loses_nothing() -> None:
    tracemalloc.start()
    transport = StdioTransport([sys.executable, "-c", FLOOD], max_message_bytes=64 * 1024)
    try:
        time.sleep(3)  # the client takes nothing meanwhile
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert transport._process.poll() is None, "the agent finished writing 120 MB: nothing pushed back"
        assert peak < 8 * 1024 * 1024, f"read-ahead grew to {peak} bytes"
        received = 0
        while (message := transport.receive(30)) is not None:
            if received % 10_000 == 0:
                assert json.loads(message)["params"]["n"] == received  # whole, in order
            assert len(message) == LINE_BYTES - 1
            received += 1
        assert received == LINES
    finally:
        if tracemalloc.is_tracing():
            tracemalloc.stop()
        transport.close()


def test_close_releases_a_reader_waiting_for_room() -> None:
    transport = StdioTransport([sys.executable, "-c", FLOOD], max_message_bytes=4096)
    time.sleep(0.5)
    started = time.monotonic()
    transport.close()
    assert not transport._reader.is_alive()
    assert time.monotonic() - started < 10


class FloodTransport:
    """Hands the client as many agent requests as it takes; counts them."""

    def __init__(self) -> None:
        self.taken = 0
        self.sent: list[bytes] = []
        self.closed = threading.Event()

    def send(self, message: bytes) -> None:
        self.sent.append(message)

    def receive(self, timeout: float | None) -> bytes | None:
        if self.closed.is_set() or self.taken >= 100_000:
            return None
        self.taken += 1
        return json.dumps({"jsonrpc": "2.0", "id": self.taken, "method": "block/me", "params": {}}).encode()

    def close(self) -> None:
        self.closed.set()


def test_agent_requests_waiting_for_handlers_push_back_on_the_reader(tmp_path: Path) -> None:
    release = threading.Event()
    transport = FloodTransport()
    client = AcpClient(lambda: transport, EditorHandlers(tmp_path), request_timeout_s=5)
    client._handlers = {"block/me": lambda params: release.wait(30) and {}}
    client._open()
    try:
        time.sleep(1)
        taken = transport.taken
        assert taken <= 64 + 4 + 2, f"the reader took {taken} requests while 4 handlers were busy"
    finally:
        release.set()
        client.close()
