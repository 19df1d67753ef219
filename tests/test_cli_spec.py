"""``zigai check`` and ``zigai run --spec`` end to end, as real processes.

Model traffic goes to the deterministic test model or to a real HTTP server on 127.0.0.1
(``openai_compatible`` with ``OPENAI_COMPATIBLE_BASE_URL``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.loopback import LoopbackServer, Received, Reply

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
SPECS = EXAMPLES / "agent_spec"
WEATHER_TOOLS = str(EXAMPLES / "weather_tools.py")
APPROVAL_TOOLS = str(EXAMPLES / "approval_tools.py")
CHAT_REPLY = {
    "id": "c1", "object": "chat.completion", "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "the loopback answer"}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
}


def zigai(*args: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.endswith(("_API_KEY", "_TOKEN", "_KEY")) and not k.startswith(("ZIGAI_", "SUPPORT_"))}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return subprocess.run([sys.executable, "-m", "zigai", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def write(tmp_path: Path, text: str, name: str = "agent.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_check_accepts_the_offline_example_and_prints_the_plan(tmp_path: Path) -> None:
    done = zigai("check", str(SPECS / "offline.yaml"), "--tools", WEATHER_TOOLS, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "spec": str(SPECS / "offline.yaml"), "name": "offline-weather", "model": "test:default",
        "tools": ["get_weather"], "toolsets": 0, "mcp_servers": [], "capabilities": [],
        "environment": []}
    plain = zigai("check", str(SPECS / "offline.yaml"), "--tools", WEATHER_TOOLS, cwd=tmp_path)
    assert plain.returncode == 0 and plain.stdout.startswith("ok: ")


def test_check_without_environment_names_every_missing_variable_and_exits_3(tmp_path: Path) -> None:
    done = zigai("check", str(SPECS / "hosted.yaml"), cwd=tmp_path)
    assert done.returncode == 3
    assert "SUPPORT_OPENAI_KEY" in done.stderr and "SUPPORT_REGION" in done.stderr
    assert "MissingEnvironment" in done.stderr
    ok = zigai("check", str(SPECS / "hosted.yaml"), cwd=tmp_path,
               SUPPORT_OPENAI_KEY="sk-not-shown", SUPPORT_REGION="north")
    assert ok.returncode == 0, ok.stderr
    assert "sk-not-shown" not in ok.stdout + ok.stderr


@pytest.mark.parametrize(("text", "words"), [
    ("version: 1\nmodel: {provider: test, name: a}\nlimits: {max_requests: -1}\n", "$.limits.max_requests"),
    ("version: 1\nmodel: {provider: nope, name: a}\n", "$.model.provider"),
    ("version: 1\nmodel: {provider: test, name: a}\ntools: [get_weather]\n", "$.tools[0]"),
    ("version: 1\nmodel: {provider: test, name: a}\ncapabilities: [repository, nope]\n", "$.capabilities[1]"),
    ("version: 1\nmodel: {provider: test, name: a}\ncapabilities: [image]\n", "needs an image backend"),
])
def test_check_refuses_invalid_documents_with_the_path_and_exit_2(tmp_path: Path, text: str, words: str) -> None:
    done = zigai("check", write(tmp_path, text), cwd=tmp_path)
    assert done.returncode == 2
    assert words in done.stderr


def test_check_help_documents_its_exit_codes(tmp_path: Path) -> None:
    done = zigai("check", "--help", cwd=tmp_path)
    assert done.returncode == 0
    for line in ("0    the spec parses", "2    the document is invalid", "3    environment variables"):
        assert line in done.stdout


def test_run_spec_with_the_test_model_calls_the_tool(tmp_path: Path) -> None:
    done = zigai("run", "weather in Paris?", "--spec", str(SPECS / "offline.yaml"),
                 "--tools", WEATHER_TOOLS, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["usage"]["tool_calls"] == 1 and document["model"].startswith("test:")


def test_run_spec_talks_to_a_loopback_provider(tmp_path: Path) -> None:
    received: list[Received] = []

    def handler(request: Received) -> Reply:
        received.append(request)
        return Reply.of_json(CHAT_REPLY)

    spec = write(tmp_path, """
version: 1
env: [DESK]
model: {provider: openai_compatible, name: "desk-${DESK}"}
instructions: You serve the ${DESK} desk.
settings: {temperature: 0.5}
limits: {max_requests: 2}
retry: {max_attempts: 1}
""")
    with LoopbackServer(handler) as server:
        done = zigai("run", "hello", "--spec", spec, cwd=tmp_path,
                     OPENAI_COMPATIBLE_BASE_URL=f"{server.url}/v1", DESK="north")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the loopback answer\n"
    [request] = received
    body = request.json()
    assert body["model"] == "desk-north" and body["temperature"] == 0.5
    assert body["messages"][0] == {"role": "system", "content": "You serve the north desk."}


def test_run_spec_with_agui_events_writes_json_lines(tmp_path: Path) -> None:
    done = zigai("run", "weather?", "--spec", str(SPECS / "offline.yaml"), "--tools", WEATHER_TOOLS,
                 "--events", "agui", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    types = [json.loads(line)["type"] for line in done.stdout.splitlines()]
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED" and "TOOL_CALL_RESULT" in types


def test_run_spec_pauses_and_resumes_from_the_same_spec(tmp_path: Path) -> None:
    spec = write(tmp_path, "version: 1\nmodel: {provider: test, name: a}\ntools: [delete_files]\n")
    pause = tmp_path / "p.json"
    first = zigai("run", "clean up", "--spec", spec, "--tools", APPROVAL_TOOLS,
                  "--pause-file", str(pause), cwd=tmp_path)
    assert first.returncode == 5, first.stderr
    document = json.loads(pause.read_text())
    assert document["settings"] == {"spec": spec, "tools": APPROVAL_TOOLS}
    assert [c["tool_call_id"] for c in document["calls"]] == ["test-call-0"]
    done = zigai("resume", str(pause), "--approve", "test-call-0", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"delete_files": 3}
    assert not pause.exists()


def test_run_spec_starts_mcp_servers_from_the_spec(tmp_path: Path) -> None:
    spec = write(tmp_path, json.dumps({
        "version": 1, "model": {"provider": "test", "name": "a"},
        "mcp_servers": [{"name": "demo", "command": [sys.executable, str(EXAMPLES / "mcp_server.py")]}],
    }), "agent.json")
    done = zigai("run", "use the server", "--spec", spec, "--json", "--mcp-env", "PYTHONPATH", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["usage"]["tool_calls"] >= 1


def test_run_spec_refuses_flags_the_spec_defines(tmp_path: Path) -> None:
    done = zigai("run", "x", "--spec", str(SPECS / "offline.yaml"), "--model", "test", cwd=tmp_path)
    assert done.returncode == 2 and "--model" in done.stderr
    missing = zigai("run", "x", "--spec", str(tmp_path / "none.yaml"), cwd=tmp_path)
    assert missing.returncode == 2 and "cannot read" in missing.stderr


# -- built-in capabilities through the CLI catalog ------------------------------------------------


def test_check_resolves_the_built_ins_spec_with_the_cli_catalog(tmp_path: Path) -> None:
    done = zigai("check", str(SPECS / "builtins.yaml"), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["capabilities"] == [
        {"name": "repository", "loading": "eager"}, {"name": "skill", "loading": "on_demand"}]
    # skill needs a skills/ directory next to the spec; without one it is absent
    alone = tmp_path / "alone.yaml"
    shutil.copy(SPECS / "builtins.yaml", alone)
    refused = zigai("check", str(alone), cwd=tmp_path)
    assert refused.returncode == 2
    assert "$.capabilities[1]: no capability named 'skill'" in refused.stderr
    assert "needs a skill store" in refused.stderr
    text = zigai("check", str(SPECS / "builtins.yaml"), cwd=tmp_path)
    assert text.returncode == 0 and "capabilities: repository, skill;" in text.stdout


def _tool_call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"id": call_id, "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None, "tool_calls": [{
                    "id": call_id, "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)}}]}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}


def test_run_spec_with_built_ins_in_a_real_process_against_a_loopback_provider(tmp_path: Path) -> None:
    (tmp_path / "CHANGES.md").write_text("- faster parser\n")
    (tmp_path / "skills" / "release-notes").mkdir(parents=True)
    shutil.copy(SPECS / "skills" / "release-notes" / "SKILL.md", tmp_path / "skills" / "release-notes")
    spec = tmp_path / "agent.yaml"
    spec.write_text((SPECS / "builtins.yaml").read_text().replace(
        "model: {provider: test, name: default}", "model: {provider: openai_compatible, name: m}"))
    replies = iter([
        _tool_call("load_capability", {"capability_id": "skill"}, "c1"),
        _tool_call("skill_load", {"name": "release-notes"}, "c2"),
        _tool_call("repository_search", {"text": "parser"}, "c3"),
        {"id": "c4", "object": "chat.completion", "model": "m",
         "choices": [{"index": 0, "finish_reason": "stop",
                      "message": {"role": "assistant", "content": "- parser: faster (CHANGES.md)"}}],
         "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}},
    ])
    received: list[Received] = []

    def handler(request: Received) -> Reply:
        received.append(request)
        return Reply.of_json(next(replies))

    with LoopbackServer(handler) as server:
        done = zigai("run", "Write release notes.", "--spec", str(spec), "--json", cwd=tmp_path / "skills",
                     OPENAI_COMPATIBLE_BASE_URL=f"{server.url}/v1")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["output"] == "- parser: faster (CHANGES.md)"
    assert document["usage"]["tool_calls"] == 2  # skill_load, repository_search
    first, second, *_, last = [r.json() for r in received]
    assert [t["function"]["name"] for t in first["tools"]] == [
        "repository_list", "repository_read", "repository_search", "load_capability"]
    assert "skill_load" in [t["function"]["name"] for t in second["tools"]]
    results = [m["content"] for m in last["messages"] if m["role"] == "tool"]
    assert any("Group the changes by area" in r for r in results)
    assert any("CHANGES.md:1: - faster parser" in r for r in results)
