"""The ``mcp`` 1.30.0 peer of the legacy-revision interop tests, run from its own venv.

``mcp`` 1.x cannot share the dev venv with 2.x, so ``scripts/mcp_peers.sh`` builds
``.mcp-peers/venv`` (or point ``ZIGAI_MCP_PEERS_PYTHON`` at another interpreter that has it).
:data:`SKIP_REASON` is None when that interpreter exists; tests skip with it otherwise.
The peer programs live in ``tests/peers/`` and import only ``mcp``.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "tests" / "peers"
PEER_PYTHON = Path(os.environ.get("ZIGAI_MCP_PEERS_PYTHON") or ROOT / ".mcp-peers" / "venv" / "bin" / "python")
SKIP_REASON = None if PEER_PYTHON.exists() else (
    f"the mcp 1.30.0 peer venv is missing ({PEER_PYTHON}); run scripts/mcp_peers.sh to build it")


def server_command(mode: str = "stdio") -> list[str]:
    return [str(PEER_PYTHON), str(PEERS / "mcp1_server.py"), mode]


@contextmanager
def mcp1_http_server(stateless: bool = False) -> Iterator[str]:
    """Serve the mcp 1.30.0 peer over Streamable HTTP on a free loopback port; yields its URL."""
    with tempfile.TemporaryDirectory() as folder:
        port_file = Path(folder) / "port"
        command = [*server_command("http"), str(port_file)] + (["stateless"] if stateless else [])
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            url = _wait_listening(process, port_file)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_listening(process: subprocess.Popen[bytes], port_file: Path) -> str:
    import socket

    end = time.monotonic() + 30
    while time.monotonic() < end:
        if process.poll() is not None:
            raise RuntimeError(f"the mcp 1.30.0 HTTP peer exited with {process.returncode}")
        if port_file.exists() and port_file.read_text().strip():
            port = int(port_file.read_text())
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return f"http://127.0.0.1:{port}/mcp"
            except OSError:
                pass
        time.sleep(0.05)
    raise RuntimeError("the mcp 1.30.0 HTTP peer did not start listening within 30 s")
