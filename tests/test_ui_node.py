"""zigai's UI streams consumed by the official JavaScript peers over loopback.

* ``tests/node/agui_client.mjs`` drives every scenario with ``@ag-ui/client``'s
  ``HttpAgent`` and reports the messages the client reconstructed;
* ``tests/node/vercel_client.mjs`` reads the Vercel streams with the ``ai`` package's
  ``DefaultChatTransport`` and ``readUIMessageStream`` (including an approval round trip).

The peers are pinned in ``tests/node/package-lock.json`` and installed by
``scripts/node_peers.sh`` (``.ci/run`` runs it).  Without Node.js these tests skip; with
Node but without the installed peers they skip locally and fail under CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support import ui_agents
from support.ui_agents import router

from zigai.ui import LocalServer

NODE_DIR = Path(__file__).resolve().parent / "node"
PEERS = NODE_DIR / "node_modules"


def _node() -> str:
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        pytest.skip("Node.js and npm are not installed; install them, then run scripts/node_peers.sh")
    if not (PEERS / "@ag-ui" / "client").is_dir() or not (PEERS / "ai").is_dir():
        message = "the JavaScript peers are not installed: run scripts/node_peers.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return node


def run_peer(script: str, protocol: str) -> dict[str, Any]:
    node = _node()
    with LocalServer(router(protocol)) as server:
        done = subprocess.run([node, script, server.url], cwd=NODE_DIR, capture_output=True,
                              text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def without_ids(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in m.items() if k != "id"} for m in messages]


def test_agui_client_reconstructs_the_conversation() -> None:
    ui_agents.PUBLISHED.clear()
    report = run_peer("agui_client.mjs", "agui")

    text = report["text"]
    assert text["result"] == "Hello, world"
    assert without_ids(text["messages"]) == [
        {"role": "user", "content": "Say hello"},
        {"role": "reasoning", "content": "Let me greet."},
        {"role": "assistant", "content": "Hello, world"},
    ]

    tools = report["tools"]
    assert tools["result"] == "It is sunny in Paris."
    user, call, result, final = tools["messages"][:4]
    assert call["role"] == "assistant" and call["content"] == "Checking the weather."
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in call["toolCalls"]] == [("call_weather_1", "weather", {"city": "Paris"})]
    assert result["role"] == "tool" and result["toolCallId"] == "call_weather_1"
    assert json.loads(result["content"]) == {"city": "Paris", "sky": "sunny", "temperature_c": 21}
    assert final == {**final, "role": "assistant", "content": "It is sunny in Paris."}
    # the second turn echoed tool messages back; the server used its own history and answered
    again = report["toolsAgain"]
    assert again["errors"] == [] and again["messages"][-1]["content"] == "It is sunny in Paris."
    assert len(again["messages"]) == 6

    assert report["structured"]["result"] == {"city": "Paris", "rank": 12}

    approval = report["approval"]
    assert approval["paused"]["types"][-1] == "RUN_FINISHED" and approval["paused"]["result"] is None
    (interrupt,) = approval["interrupts"]
    assert (interrupt["reason"], interrupt["toolCallId"]) == ("tool_approval", "call_pub_1")
    assert approval["resumed"]["result"] == "Done: published Oslo"
    assert without_ids(approval["messages"])[1:] == [
        {"role": "assistant", "toolCalls": [{"id": "call_pub_1", "type": "function",
                                             "function": {"name": "publish",
                                                          "arguments": '{"city": "Oslo"}'}}]},
        {"role": "tool", "toolCallId": "call_pub_1", "content": "published Oslo"},
        {"role": "assistant", "content": "Done: published Oslo"},
    ]
    assert ui_agents.PUBLISHED == ["Oslo"]

    failing = report["failing"]
    assert failing["types"][-1] == "RUN_ERROR"
    assert failing["errors"][0]["code"] == "RequestLimitExceeded"


def test_agui_client_runs_a_frontend_tool_and_follows_the_shared_state() -> None:
    frontend = run_peer("agui_client.mjs", "agui")["frontend"]
    asked = frontend["asked"]
    assert asked["errors"] == [] and asked["types"][-1] == "RUN_FINISHED"
    assert "STATE_DELTA" not in asked["types"]
    call = frontend["askedMessages"][-1]
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in call["toolCalls"]] == [("call_pick_1", "pick_color", {"options": ["red", "blue"]})]
    answered = frontend["answered"]
    assert answered["errors"] == [] and answered["result"] == "Done: theme blue saved for ana"
    assert "STATE_DELTA" in answered["types"]
    assert frontend["state"] == {"theme": "blue", "count": 1}  # the client applied the JSON Patch
    assert [m["role"] for m in frontend["messages"]] == ["user", "assistant", "tool", "assistant", "tool",
                                                         "assistant"]


def test_ai_sdk_reader_yields_text_tool_parts_and_finish() -> None:
    ui_agents.PUBLISHED.clear()
    report = run_peer("vercel_client.mjs", "vercel")

    def parts(name: str) -> list[dict[str, Any]]:
        assert report[name]["errors"] == [], report[name]["errors"]
        return [p for p in report[name]["message"]["parts"] if p["type"] != "step-start"]

    assert parts("text") == [
        {"type": "reasoning", "id": parts("text")[0]["id"], "text": "Let me greet.", "state": "done"},
        {"type": "text", "text": "Hello, world", "state": "done"},
    ]
    assert parts("tools") == [
        {"type": "text", "text": "Checking the weather.", "state": "done"},
        {"type": "tool-weather", "toolCallId": "call_weather_1", "state": "output-available",
         "input": {"city": "Paris"}, "output": {"city": "Paris", "sky": "sunny", "temperature_c": 21}},
        {"type": "text", "text": "It is sunny in Paris.", "state": "done"},
    ]
    assert parts("structured")[-1] == {"type": "data-zigai.result", "data": {"city": "Paris", "rank": 12}}
    paused = report["approval"]["paused"]["message"]["parts"][-1]
    assert (paused["type"], paused["state"]) == ("tool-publish", "approval-requested")
    resumed = [p for p in report["approval"]["resumed"]["message"]["parts"] if p["type"] != "step-start"]
    assert resumed[0]["state"] == "output-available" and resumed[0]["output"] == "published Oslo"
    assert resumed[-1] == {"type": "text", "text": "Done: published Oslo", "state": "done"}
    assert ui_agents.PUBLISHED == ["Oslo"]
    files = [p for p in report["files"]["message"]["parts"] if p["type"] == "text"]
    assert report["files"]["errors"] == [] and files == [{
        "type": "text", "state": "done",
        "text": "What is attached?; image image/png 19 bytes; "
                "document application/pdf https://example.com/spec.pdf"}]
    assert report["failing"]["errors"] == [
        "Error: RequestLimitExceeded: the next model request would exceed max_requests=1"]


def test_ai_sdk_reads_a_cancelled_vercel_stream_as_aborted_not_failed() -> None:
    """The client cancels through ``runs/<id>/cancel`` after the first text: the ``ai``
    package's transport accepts the ``abort`` chunk (its chunk schema), its reader reports no
    error and keeps the partial text, and nothing follows the abort (as in ``streamText``)."""
    cancelled = run_peer("vercel_client.mjs", "vercel")["cancelled"]
    assert cancelled["cancel"] == 202
    assert [c["type"] for c in cancelled["chunks"]] == [
        "start", "start-step", "text-start", "text-delta", "abort"]
    assert cancelled["chunks"][-1] == {"type": "abort", "reason": "cancelled by the client"}
    assert cancelled["errors"] == []
    parts = [p for p in cancelled["message"]["parts"] if p["type"] != "step-start"]
    assert parts == [{"type": "text", "text": "Working on it", "state": "streaming"}]
