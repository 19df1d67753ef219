"""The built-in chat page's server side: routes, headers, package data, ``zigai web``, cost.

The page itself is driven in a real browser by ``tests/test_ui_browser.py``; these tests
cover what a browser cannot see: which routes exist, what ``ui_app`` refuses, how the CLI
builds and serves the agent and shuts down.
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import re
import threading
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.ui_agents import text_agent

from zigai.cli import ExitCode, main
from zigai.cli.web import web_command
from zigai.ui import LocalServer, ui_app, ui_page
from zigai.ui.agui import AguiEncoder, entry_cost
from zigai.ui.events import RunEnd, UsageEntry

ROOT = Path(__file__).resolve().parent.parent


def request(url: str, method: str, path: str, body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    connection.request(method, path, body, {"Content-Type": "application/json"} if body else {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def test_page_routes_serve_package_files_with_a_strict_policy() -> None:
    with LocalServer(ui_page(text_agent())) as server:
        status, headers, page = request(server.url, "GET", "/")
        assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
        assert b'data-endpoint="/"' in page and b'src="/static/page.js"' in page
        assert b"http" not in page.replace(b'http-equiv', b'')  # nothing loaded from elsewhere
        for route, kind in (("/static/page.js", "text/javascript"), ("/static/page.css", "text/css")):
            status, headers, body = request(server.url, "GET", route)
            name = route.rsplit("/", 1)[1]
            assert (status, headers["content-type"].split(";")[0]) == (200, kind)
            assert body == (resources.files("zigai.ui") / "static" / name).read_bytes()
            assert headers["x-content-type-options"] == "nosniff"
            assert "default-src 'none'" in headers["content-security-policy"]
        status, headers, body = request(server.url, "HEAD", "/static/page.js")
        assert status == 200 and body == b"" and int(headers["content-length"]) > 1000
        assert request(server.url, "GET", "/static/other.js")[0] == 404
        assert request(server.url, "GET", "/static/../setup.cfg")[0] == 404
        status, _, body = request(server.url, "POST", "/", json.dumps(
            {"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "user", "content": "hi"}]}).encode())
        assert status == 200 and b"RUN_FINISHED" in body  # the page's endpoint is the app's


def test_page_is_served_below_its_mount_path_with_the_path_escaped() -> None:
    app = ui_app(text_agent(), "agui", path='/chat"x/', page=True)
    with LocalServer(app) as server:
        status, _, page = request(server.url, "GET", '/chat"x/')
        assert status == 200
        assert b'data-endpoint="/chat&quot;x/"' in page and b'"/chat"x/' not in page
        assert request(server.url, "GET", '/chat"x/static/page.css')[0] == 200
        assert request(server.url, "GET", "/static/page.css")[0] == 404


def test_without_page_get_is_still_refused_and_vercel_has_no_page() -> None:
    with LocalServer(ui_app(text_agent(), "agui")) as server:
        assert request(server.url, "GET", "/")[0] == 405
        assert request(server.url, "GET", "/static/page.js")[0] == 404
    with pytest.raises(ValueError, match="speaks AG-UI"):
        ui_app(text_agent(), "vercel", page=True)


def test_usage_entries_carry_the_cost_of_priced_models_only() -> None:
    assert entry_cost(UsageEntry("openai", "gpt-5-mini", 1000, 500)) == "0.001250000"
    assert entry_cost(UsageEntry("function", "function", 1000, 500)) is None
    assert entry_cost(UsageEntry(None, "gpt-5-mini", 1000, 500)) is None
    end = RunEnd("t", "r", "complete", result="ok",
                 usage=(UsageEntry("openai", "gpt-5-mini", 1000, 500), UsageEntry("function", "f", 1, 1)))
    (finished,) = AguiEncoder().encode(end)
    assert [item.get("costUsd") for item in finished["usage"]] == ["0.001250000", None]
    from ag_ui.core import RunFinishedEvent

    RunFinishedEvent.model_validate(finished)  # still the protocol's event


# -- zigai web ------------------------------------------------------------------------------


def web_args(*argv: str) -> argparse.Namespace:
    from zigai.cli.app import build_parser

    return build_parser().parse_args(["web", *argv])


def serve_in_thread(args: argparse.Namespace, env: dict[str, str]) -> tuple[threading.Event, io.StringIO,
                                                                              threading.Thread, list[int]]:
    stop, err, codes = threading.Event(), io.StringIO(), []
    thread = threading.Thread(target=lambda: codes.append(web_command(args, env, err, stop)), daemon=True)
    thread.start()
    return stop, err, thread, codes


def wait_url(err: io.StringIO, thread: threading.Thread) -> str:
    for _ in range(400):
        found = re.search(r"http://127\.0\.0\.1:\d+/", err.getvalue())
        if found:
            return found.group(0)
        thread.join(0.05)
    raise AssertionError("no URL: " + err.getvalue())


def test_web_serves_a_model_string_agent_until_stopped() -> None:
    stop, err, thread, codes = serve_in_thread(web_args("--model", "test", "--port", "0"), {})
    url = wait_url(err, thread)
    status, _, body = request(url, "POST", "/", json.dumps(
        {"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "user", "content": "hi"}]}).encode())
    assert status == 200 and b'"RUN_FINISHED"' in body
    assert request(url, "GET", "/")[0] == 200
    stop.set()
    thread.join(10)
    assert codes == [ExitCode.ok] and not thread.is_alive()


def test_web_serves_the_agent_of_an_agent_file(tmp_path: Path) -> None:
    source = tmp_path / "mine.py"
    source.write_text("from zigai import Agent\nfrom zigai.testing import TestModel\n"
                      "helper = Agent(TestModel(custom_output_text='from the file'))\n")
    stop, err, thread, codes = serve_in_thread(web_args("--agent", f"{source}:helper", "--port", "0"), {})
    url = wait_url(err, thread)
    _, _, body = request(url, "POST", "/", json.dumps(
        {"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "user", "content": "hi"}]}).encode())
    assert b'"result":"from the file"' in body
    stop.set()
    thread.join(10)
    assert codes == [ExitCode.ok]


def test_web_serves_an_agent_spec_with_its_tool_registry() -> None:
    examples = ROOT / "docs" / "examples"
    args = web_args("--spec", str(examples / "agent_spec" / "offline.yaml"),
                    "--tools", str(examples / "weather_tools.py"), "--port", "0")
    stop, err, thread, codes = serve_in_thread(args, {})
    url = wait_url(err, thread)
    _, _, body = request(url, "POST", "/", json.dumps(
        {"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "user", "content": "weather?"}]}).encode())
    assert b'"TOOL_CALL_RESULT"' in body and b'"RUN_FINISHED"' in body  # the spec's tool ran
    stop.set()
    thread.join(10)
    assert codes == [ExitCode.ok]


@pytest.mark.parametrize(("argv", "message"), [
    (["--agent", "mine.py", "--model", "test"], "--agent defines the agent; remove --model"),
    (["--agent", "mine.py:other"], "has no Agent named 'other'"),
    (["--agent", "missing.py"], "does not exist"),
    (["--port", "70000"], "expected a port from 0 to 65535"),
    (["--port", "-1"], "expected a port from 0 to 65535"),
    (["--host", "0.0.0.0"], "invalid choice"),
])
def test_web_refuses_bad_invocations_as_usage_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      argv: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text("agent = None\n")
    err = io.StringIO()
    assert main(["web", *argv], env={}, out=io.StringIO(), err=err) == ExitCode.usage
    assert message in err.getvalue()


def test_web_port_bounds() -> None:
    assert web_args("--port", "65535").port == 65535
    assert web_args("--port", "0").port == 0
    assert web_args().port == 8000 and web_args().host == "127.0.0.1"


def test_readme_names_zigai_web() -> None:
    readme = (ROOT / "README.md").read_text()
    assert any(line.lstrip("-* `").startswith("zigai web") for line in readme.splitlines()), \
        "README needs its one line about `zigai web`"
