"""``zigai run --events agui``: AG-UI events as JSON lines, validated by ag-ui-protocol."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from zigai.cli import ExitCode, main

ROOT = Path(__file__).resolve().parent.parent
APPROVAL_TOOLS = str(ROOT / "docs" / "examples" / "approval_tools.py")
ag_ui_core = pytest.importorskip("ag_ui.core", reason="install the dev extra: pip install -e '.[dev]'")


def run_main(*args: str, cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        code = main(list(args), env={}, out=out, err=err)
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


def lines(out: str) -> list[dict[str, Any]]:
    from pydantic import TypeAdapter

    adapter = TypeAdapter(ag_ui_core.Event)
    items = [json.loads(line) for line in out.splitlines()]
    for item in items:
        assert not adapter.validate_python(item).model_extra
    return items


def test_text_run_prints_validated_agui_lines_and_saves_history(tmp_path: Path) -> None:
    history = tmp_path / "history.json"
    code, out, err = run_main("run", "hello", "--model", "test", "--events", "agui",
                              "--history", str(history), cwd=tmp_path)
    assert code == 0, err
    items = lines(out)
    assert [i["type"] for i in items][:3] == ["RUN_STARTED", "STEP_STARTED", "TEXT_MESSAGE_START"]
    assert items[-1]["type"] == "RUN_FINISHED" and items[-1]["result"] == "success (no tool calls)"
    assert items[0]["threadId"] == "zigai-cli" and items[-1]["runId"] == items[0]["runId"]
    assert json.loads(history.read_text())["messages"]


def test_approval_pause_ends_with_an_interrupt_named_by_the_call_id(tmp_path: Path) -> None:
    pause = tmp_path / "pause.json"
    code, out, err = run_main("run", "Delete temp", "--model", "test", "--tools", APPROVAL_TOOLS,
                              "--events", "agui", "--pause-file", str(pause), cwd=tmp_path)
    assert code == ExitCode.approval
    items = lines(out)
    (interrupt,) = items[-1]["outcome"]["interrupts"]
    assert interrupt["id"] == interrupt["toolCallId"] == "test-call-0"
    assert json.loads(pause.read_text())["calls"][0]["tool_call_id"] == "test-call-0"
    assert "zigai resume" in err
    code, out, err = run_main("resume", str(pause), "--approve", "test-call-0", cwd=tmp_path)
    assert code == 0, err


def test_a_failed_run_ends_with_run_error_and_its_exit_code(tmp_path: Path) -> None:
    tools = tmp_path / "tools.py"
    tools.write_text("def get_weather(city: str) -> str:\n    \"\"\"Weather.\"\"\"\n    return 'sun'\n")
    code, out, err = run_main("run", "weather", "--model", "test", "--tools", str(tools),
                              "--max-requests", "1", "--events", "agui", cwd=tmp_path)
    assert code == ExitCode.fault
    items = lines(out)
    assert items[-1]["type"] == "RUN_ERROR" and items[-1]["code"] == "RequestLimitExceeded"
    assert err.startswith("zigai: error: RequestLimitExceeded")


def test_events_flag_over_the_process_boundary(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZIGAI_")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-m", "zigai", "run", "hi", "--events", "agui"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout)[-1]["type"] == "RUN_FINISHED"
    code, _out, err = run_main("run", "hi", "--events", "xml", cwd=tmp_path)
    assert code == ExitCode.usage and "invalid choice" in err
