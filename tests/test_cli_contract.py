"""The CLI's documented contract where a newcomer found it broken (issue 12): setting
precedence, paths checked before a paid request, exit codes, retries and readable messages.

Model traffic goes to a real HTTP server on 127.0.0.1 (``openai_compatible:`` with
``OPENAI_COMPATIBLE_BASE_URL``), so "no request was made" is counted, not assumed."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import pytest
from support.loopback import LoopbackServer, Received, Reply

from zigai.agent import Agent, RunTimedOut
from zigai.cli import ExitCode, main
from zigai.models import infer_model

CHAT_REPLY = {
    "id": "c1", "object": "chat.completion", "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "the answer"}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
}
TOOLS = '''
def get_time(city: str) -> str:
    """The time in a city."""
    return "noon"
'''


def _ok(request: Received) -> Reply:
    return Reply.of_json(CHAT_REPLY)


def _rate_limited() -> Reply:
    return Reply.of_json({"error": {"message": "slow down"}}, 429, (("Retry-After", "0"),))


def cli(*args: str, cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        code = main(list(args), env=env, out=out, err=err)
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


def _env(server: LoopbackServer, **extra: str) -> dict[str, str]:
    return {"OPENAI_COMPATIBLE_BASE_URL": f"{server.url}/v1", **extra}


# -- precedence: flags > ZIGAI_MODEL > config file -------------------------------------------


def test_zigai_model_beats_the_config_file_and_the_flag_beats_both(tmp_path: Path) -> None:
    config = tmp_path / "zigai.json"
    config.write_text(json.dumps({"version": 1, "model": "groq:llama-3.3-70b-versatile"}))
    with LoopbackServer(_ok) as server:
        code, out, err = cli("run", "hi", "--config", str(config), "--json", cwd=tmp_path,
                             env=_env(server, ZIGAI_MODEL="openai_compatible:from-env"))
        assert code == 0, err
        assert json.loads(out)["model"] == "openai_compatible:from-env"
        code, out, err = cli("run", "hi", "--config", str(config), "--model", "test", "--json",
                             cwd=tmp_path, env=_env(server, ZIGAI_MODEL="openai_compatible:x"))
        assert code == 0 and json.loads(out)["model"].startswith("test:"), err
    # Without the variable the file's model is used (and needs its key: exit 3).
    code, _, err = cli("run", "hi", "--config", str(config), cwd=tmp_path, env={})
    assert code == ExitCode.credentials and "GROQ_API_KEY" in err


def test_help_states_the_documented_precedence(tmp_path: Path) -> None:
    _, out, _ = cli("run", "--help", cwd=tmp_path, env={})
    assert "ZIGAI_MODEL     model string used when --model is not given (beats the config file)" in out
    docs = (Path(__file__).resolve().parent.parent / "docs" / "providers.md").read_text()
    assert "Flags win over `ZIGAI_MODEL`, which wins over the file." in docs


# -- output paths are checked before any request ---------------------------------------------


@pytest.mark.parametrize("flag", ["--history", "--pause-file"])
def test_an_unwritable_output_path_fails_before_the_model_is_called(tmp_path: Path, flag: str) -> None:
    (tmp_path / "tools.py").write_text(TOOLS)
    target = tmp_path / "missing-folder" / "file.json"
    with LoopbackServer(_ok) as server:
        code, out, err = cli("run", "hi", "--model", "openai_compatible:m", "--tools", "tools.py",
                             flag, str(target), cwd=tmp_path, env=_env(server))
    assert code == ExitCode.usage == 2
    assert str(target) in err and "does not exist" in err and ".tmp" not in err
    assert server.requests == [] and out == ""


def test_a_directory_as_history_file_is_refused_up_front(tmp_path: Path) -> None:
    code, _, err = cli("run", "hi", "--model", "test", "--history", str(tmp_path), cwd=tmp_path, env={})
    assert code == ExitCode.usage and "is a directory" in err


def test_a_read_only_folder_is_refused_up_front(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Permission bits do not bind root (CI runs as root), so the OS answer is simulated.
    real_access = os.access
    folder = tmp_path / "ro"
    folder.mkdir()
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == folder
                        else real_access(path, mode))
    code, _, err = cli("run", "hi", "--model", "test", "--history", str(folder / "h.json"),
                       cwd=tmp_path, env={})
    assert code == ExitCode.usage and "not writable" in err and str(folder / "h.json") in err


def test_the_default_pause_file_is_not_checked_without_tools(tmp_path: Path) -> None:
    code, out, _ = cli("run", "hi", "--model", "test", "--pause-file",
                       str(tmp_path / "nowhere" / "p.json"), cwd=tmp_path, env={})
    assert code == 0 and out.strip()


# -- exit codes ------------------------------------------------------------------------------


def test_an_invalid_output_schema_exits_2_and_names_the_file(tmp_path: Path) -> None:
    schema = tmp_path / "answer.schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"a": {"type": "nonsense"}}}))
    code, _, err = cli("run", "hi", "--model", "test", "--output-schema", str(schema),
                       cwd=tmp_path, env={})
    assert code == ExitCode.usage and str(schema) in err and "nonsense" in err


def _slow(request: Received) -> Reply:
    time.sleep(1.5)
    return Reply.of_json(CHAT_REPLY)


def test_the_run_deadline_is_run_timed_out_in_python_and_exit_1_in_the_cli(tmp_path: Path) -> None:
    with LoopbackServer(_slow) as server:
        model = infer_model("openai_compatible:m", env=_env(server))
        with pytest.raises(RunTimedOut):
            Agent(model, run_timeout_ms=300).run("hi")
        code, _, err = cli("run", "hi", "--model", "openai_compatible:m", "--timeout", "0.3",
                           "--no-retries", cwd=tmp_path, env=_env(server))
    assert code == ExitCode.fault == 1
    assert "RunTimedOut" in err


def test_a_shorter_request_timeout_stays_a_transport_timeout() -> None:
    from zigai.transport import TransportTimedOut

    with LoopbackServer(_slow) as server:
        model = infer_model("openai_compatible:m", env=_env(server))
        with pytest.raises(TransportTimedOut):
            Agent(model, run_timeout_ms=10_000, request_timeout_ms=300).run("hi")


# -- retries ---------------------------------------------------------------------------------


def test_the_cli_retries_a_429_by_default(tmp_path: Path) -> None:
    replies = [_rate_limited(), _rate_limited(), Reply.of_json(CHAT_REPLY)]
    with LoopbackServer(lambda request: replies.pop(0)) as server:
        code, out, err = cli("run", "hi", "--model", "openai_compatible:m", cwd=tmp_path,
                             env=_env(server))
    assert code == 0 and out == "the answer\n", err
    assert len(server.requests) == 3


@pytest.mark.parametrize(("flags", "requests"), [(("--no-retries",), 1), (("--retries", "1"), 2)])
def test_retries_can_be_limited_or_turned_off(tmp_path: Path, flags: tuple[str, ...], requests: int) -> None:
    with LoopbackServer(lambda request: _rate_limited()) as server:
        code, _, err = cli("run", "hi", "--model", "openai_compatible:m", *flags, cwd=tmp_path,
                           env=_env(server))
    assert code == ExitCode.provider and "RateLimited" in err
    assert len(server.requests) == requests


def test_the_config_file_sets_retries_and_bounds_them(tmp_path: Path) -> None:
    config = tmp_path / "zigai.json"
    config.write_text(json.dumps({"version": 1, "model": "openai_compatible:m", "retries": 0}))
    with LoopbackServer(lambda request: _rate_limited()) as server:
        code, _, _ = cli("run", "hi", "--config", str(config), cwd=tmp_path, env=_env(server))
    assert code == ExitCode.provider and len(server.requests) == 1
    for bad in (-1, 11):
        config.write_text(json.dumps({"version": 1, "retries": bad}))
        code, _, err = cli("run", "hi", "--config", str(config), cwd=tmp_path, env={})
        assert code == ExitCode.usage and "'retries' must be between 0 and 10" in err
    config.write_text(json.dumps({"version": 1, "retries": 10}))
    assert cli("run", "hi", "--config", str(config), "--model", "test", cwd=tmp_path, env={})[0] == 0


# -- messages --------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "expected"), [
    (("--max-requests", "0"), "--max-requests: expected a whole number >= 1, got '0'"),
    (("--max-requests", "x"), "--max-requests: expected a whole number >= 1, got 'x'"),
    (("--timeout", "-1"), "--timeout: expected a number of seconds > 0, got '-1'"),
    (("--timeout", "nan"), "--timeout: expected a number of seconds > 0, got 'nan'"),
    (("--retries", "11"), "--retries: expected a whole number from 0 to 10, got '11'"),
    (("--retries", "0", "--no-retries"), "not allowed with argument"),
])
def test_argument_errors_say_what_was_expected(tmp_path: Path, args: tuple[str, ...], expected: str) -> None:
    code, _, err = cli("run", "hi", *args, cwd=tmp_path, env={})
    assert code == ExitCode.usage and expected in err
    assert "_positive" not in err and "_retry" not in err


def test_malformed_json_messages_say_at_byte_once(tmp_path: Path) -> None:
    schema = tmp_path / "s.json"
    schema.write_text('{"type": "objec\x01"}')
    code, _, err = cli("run", "hi", "--model", "test", "--output-schema", str(schema), cwd=tmp_path, env={})
    assert code == ExitCode.usage and "at byte" in err and "at at" not in err
