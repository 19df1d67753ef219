"""The built-in chat page driven in headless Chromium against a real ``zigai web`` process.

Debian's ``chromium`` (``.ci/run`` installs it) is driven by Playwright's Python package
pointed at ``/usr/bin/chromium`` — Playwright never downloads a browser here.  The server is
``zigai web --agent tests/support/web_agent.py --port 0`` in a child process; the agent's
tools append to a ledger file, so "the tool ran once" is read from disk.  Each test writes
screenshots to ``.artifacts/ui-screenshots/`` (git-ignored) for a person to look at.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
AGENT_FILE = ROOT / "tests" / "support" / "web_agent.py"
SHOTS = ROOT / ".artifacts" / "ui-screenshots"
CHROMIUM = os.environ.get("ZIGAI_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WAIT_MS = 30_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Chromium is not installed at {CHROMIUM}: apt-get install chromium "
                    "(or set ZIGAI_CHROMIUM to its path)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


class WebServer:
    """``zigai web`` in a child process; ``url`` is the page, ``ledger`` the tool log."""

    def __init__(self, tmp: Path, agent: str = "agent") -> None:
        self.ledger = tmp / "ledger.txt"
        self.ledger.write_text("")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
                   ZIGAI_WEB_LEDGER=str(self.ledger))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "zigai", "web", "--agent", f"{AGENT_FILE}:{agent}", "--port", "0"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True)
        self.stderr: list[str] = []
        found = threading.Event()
        self.url = ""

        def read() -> None:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                self.stderr.append(line)
                matched = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
                if matched and not found.is_set():
                    self.url = matched.group(1)
                    found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(60):
            self.stop()
            raise AssertionError("zigai web printed no URL: " + "".join(self.stderr))

    def tools_run(self) -> list[str]:
        return self.ledger.read_text().splitlines()

    def stop(self) -> int:
        self.process.terminate()
        try:
            return self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(15)
            raise AssertionError("zigai web ignored SIGTERM") from None


@pytest.fixture
def server(tmp_path: Path) -> Iterator[WebServer]:
    web = WebServer(tmp_path)
    try:
        yield web
    finally:
        assert web.stop() == 0, "".join(web.stderr)


@pytest.fixture
def page(browser: Any, server: WebServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    opened.goto(server.url)
    try:
        yield opened
    finally:
        shot(opened, request.node.name + "-final")
        context.close()
    expected = getattr(request.node, "expected_console_errors", ())
    assert [e for e in errors if not any(x in e for x in expected)] == [], errors


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def ask(page: Any, text: str) -> None:
    box = page.get_by_label("Message")
    box.fill(text)
    box.press("Enter")


def wait_status(page: Any, text: str) -> None:
    page.wait_for_function("(t) => document.getElementById('status').textContent === t", arg=text)


def assistant_texts(page: Any) -> list[str]:
    texts: list[str] = page.locator(".msg.assistant .text").all_inner_texts()
    return texts


def test_streamed_text_arrives_in_order_with_usage(page: Any) -> None:
    page.evaluate("""() => {
        window.seen = [];
        new MutationObserver(() => {
            const last = [...document.querySelectorAll('.msg.assistant .text')].pop();
            if (last && window.seen[window.seen.length - 1] !== last.textContent) {
                window.seen.push(last.textContent);
            }
        }).observe(document.getElementById('transcript'),
                   {subtree: true, childList: true, characterData: true});
    }""")
    ask(page, "hello")
    page.wait_for_selector(".msg.assistant")
    shot(page, "streaming")
    wait_status(page, "Done.")
    seen = page.evaluate("window.seen")
    assert seen[-1] == "Streamed text arrives in order."
    assert len(seen) >= 3, seen  # the text grew in steps, not in one piece
    for earlier, later in zip(seen, seen[1:], strict=False):
        assert later.startswith(earlier), seen
    assert page.locator(".msg.user .text").all_inner_texts() == ["hello"]
    usage = page.locator(".usage").inner_text()
    assert re.fullmatch(r"Usage: \d+ input \+ \d+ output tokens; cost unknown", usage), usage
    assert page.evaluate("document.activeElement.id") == "prompt"


def test_thinking_is_shown_apart_from_the_answer(page: Any) -> None:
    ask(page, "think first")
    wait_status(page, "Done.")
    thinking = page.locator("details.thinking")
    assert thinking.locator("summary").inner_text() == "Thinking"
    assert thinking.locator(".text").text_content() == "Weighing the question."
    assert assistant_texts(page) == ["Thought it through."]


def test_tool_call_shows_arguments_and_result(page: Any, server: WebServer) -> None:
    ask(page, "weather?")
    wait_status(page, "Done.")
    tool = page.locator(".tool")
    assert tool.locator(".who").inner_text() == "Tool call: get_weather"
    assert json.loads(tool.locator(".args").inner_text()) == {"city": "Lisbon"}
    assert json.loads(tool.locator(".result").inner_text()) == {"city": "Lisbon", "sky": "sunny"}
    assert assistant_texts(page) == ["get_weather finished: ok"]
    assert server.tools_run() == ["get_weather"]


def test_approve_runs_the_gated_tool_once(page: Any, server: WebServer) -> None:
    ask(page, "delete my notes")
    approve = page.get_by_role("button", name="Approve")
    approve.wait_for()
    shot(page, "approval")
    assert page.evaluate("document.activeElement.textContent") == "Approve"  # focus moved there
    assert page.get_by_role("region", name="Approvals").inner_text().startswith(
        "Approve the call of delete_file?")
    assert page.locator("#send").is_disabled()
    assert server.tools_run() == []  # nothing runs before the decision
    page.keyboard.press("Enter")  # the focused Approve button, by keyboard
    wait_status(page, "Done.")
    assert page.locator(".tool .result").inner_text() == "deleted notes.txt"
    assert assistant_texts(page)[-1] == "delete_file finished: deleted notes.txt"
    assert page.get_by_role("region", name="Approvals").is_hidden()
    assert server.tools_run() == ["delete_file notes.txt"]


def test_deny_answers_the_model_without_running_the_tool(page: Any, server: WebServer) -> None:
    ask(page, "drop the table")
    page.get_by_role("button", name="Deny").click()
    wait_status(page, "Done.")
    assert assistant_texts(page)[-1].startswith("drop_table finished: ")
    assert "denied" in assistant_texts(page)[-1]
    assert page.locator(".tool .state").inner_text() == "denied"
    assert server.tools_run() == []


def test_stop_cancels_a_long_run(page: Any) -> None:
    ask(page, "a long answer")
    page.wait_for_function("() => document.querySelector('.msg.assistant .text')?.textContent.includes('tick 2')")
    assert page.locator("#stop").is_enabled()
    page.get_by_role("button", name="Stop").click()
    wait_status(page, "Stopped.")
    shot(page, "stopped")
    stopped_at = assistant_texts(page)[-1]
    assert page.locator(".notice").inner_text() == "Stopped."
    assert page.locator(".error").count() == 0  # a cancel is not shown as a failure
    assert page.locator("#stop").is_disabled() and page.locator("#send").is_enabled()
    time.sleep(1.0)
    assert assistant_texts(page)[-1] == stopped_at  # nothing arrives after the stop


def test_escape_stops_a_run_from_the_keyboard(page: Any) -> None:
    ask(page, "another long answer")
    page.wait_for_function("() => document.querySelector('.msg.assistant .text')?.textContent.includes('tick 1')")
    page.keyboard.press("Escape")
    wait_status(page, "Stopped.")
    assert page.evaluate("document.activeElement.id") == "prompt"  # back to typing


def test_reload_keeps_the_conversation_and_continues_the_thread(page: Any) -> None:
    ask(page, "hello")
    wait_status(page, "Done.")
    page.reload()
    page.wait_for_selector(".msg.assistant")
    assert page.locator(".msg.user .text").all_inner_texts() == ["hello"]
    assert assistant_texts(page) == ["Streamed text arrives in order."]
    ask(page, "count my messages")
    wait_status(page, "Done.")
    assert assistant_texts(page)[-1] == "You have sent 2 messages."  # the server's thread went on
    page.get_by_role("button", name="New chat").click()
    assert page.locator(".msg").count() == 0
    ask(page, "count again")
    wait_status(page, "Done.")
    assert assistant_texts(page) == ["You have sent 1 messages."]


def png_pixel() -> bytes:
    """A real 1x1 red PNG (so the browser can decode the thumbnail)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
            + chunk(b"IEND", b""))


PNG = png_pixel()


def test_attached_files_reach_the_model_and_show_on_the_page(page: Any) -> None:
    page.get_by_label("Attach images, PDF or text files").set_input_files([
        {"name": "pixel.png", "mimeType": "image/png", "buffer": PNG},
        {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"hello notes"},
    ])
    ask(page, "what is attached")
    wait_status(page, "Done.")
    shot(page, "files")
    assert assistant_texts(page) == [
        f"I received: what is attached [image image/png {len(PNG)} bytes] [document text/plain 11 bytes]"]
    image = page.locator(".msg.user .files img")
    assert image.get_attribute("alt") == "pixel.png"
    assert image.evaluate("img => [img.complete, img.naturalWidth]") == [True, 1]  # decoded, not broken
    assert page.locator(".msg.user .files .file").inner_text() == "Attached: notes.txt"
    assert page.evaluate("document.getElementById('attach').files.length") == 0  # cleared after sending


def test_a_refused_file_is_reported(page: Any, request: pytest.FixtureRequest) -> None:
    request.node.expected_console_errors = ("status of 400",)  # the refusal itself
    page.get_by_label("Attach images, PDF or text files").set_input_files(
        [{"name": "fake.png", "mimeType": "image/png", "buffer": b"not a png"}])
    ask(page, "what is attached")
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert alert.inner_text() == "Error: messages[0] part 1: the bytes are not image/png"


def test_errors_are_announced(page: Any) -> None:
    ask(page, "fail now")
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert alert.inner_text() == "Error: internal error: the run failed"
    wait_status(page, "The run failed.")


def test_usage_shows_the_cost_of_a_priced_model(browser: Any, tmp_path: Path) -> None:
    web = WebServer(tmp_path, "priced_agent")
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(web.url)
        ask(page, "hello")
        wait_status(page, "Done.")
        usage = page.locator(".usage").inner_text()
        assert re.fullmatch(r"Usage: \d+ input \+ \d+ output tokens; cost \$0\.\d{6}", usage), usage
    finally:
        context.close()
        assert web.stop() == 0


def test_narrow_screen_and_keyboard_only(browser: Any, server: WebServer) -> None:
    context = browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        page.goto(server.url)
        assert page.evaluate("document.activeElement.id") == "prompt"  # typing works at once
        page.keyboard.type("hello")
        page.keyboard.press("Enter")
        wait_status(page, "Done.")
        shot(page, "narrow")
        width = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert width[0] <= width[1], width  # no sideways scrolling
        assert page.get_by_role("log", name="Conversation").get_attribute("aria-live") == "polite"
        assert page.get_by_role("status").inner_text() == "Done."
        order = []
        page.evaluate("document.getElementById('new-chat').focus()")
        for _ in range(4):
            page.keyboard.press("Tab")
            order.append(page.evaluate("document.activeElement.id"))
        assert order == ["transcript", "prompt", "attach", "send"]  # Stop is disabled between runs
    finally:
        context.close()


def test_page_files_carry_the_security_headers(page: Any, server: WebServer) -> None:
    for route in ("", "static/page.js", "static/page.css"):
        response = page.request.get(server.url + route)
        assert response.status == 200
        headers = response.headers
        assert "script-src 'self'" in headers["content-security-policy"]
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"
