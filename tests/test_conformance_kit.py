"""The conformance kit over real HTTP: ``zigai conformance serve`` as a child process, zigai and
an independent JavaScript client (Node's fetch) both checked by it, and the report files."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from zigai.conformance.cassette import load_cassette
from zigai.conformance.routes import detect_route
from zigai.conformance.scenarios import find_scenario, load_scenarios

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
CORPUS_WHY = ("it runs the OpenAI Responses and Anthropic Messages tool loops recorded on test hosts, "
              "which no recording of ours has without few-shot history")


def _serve(corpus: Path, tmp_path: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "zigai", "conformance", "serve", "--cassettes", str(corpus),
         "--report", str(tmp_path / "report.json"), "--junit", str(tmp_path / "report.xml")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert " on http://127.0.0.1:" in line, line + (process.stderr.read() if process.stderr else "")
    return process, line.rsplit(" on ", 1)[1].strip()


def _stop(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    return err


def _port_case(corpus: Path, relative: str, base: str, wrong: bool = False) -> dict[str, Any]:
    """What a port gets for one recording: the route facts and the scenario, as JSON."""
    path = corpus / relative
    route = detect_route(path, load_cassette(path)[0])
    scenario = find_scenario(relative, load_scenarios(ROOT / "cassettes" / "conformance-scenarios.yaml"))
    assert scenario is not None
    ident = relative.removesuffix(".yaml").replace("/", ".")
    api_path = route.api_root.split("/", 3)[3]  # the root's path ("v1"): the port keeps it
    facts = {"prompt": scenario.prompt, "system": scenario.system, "tool": scenario.tool,
             "settings": scenario.settings}
    return {"id": ident, "kind": route.kind, "base": f"{base}/s/{ident}/{api_path}", "model": route.model_id,
            "scenario": facts, "wrong": wrong}


JS_RIGHT = ["models/openai_gpt_4o_mini.yaml", "models/anthropic_claude_haiku_4_5.yaml",
            "buffered/openai_gpt_4_1_mini.yaml", "buffered/anthropic_claude_sonnet_4_5.yaml"]
JS_WRONG = ["buffered/openai_gpt_5_mini.yaml", "buffered/anthropic_claude_opus_4_5.yaml"]
ZIGAI_RIGHT = ["openai_tool_loop.yaml", "anthropic_tool_loop.yaml",
               "buffered/openai_gpt_4o_mini.yaml", "buffered/anthropic_claude_haiku_4_5.yaml"]
ZIGAI_WRONG = ["buffered/openai_gpt_5_nano.yaml", "buffered/anthropic_claude_sonnet_4_6.yaml"]


@pytest.mark.skipif(NODE is None, reason="needs Node.js 18 or later (node on PATH) for the JavaScript client")
@pytest.mark.conformance(CORPUS_WHY)
def test_serve_checks_zigai_and_a_javascript_port_over_http(conformance_root: Path, tmp_path: Path) -> None:
    corpus = conformance_root / "zigai-cassettes"
    process, base = _serve(corpus, tmp_path)
    try:
        cases = [_port_case(corpus, r, base) for r in JS_RIGHT] + [_port_case(corpus, r, base, True) for r in JS_WRONG]
        node = subprocess.run([str(NODE), str(ROOT / "tests" / "conformance_port.mjs")], input=json.dumps(cases),
                              capture_output=True, text=True, timeout=120, check=True)
        js = {line["id"]: line for line in map(json.loads, node.stdout.splitlines())}
        wrong = tmp_path / "wrong-scenarios.yaml"  # zigai asked for another prompt on two recordings
        wrong.write_text("scenarios:\n" + "".join(
            f"  - match: {r}\n    family: buffered\n    prompt: 'Reply with exactly: pong (changed)'\n"
            "    settings: {max_tokens: 256}\n" for r in ZIGAI_WRONG), encoding="utf-8")
        zigai = subprocess.run(
            [sys.executable, "-m", "zigai", "conformance", "run", "--server", base, "--cassettes", str(corpus),
             "--scenarios", str(wrong), *[a for r in ZIGAI_RIGHT + ZIGAI_WRONG for a in ("--only", r)]],
            capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    finally:
        err = _stop(process)
    assert zigai.returncode == 1, zigai.stdout + zigai.stderr  # the two wrong runs failed
    lines = zigai.stdout.splitlines()
    assert lines[-1] == "4 passed, 2 failed, 0 skipped", zigai.stdout
    assert all(f"PASS {r}" in lines for r in ZIGAI_RIGHT)
    assert js["models.openai_gpt_4o_mini"]["ok"] and js["buffered.anthropic_claude_sonnet_4_5"]["ok"], js
    assert "31" in js["models.anthropic_claude_haiku_4_5"]["output"]
    assert not js["buffered.openai_gpt_5_mini"]["ok"] and "conformance_mismatch" in js["buffered.openai_gpt_5_mini"]["error"]

    report = {s["id"]: s for s in json.loads((tmp_path / "report.json").read_text("utf-8"))["scenarios"]}
    for relative in JS_RIGHT + ZIGAI_RIGHT:
        ident = relative.removesuffix(".yaml").replace("/", ".")
        assert report[ident]["verdict"] == "pass", report[ident]
        assert report[ident]["consumed"] == report[ident]["interactions"]
    for relative, pointer in [(JS_WRONG[0], "/input/0/content"), (ZIGAI_WRONG[0], "/input/0/content"),
                              (JS_WRONG[1], "/messages/0/content/0/text"),
                              (ZIGAI_WRONG[1], "/messages/0/content/0/text")]:
        scenario = report[relative.removesuffix(".yaml").replace("/", ".")]
        mismatch = scenario["first_mismatch"]
        assert scenario["verdict"] == "fail" and scenario["consumed"] == 0
        assert mismatch["kind"] == "body" and mismatch["difference"]["pointer"] == pointer, mismatch
        assert mismatch["difference"]["expected"] == "Reply with exactly: pong"
        assert mismatch["difference"]["actual"] == "Reply with exactly: pong (changed)"
        removed = [line for line in mismatch["diff"].splitlines() if line.startswith("-  ")]
        added = [line for line in mismatch["diff"].splitlines() if line.startswith("+  ")]
        assert [line.endswith('": "Reply with exactly: pong",') for line in removed] == [True], mismatch["diff"]
        assert [line.endswith('": "Reply with exactly: pong (changed)",') for line in added] == [True]
    assert report["openai_stream_tool_loop"]["verdict"] == "not-run"
    suite = ElementTree.fromstring((tmp_path / "report.xml").read_bytes())
    assert suite.get("failures") == "4" and suite.get("tests") == str(len(report))
    assert "4 fail" in err and "8 pass" in err and "0 unrouted" in err
    assert process.returncode == 1  # serve's own exit code says a scenario failed
