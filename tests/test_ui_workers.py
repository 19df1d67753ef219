"""``ui_app`` served by two worker processes sharing one SQLite store (``SqliteUiStore``).

Each worker is a real child process (``tests/support/ui_worker.py``) with its own memory;
only the database file is shared.  A run started on one worker is approved, reconnected to,
continued and cancelled through the other, and the approved tool runs exactly once — also
when both workers receive the same approval at the same moment.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

WORKER = Path(__file__).resolve().parent / "support" / "ui_worker.py"
ROOT = Path(__file__).resolve().parent.parent


class Worker:
    def __init__(self, db: Path, ledger: Path) -> None:
        import os

        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.process = subprocess.Popen([sys.executable, str(WORKER), str(db), str(ledger)], env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.url

    def request(self, method: str, path: str, body: Any = None, read: bool = True) -> tuple[Any, list[dict[str, Any]]]:
        parts = urlsplit(self.url)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        data = None if body is None else json.dumps(body).encode()
        connection.request(method, path, data, {"Content-Type": "application/json"} if data else {})
        response = connection.getresponse()
        if not read:
            response.close()
            connection.close()
            return response, []
        text = response.read().decode()
        connection.close()
        return response, [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(15)


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[tuple[Worker, Worker, Path]]:
    db, ledger = tmp_path / "ui.sqlite3", tmp_path / "ledger.txt"
    ledger.write_text("")
    first = Worker(db, ledger)
    second = Worker(db, ledger)
    try:
        yield first, second, ledger
    finally:
        first.stop()
        second.stop()


def run_input(thread: str, run: str, text: str | None = None, **extra: Any) -> dict[str, Any]:
    messages = [{"id": "u1", "role": "user", "content": text}] if text is not None else []
    return {"threadId": thread, "runId": run, "messages": messages, **extra}


def approve(interrupt_id: str) -> list[dict[str, Any]]:
    return [{"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": True}}]


def test_start_on_one_worker_approve_and_reconnect_through_the_other(workers: tuple[Worker, Worker, Path]) -> None:
    a, b, ledger = workers
    _, started = a.request("POST", "/", run_input("t1", "start-1", "publish"))
    (interrupt,) = started[-1]["outcome"]["interrupts"]
    assert ledger.read_text() == ""  # nothing runs before the approval

    # approve through worker B, drop that connection at once, reconnect through worker A
    response, _ = b.request("POST", "/", run_input("t1", "resume-1", resume=approve(interrupt["id"])), read=False)
    resumed_run = response.getheader("X-Zigai-Run-Id")
    assert resumed_run == "resume-1"
    _, frames = a.request("GET", f"/runs/{resumed_run}/events?after=0")
    types = [f["type"] for f in frames]
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED", types
    assert frames[-1]["result"] == "Done."
    assert [f["content"] for f in frames if f["type"] == "TOOL_CALL_RESULT"] == ["published Oslo"]
    assert ledger.read_text() == "publish Oslo\n"  # ran once, on B

    # the same approval again, through either worker: already answered, the tool does not run
    for worker, run in ((a, "again-a"), (b, "again-b")):
        _, again = worker.request("POST", "/", run_input("t1", run, resume=approve(interrupt["id"])))
        assert (again[-1]["type"], again[-1]["code"]) == ("RUN_ERROR", "UnknownInterrupt")
    assert ledger.read_text() == "publish Oslo\n"

    # the thread's history written by B continues on A
    _, follow = a.request("POST", "/", run_input("t1", "follow-1", "count"))
    assert follow[-1]["result"] == "tool results in this thread: 1"


def test_racing_approvals_on_both_workers_run_the_tool_once(workers: tuple[Worker, Worker, Path]) -> None:
    a, b, ledger = workers
    _, started = a.request("POST", "/", run_input("t2", "start-2", "publish"))
    (interrupt,) = started[-1]["outcome"]["interrupts"]
    outcomes: dict[str, list[dict[str, Any]]] = {}

    def answer(worker: Worker, run: str) -> None:
        outcomes[run] = worker.request("POST", "/", run_input("t2", run, resume=approve(interrupt["id"])))[1]

    racers = [threading.Thread(target=answer, args=(w, r)) for w, r in ((a, "race-a"), (b, "race-b"))]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(30)
    endings = sorted(frames[-1].get("code") or frames[-1]["type"] for frames in outcomes.values())
    assert endings == ["RUN_FINISHED", "UnknownInterrupt"]
    assert ledger.read_text() == "publish Oslo\n"


def test_cancel_through_the_other_worker(workers: tuple[Worker, Worker, Path]) -> None:
    a, b, _ = workers
    response, _ = a.request("POST", "/", run_input("t3", "slow-1", "slow"), read=False)
    assert response.status == 200
    cancel, _ = b.request("POST", "/runs/slow-1/cancel", {}, read=False)
    assert cancel.status == 202
    _, frames = b.request("GET", "/runs/slow-1/events?after=0")
    assert frames[-1]["type"] == "RUN_FINISHED" and frames[-1]["outcome"] == {"type": "cancelled"}
    ticks = [f for f in frames if f["type"] == "TEXT_MESSAGE_CONTENT"]
    assert len(ticks) < 600  # stopped long before the end
    missing, _ = b.request("GET", "/runs/nobody/events", read=False)
    assert missing.status == 404
