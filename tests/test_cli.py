"""The zigai command: every exit code, files, streaming order, approvals and config.

The process boundary is exercised where it matters — each exit code (0, 1, 2, 3, 4, 5, 130) by a
real ``python -m zigai`` process, a pause file resumed by a NEW process, the missing-credential
message, and ``--stream`` output order — and everything else runs in-process through
``zigai.cli.main(argv, env=..., out=..., err=...)``, the same entry point, to keep the file fast.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from zigai.cli import ExitCode, main
from zigai.cli.run import TEST_MODEL_NOTICE

ROOT = Path(__file__).resolve().parent.parent

TOOLS = '''
from typing import TypedDict


class Weather(TypedDict):
    city: str
    temperature_c: int


def get_weather(city: str) -> Weather:
    """Current weather for a city."""
    return {"city": city, "temperature_c": 21}


def _private_helper() -> None:
    pass
'''


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.endswith(("_API_KEY", "_TOKEN")) and not k.startswith("ZIGAI_")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def zigai(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zigai", *args], cwd=cwd, env=_env(**env),
                          capture_output=True, text=True, timeout=60)


def run_main(*args: str, cwd: Path, **env: str) -> tuple[int, str, str]:
    """The command in-process (fast); subprocess tests cover the process boundary."""
    out, err = io.StringIO(), io.StringIO()
    code = _in_process(list(args), cwd, env, out, err)
    return code, out.getvalue(), err.getvalue()


def _in_process(argv: list[str], cwd: Path, env: dict[str, str], out: io.StringIO,
                err: io.StringIO) -> int:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return main(argv, env=env, out=out, err=err)
    finally:
        os.chdir(old)


@pytest.fixture
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "tools.py"
    path.write_text(TOOLS)
    return path


def test_run_without_model_uses_the_test_model_and_says_so(tmp_path: Path, tools_file: Path) -> None:
    done = zigai("run", "What is the weather?", "--tools", str(tools_file), cwd=tmp_path)
    assert done.returncode == ExitCode.ok == 0
    assert done.stderr == TEST_MODEL_NOTICE + "\n"
    answer = json.loads(done.stdout)
    assert list(answer) == ["get_weather"]
    assert answer["get_weather"]["temperature_c"] == 21
    # `python -m zigai` and the in-process entry point agree byte for byte.
    assert run_main("run", "What is the weather?", "--tools", str(tools_file), cwd=tmp_path) == (
        done.returncode, done.stdout, done.stderr)


def test_json_output_reports_output_usage_and_cost(tmp_path: Path) -> None:
    code, out, err = run_main("run", "hello", "--json", "--model", "test", cwd=tmp_path)
    assert code == 0 and err == ""
    document = json.loads(out)
    assert document["output"] == "success (no tool calls)"
    assert document["model"] == "test:test"
    assert document["finish_reason"] == "stop"
    assert document["cost"] is None
    assert document["usage"]["requests"] == 1
    assert document["usage"]["tool_calls"] == 0
    assert set(document) == {"output", "output_name", "model", "finish_reason", "usage", "cost"}


def test_missing_credential_exit_code_names_the_variable(tmp_path: Path) -> None:
    done = zigai("run", "hi", "--model", "anthropic:claude-sonnet-4-5", cwd=tmp_path)
    assert done.returncode == ExitCode.credentials == 3
    assert "ANTHROPIC_API_KEY" in done.stderr
    assert done.stdout == ""


def test_operator_input_exits_2_as_a_process(tmp_path: Path) -> None:
    done = zigai("run", "hi", "--model", "nope:x", cwd=tmp_path)
    assert done.returncode == ExitCode.usage == 2
    assert done.stderr.startswith("zigai: error: ") and "nope" in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("args", [
    ("run",), ("run", "hi", "--model", "nope:x"), ("run", "hi", "--model", "openai"),
    ("run", "hi", "--max-requests", "0"), ("run", "hi", "--tools", "missing.py"),
    ("run", "   "), ("resume", "missing-pause.json", "--approve", "x"), ("bogus",),
])
def test_operator_input_errors_exit_2(tmp_path: Path, args: tuple[str, ...]) -> None:
    code, out, err = run_main(*args, cwd=tmp_path)
    assert code == ExitCode.usage == 2, err
    assert err.startswith("zigai: error: ") and out == ""


def test_provider_failure_exits_4(tmp_path: Path) -> None:
    # An unreachable root (refused by the default URL policy before any connection).
    done = zigai("run", "hi", "--model", "openai:gpt-5-mini", cwd=tmp_path,
                 OPENAI_API_KEY="sk-test-secret", OPENAI_BASE_URL="https://127.0.0.1:9/v1")
    assert done.returncode == ExitCode.provider == 4, done.stderr
    assert "sk-test-secret" not in done.stderr


def test_run_limit_is_a_fault_exit_1(tmp_path: Path, tools_file: Path) -> None:
    done = zigai("run", "weather?", "--tools", str(tools_file), "--max-requests", "1",
                 "--model", "test", cwd=tmp_path)
    assert done.returncode == ExitCode.fault == 1
    assert "RequestLimitExceeded" in done.stderr


def test_help_documents_every_exit_code(tmp_path: Path) -> None:
    code, out, err = run_main("run", "--help", cwd=tmp_path)
    assert code == 0 and err == ""
    for exit_code in ExitCode:
        assert f"\n  {int(exit_code)} " in out


def test_interrupt_exits_130_as_a_process(tmp_path: Path) -> None:
    tools = tmp_path / "interrupted.py"
    tools.write_text("raise KeyboardInterrupt  # as if Ctrl-C arrived while the tools load\n")
    done = zigai("run", "hi", "--model", "test", "--tools", str(tools), cwd=tmp_path)
    assert done.returncode == ExitCode.interrupted == 130
    assert done.stderr == "zigai: interrupted\n" and done.stdout == ""


def test_history_is_saved_and_continued_across_runs(tmp_path: Path, tools_file: Path) -> None:
    history = tmp_path / "chat.json"
    first, _, _ = run_main("run", "weather?", "--model", "test", "--tools", str(tools_file),
                           "--history", str(history), cwd=tmp_path)
    assert first == 0
    saved = json.loads(history.read_text())
    assert saved["version"] == 2 and len(saved["messages"]) == 4
    second, _, _ = run_main("run", "and now?", "--model", "test", "--history", str(history),
                            cwd=tmp_path)
    assert second == 0
    again = json.loads(history.read_text())
    assert again["messages"][:4] == saved["messages"] and len(again["messages"]) == 6
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_invalid_history_file_is_operator_input(tmp_path: Path) -> None:
    history = tmp_path / "chat.json"
    history.write_text('{"version": 9, "messages": []}')
    code, _, err = run_main("run", "hi", "--model", "test", "--history", str(history), cwd=tmp_path)
    assert code == 2 and "history file" in err
    assert history.read_text() == '{"version": 9, "messages": []}'


def test_failed_rename_leaves_the_old_history_intact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    history = tmp_path / "chat.json"
    assert run_main("run", "first", "--model", "test", "--history", str(history), cwd=tmp_path)[0] == 0
    before = history.read_bytes()

    def crash(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", "second", "--model", "test", "--history", str(history)],
                env={}, out=out, err=err)
    assert code == ExitCode.fault
    assert "No space left" in err.getvalue() and str(history) in err.getvalue()
    assert out.getvalue().strip(), "the paid-for answer is printed even when the save fails"
    assert history.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chat.json"]


def test_stream_prints_text_and_progress_in_order(tmp_path: Path, tools_file: Path) -> None:
    done = zigai("run", "weather?", "--stream", "--model", "test", "--tools", str(tools_file),
                 cwd=tmp_path)
    assert done.returncode == 0
    lines = done.stderr.splitlines()
    assert [line.split("]")[0] + "]" for line in lines] == ["[tool call]", "[tool result]"]
    assert lines[0].startswith("[tool call] get_weather {\"city\":")
    assert lines[1].startswith("[tool result] get_weather: {\"city\":")
    assert json.loads(done.stdout)["get_weather"]["temperature_c"] == 21
    assert done.stdout.endswith("\n")


def test_stream_interleaves_progress_before_the_answer_text(tmp_path: Path, tools_file: Path) -> None:
    shared = io.StringIO()  # one stream for stdout and stderr shows the real interleaving
    code = _in_process(["run", "weather?", "--stream", "--model", "test", "--tools", str(tools_file)],
                       tmp_path, {}, shared, shared)
    assert code == 0
    call, result, answer, end = shared.getvalue().split("\n")
    assert call.startswith('[tool call] get_weather {"city":')
    assert result.startswith('[tool result] get_weather: {"city":')
    assert json.loads(answer)["get_weather"]["temperature_c"] == 21 and end == ""


def test_stream_answer_equals_the_buffered_answer(tmp_path: Path, tools_file: Path) -> None:
    args = ("run", "weather?", "--model", "test", "--tools", str(tools_file))
    buffered = run_main(*args, cwd=tmp_path)
    streamed = run_main(*args, "--stream", cwd=tmp_path)
    assert buffered[0] == streamed[0] == 0 and buffered[2] == ""
    assert streamed[1] == buffered[1]


def test_stream_with_json_keeps_stdout_one_document(tmp_path: Path, tools_file: Path) -> None:
    code, out, err = run_main("run", "weather?", "--stream", "--json", "--model", "test",
                              "--tools", str(tools_file), cwd=tmp_path)
    assert code == 0
    document = json.loads(out)
    assert json.loads(document["output"])["get_weather"]["temperature_c"] == 21
    assert [line.split("]")[0] + "]" for line in err.splitlines()] == ["[tool call]", "[tool result]"]


def test_streamed_run_pauses_for_approval_and_resumes_streamed(tmp_path: Path) -> None:
    pause = tmp_path / "pause.json"
    code, out, err = run_main("run", "Delete temp", "--stream", "--model", "test", "--tools",
                              APPROVAL_TOOLS, "--pause-file", str(pause), cwd=tmp_path)
    assert code == ExitCode.approval and out == ""
    args = json.loads(pause.read_text())["calls"][0]["args"]
    assert json.loads(args) == {"pattern": json.loads(args)["pattern"]}
    assert err.splitlines() == [
        f"[approval needed] test-call-0 delete_files {args}",  # from the deferred_request event
        f"zigai: paused for approval; state saved to {pause}",
        f"[pending] test-call-0 delete_files {args} (--approve ID or --deny ID)",
        f"zigai: continue with: zigai resume {pause} --approve <id>",
    ]  # and no [tool call]: nothing ran before the approval
    code, out, err = run_main("resume", str(pause), "--stream", "--approve", "test-call-0",
                              cwd=tmp_path)
    assert code == 0, err
    assert json.loads(out) == {"delete_files": 3}
    assert err.splitlines() == [f"[tool call] delete_files {args}", "[approved] delete_files: 3"]
    assert not pause.exists()


def test_streamed_resume_shows_a_denial(tmp_path: Path) -> None:
    pause = _pause(tmp_path)
    code, out, err = run_main("resume", str(pause), "--stream", "--deny", "test-call-0",
                              "--reason", "not today", cwd=tmp_path)
    assert code == 0, err
    assert json.loads(out) == {"delete_files": "not today"}
    assert err == "[denied] delete_files: not today\n"


def test_output_schema_gives_structured_json(tmp_path: Path) -> None:
    schema = tmp_path / "answer.json"
    schema.write_text(json.dumps({
        "type": "object", "properties": {"city": {"type": "string"}, "ok": {"type": "boolean"}},
        "required": ["city", "ok"], "additionalProperties": False,
    }))
    code, out, err = run_main("run", "x", "--model", "test", "--output-schema", str(schema), "--json",
                              cwd=tmp_path)
    assert code == 0, err
    output = json.loads(out)["output"]
    assert set(output) == {"city", "ok"} and isinstance(output["ok"], bool)


def test_config_file_supplies_settings_and_names_only_env_vars(tmp_path: Path) -> None:
    config = tmp_path / "zigai.json"
    config.write_text(json.dumps({"version": 1, "model": "openai:gpt-5-mini",
                                  "api_key_env": "MY_TEAM_KEY"}))
    code, _, err = run_main("run", "hi", "--config", str(config), cwd=tmp_path, OPENAI_API_KEY="x")
    assert code == 3 and "MY_TEAM_KEY" in err
    config.write_text(json.dumps({"version": 1, "model": "test", "api_key": "sk-live"}))
    code, _, err = run_main("run", "hi", "--config", str(config), cwd=tmp_path)
    assert code == 2 and "never stored in configuration" in err
    assert "sk-live" not in err
    config.write_text(json.dumps({"version": 1, "api_key_env": "sk-abc123"}))
    code, _, err = run_main("run", "hi", "--config", str(config), cwd=tmp_path)
    assert code == 2 and "sk-abc123" not in err
    via_env, _, _ = run_main("run", "hi", cwd=tmp_path, ZIGAI_CONFIG=str(config))
    assert via_env == 2


def test_config_file_bound_is_the_cli_manifest_profile(tmp_path: Path) -> None:
    from zigai.cli import InvalidCliConfig, load_config
    from zigai.json import defaults

    limit = defaults.cli_manifest.max_document_bytes
    head = '{"version": 1, "system": "'
    at_limit = head + "x" * (limit - len(head) - 2) + '"}'
    assert len(at_limit.encode()) == limit
    path = tmp_path / "c.json"
    path.write_text(at_limit)
    with pytest.raises(InvalidCliConfig):  # the string exceeds 256 KiB, a JSON bound
        load_config(path)
    path.write_text(at_limit + " ")
    with pytest.raises(InvalidCliConfig, match=f"larger than {limit} bytes"):
        load_config(path)
    path.write_text('{"version": 1, "system": "' + "y" * (256 * 1024) + '"}')
    assert load_config(path).system == "y" * (256 * 1024)


def test_zigai_model_environment_variable_selects_the_model(tmp_path: Path) -> None:
    code, _, err = run_main("run", "hi", cwd=tmp_path, ZIGAI_MODEL="groq:llama-3.3-70b-versatile")
    assert code == 3 and "GROQ_API_KEY" in err


def test_tools_list_selects_exactly_the_declared_tools(tmp_path: Path) -> None:
    from zigai.cli.tools_file import load_tools

    path = tmp_path / "t.py"
    path.write_text(TOOLS + "\nimport zigai.reflect\n"
                    "TOOLS = [zigai.reflect.tool('weather', 'w', get_weather, "
                    "execution='requires_approval')]\n")
    tools = load_tools(str(path))
    assert [t.name for t in tools] == ["weather"]
    path.write_text(TOOLS)
    assert [t.name for t in load_tools(str(path))] == ["get_weather"]
    path.write_text("raise RuntimeError('boom')\n")
    from zigai.cli import CliUsageError

    with pytest.raises(CliUsageError, match="RuntimeError: boom"):
        load_tools(str(path))


def test_plain_answer_is_printed_with_one_newline(tmp_path: Path) -> None:
    assert run_main("run", "hello", "--model", "test", cwd=tmp_path) == (
        0, "success (no tool calls)\n", "")


def test_exit_code_mapping_table() -> None:
    from zigai.cli import CliUsageError, exit_code_for
    from zigai.models import MissingCredentials, UnknownModelProvider
    from zigai.provider import ProviderAuthError, RateLimited
    from zigai.transport import TransportTimedOut

    assert exit_code_for(CliUsageError("x")) == 2
    assert exit_code_for(UnknownModelProvider("x")) == 2
    assert exit_code_for(MissingCredentials("x")) == 3
    assert exit_code_for(ProviderAuthError("x")) == 3
    assert exit_code_for(RateLimited("x")) == 4
    assert exit_code_for(TransportTimedOut("x")) == 4
    assert exit_code_for(ValueError("x")) == 1
    assert exit_code_for(KeyboardInterrupt()) == 130


APPROVAL_TOOLS = str(ROOT / "docs" / "examples" / "approval_tools.py")


def _pause(tmp_path: Path, *, process: bool = False) -> Path:
    pause = tmp_path / "pause.json"
    args = ("run", "Delete temp", "--model", "test", "--tools", APPROVAL_TOOLS,
            "--pause-file", str(pause), "--history", str(tmp_path / "h.json"))
    if process:
        done = zigai(*args, cwd=tmp_path)
        code, out, err = done.returncode, done.stdout, done.stderr
    else:
        code, out, err = run_main(*args, cwd=tmp_path)
    assert code == ExitCode.approval == 5, err
    assert "[pending] test-call-0 delete_files" in err
    assert out == ""
    return pause


def test_pause_file_then_resume_in_a_new_process(tmp_path: Path) -> None:
    pause = _pause(tmp_path, process=True)
    document = json.loads(pause.read_text())
    assert document["version"] == 1 and document["kind"] == "zigai.cli.pause"
    assert document["calls"] == [{"tool_call_id": "test-call-0", "tool_name": "delete_files",
                                  "args": document["calls"][0]["args"],
                                  "execution": "requires_approval"}]
    assert document["settings"] == {"model": "test", "tools": APPROVAL_TOOLS}
    assert not (tmp_path / "h.json").exists()
    done = zigai("resume", str(pause), "--approve", "test-call-0", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"delete_files": 3}
    assert not pause.exists()
    assert len(json.loads((tmp_path / "h.json").read_text())["messages"]) == 4


def test_resume_with_denial_sends_the_reason(tmp_path: Path) -> None:
    pause = _pause(tmp_path)
    code, out, err = run_main("resume", str(pause), "--deny", "test-call-0", "--reason", "not today",
                              cwd=tmp_path)
    assert code == 0, err
    assert json.loads(out) == {"delete_files": "not today"}
    assert not pause.exists()


@pytest.mark.parametrize("decision", [
    (), ("--approve", "nope"), ("--approve", "test-call-0", "--deny", "test-call-0"),
    ("--result", "test-call-0", "{bad json"), ("--reason", "why"),
])
def test_resume_needs_exactly_one_valid_decision_per_call(tmp_path: Path, decision: tuple[str, ...]) -> None:
    pause = tmp_path / "pause.json"
    code, _, _ = run_main("run", "Delete temp", "--model", "test", "--tools", APPROVAL_TOOLS,
                          "--pause-file", str(pause), cwd=tmp_path)
    assert code == 5
    before = pause.read_bytes()
    code, _, err = run_main("resume", str(pause), *decision, cwd=tmp_path)
    assert code == 2, err
    assert pause.read_bytes() == before


@pytest.mark.parametrize("damage", ["state", "version", "truncate"])
def test_tampered_pause_files_are_operator_input(tmp_path: Path, damage: str) -> None:
    pause = _pause(tmp_path)
    document = json.loads(pause.read_text())
    if damage == "state":
        document["state"] = document["state"].replace("Delete temp", "Delete everything")
        pause.write_text(json.dumps(document))
    elif damage == "version":
        document["version"] = 2
        pause.write_text(json.dumps(document))
    else:
        pause.write_text(pause.read_text()[:200])
    code, _, err = run_main("resume", str(pause), "--approve", "test-call-0", cwd=tmp_path)
    assert code == 2, err
    assert "InvalidPauseFile" in err
    assert pause.exists()
