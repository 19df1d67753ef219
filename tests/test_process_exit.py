"""An abandoned, non-cooperative callback never keeps the process alive (issue 31, defect 6).

Each case starts a real child interpreter whose callback blocks for a minute ignoring its
cancellation token, lets zigai give up on it at a one-second deadline, and measures the
child's wall time: it must exit long before the callback would have returned.  Bounds are
generous (the machine may be loaded); the old behaviour took the full minute.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCK_S = 60  # what the callback would take; the process must not wait for it
PROMPT_EXIT_S = 20  # far below BLOCK_S, far above a loaded machine's start-up and deadline


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def _timed(args: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    done = subprocess.run(args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=BLOCK_S + 30)
    return done, time.monotonic() - start


def _script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "main.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return [sys.executable, str(path)]


def test_the_cli_exits_with_its_timeout_code_while_the_tool_still_blocks(tmp_path: Path) -> None:
    (tmp_path / "slow.py").write_text(textwrap.dedent(f"""
        import time

        def slow(seconds: int) -> str:
            \"\"\"Block, ignoring cancellation.\"\"\"
            time.sleep({BLOCK_S})
            return "late"
    """), encoding="utf-8")
    done, elapsed = _timed(
        [sys.executable, "-m", "zigai", "run", "hi", "--model", "test", "--tools", "slow.py", "--timeout", "1"],
        tmp_path,
    )
    assert done.returncode == 1, done.stderr  # the documented code for a run timeout
    assert "RunTimedOut" in done.stderr
    assert elapsed < PROMPT_EXIT_S, f"the CLI took {elapsed:.1f} s to exit"


def test_a_library_script_that_catches_the_timeout_exits_normally(tmp_path: Path) -> None:
    args = _script(tmp_path, f"""
        import time
        from zigai.agent import Agent
        from zigai.control import RunTimedOut
        from zigai.reflect import tool
        from zigai.testing import TestModel

        def slow(seconds: int) -> str:
            \"\"\"Block, ignoring cancellation.\"\"\"
            time.sleep({BLOCK_S})
            return "late"

        agent = Agent(TestModel(), tools=[tool("slow", None, slow)], run_timeout_ms=1000)
        try:
            agent.run("hi")
        except RunTimedOut:
            print("caught")
    """)
    done, elapsed = _timed(args, tmp_path)
    assert (done.returncode, done.stdout.strip()) == (0, "caught"), done.stderr
    assert elapsed < PROMPT_EXIT_S, f"the interpreter took {elapsed:.1f} s to exit"


@pytest.mark.parametrize("where", ["runtime_executor", "harness_producer"])
def test_other_abandoning_pools_never_hold_the_interpreter(tmp_path: Path, where: str) -> None:
    calls = {
        "runtime_executor": """
            from zigai.runtime import BoundedExecutor
            with BoundedExecutor(max_workers=2, drain_timeout_s=0.1) as pool:
                pool.map(lambda item, ctx: time.sleep(BLOCK), [1, 2], control=RunControl.start(1000))
        """,
        "harness_producer": """
            from zigai.harness.harness import _run_producer
            _run_producer(lambda context: time.sleep(BLOCK), None, RunControl.start(1000))
        """,
    }
    args = _script(tmp_path, f"""
        import time
        from zigai.control import RunControl, RunTimedOut
        BLOCK = {BLOCK_S}
        try:
{textwrap.indent(textwrap.dedent(calls[where]), " " * 12)}
        except RunTimedOut:
            print("caught")
    """)
    done, elapsed = _timed(args, tmp_path)
    assert (done.returncode, done.stdout.strip()) == (0, "caught"), done.stderr
    assert elapsed < PROMPT_EXIT_S, f"the interpreter took {elapsed:.1f} s to exit"


def test_an_acp_handler_blocked_on_the_user_never_holds_close_or_the_interpreter(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    args = _script(tmp_path, f"""
        import json, queue, threading, time
        from zigai.acp import AcpClient, EditorHandlers

        started = threading.Event()

        class Terminals:  # terminal/create blocks, as a prompt waiting for the user would
            def create(self, params):
                started.set()
                time.sleep({BLOCK_S})
                return {{"terminalId": "late"}}

            def output(self, params): return {{}}
            wait_for_exit = kill = release = output

        class Memory:
            def __init__(self):
                self.incoming = queue.Queue()

            def send(self, message):
                sent = json.loads(message)
                if sent.get("method") == "initialize":
                    self.incoming.put(json.dumps({{"jsonrpc": "2.0", "id": sent["id"],
                                                  "result": {{"protocolVersion": 1}}}}).encode())

            def receive(self, timeout):
                return self.incoming.get(timeout=timeout)

            def close(self):
                self.incoming.put(None)

        memory = Memory()
        client = AcpClient(lambda: memory, EditorHandlers("project", terminals=Terminals()), request_timeout_s=10)
        client.initialize()
        memory.incoming.put(json.dumps({{"jsonrpc": "2.0", "id": 7, "method": "terminal/create",
                                         "params": {{"command": "sleep"}}}}).encode())
        assert started.wait(10)
        begun = time.monotonic()
        client.close()
        print("closed" if time.monotonic() - begun < 5 else "close waited")
    """)
    done, elapsed = _timed(args, tmp_path)
    assert (done.returncode, done.stdout.strip()) == (0, "closed"), done.stderr
    assert elapsed < PROMPT_EXIT_S, f"the interpreter took {elapsed:.1f} s to exit"


def test_an_mcp_task_that_ignores_cancellation_never_holds_close_or_the_interpreter(tmp_path: Path) -> None:
    args = _script(tmp_path, f"""
        import threading, time
        from zigai import mcp

        started = threading.Event()

        def stubborn(arguments, context):
            started.set()
            time.sleep({BLOCK_S})  # ignores context.cancelled
            return "late"

        server = mcp.Server("tasks", "1.0")
        tasks = mcp.TaskServer(server)
        tasks.add_tool(mcp.ToolInfo("stubborn", {{"type": "object"}}), stubborn)
        ext = mcp.ClientCapabilities(extensions={{mcp.TASKS_EXTENSION: {{}}}})
        with mcp.Client(mcp.InProcessTransport(server), capabilities=ext, default_timeout_ms=10_000) as client:
            created = client.request_json("tools/call", {{"name": "stubborn", "arguments": {{}}}})
            assert created["resultType"] == "task"
            assert started.wait(10)
        begun = time.monotonic()
        tasks.close()
        print("closed" if time.monotonic() - begun < 5 else "close waited")
    """)
    done, elapsed = _timed(args, tmp_path)
    assert (done.returncode, done.stdout.strip()) == (0, "closed"), done.stderr
    assert elapsed < PROMPT_EXIT_S, f"the interpreter took {elapsed:.1f} s to exit"
