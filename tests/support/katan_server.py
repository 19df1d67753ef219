"""Start and stop a real llm-katan server (echo backend) on 127.0.0.1, always bounded.

One helper for both users: ``tests/test_interop_llm_katan.py`` (a free port per session) and
``scripts/record_katan.py`` (the fixed port its recordings name; the script already puts
``tests/`` on ``sys.path`` to use :mod:`support.katan_model`, so it imports this the same way).
Startup is polled on ``/health`` for at most :data:`STARTUP_LIMIT_S`; stopping is a
terminate, then a kill after :data:`STOP_GRACE_S`.  The server's output goes to
``<workdir>/server.log`` and its tail is in the error when it does not start.

This is test support: the ``zigai`` package never imports it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["STARTUP_LIMIT_S", "STOP_GRACE_S", "Katan", "KatanDidNotStart", "free_port", "running_katan", "start",
           "stop"]

STARTUP_LIMIT_S = 20.0
STOP_GRACE_S = 5.0


class KatanDidNotStart(RuntimeError):
    """llm-katan exited or did not answer ``/health`` in time (the message holds its log tail)."""


@dataclass(frozen=True, slots=True)
class Katan:
    base_url: str
    port: int


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1.0) as response:  # noqa: S310 - 127.0.0.1 only
            return bool(response.status == 200 and json.loads(response.read()).get("status") == "ok")
    except (OSError, ValueError):  # URLError is an OSError
        return False


def start(workdir: Path, port: int, model: str, providers: str, *flags: str) -> subprocess.Popen[bytes]:
    """Start llm-katan serving ``model`` for ``providers`` and return once it is healthy."""
    command = [
        sys.executable, "-c", "from llm_katan.cli import main; main()",
        "--model", model, "--backend", "echo", "--host", "127.0.0.1", "--port", str(port),
        "--providers", providers, "--stats-file", str(workdir / "stats.json"),
        "--disable-dashboard", "--log-level", "WARNING", *flags,
    ]
    log_path = workdir / "server.log"
    with open(log_path, "ab") as log:
        process = subprocess.Popen(  # noqa: S603 - fixed argv, our own interpreter
            command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            cwd=workdir, env=dict(os.environ, HOME=str(workdir)),
        )
    health = f"http://127.0.0.1:{port}/health"
    deadline = time.monotonic() + STARTUP_LIMIT_S
    while not _healthy(health):
        if process.poll() is not None or time.monotonic() >= deadline:
            stop(process)
            tail = log_path.read_text(errors="replace")[-2000:]
            raise KatanDidNotStart(f"llm-katan did not become healthy on port {port} (is it free?):\n{tail}")
        time.sleep(0.05)
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_GRACE_S)


@contextmanager
def running_katan(workdir: Path, model: str, providers: str, *flags: str,
                  port: int | None = None) -> Iterator[Katan]:
    """llm-katan on ``port`` (default: a free one) for the ``with`` block; always stopped."""
    chosen = free_port() if port is None else port
    process = start(workdir, chosen, model, providers, *flags)
    try:
        yield Katan(base_url=f"http://127.0.0.1:{chosen}", port=chosen)
    finally:
        stop(process)
