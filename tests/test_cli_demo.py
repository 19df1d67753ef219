"""``zigai demo``, its packaged cassette and its strict loopback replay server."""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

import pytest

from zigai.cli import CassetteReplayError
from zigai.cli.demo import (
    CASSETTE_DIR,
    CASSETTE_NAME,
    CASSETTE_PACKAGE,
    build_demo_agent,
    cassette_text,
)
from zigai.cli.replay import ReplayServer, load_exchanges
from zigai.provider import ProviderServerError

ROOT = Path(__file__).resolve().parent.parent


def test_demo_streams_the_tool_loop_over_real_http(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "zigai", "demo"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "In Lisbon it is 19 °C with light rain right now.\n"
    lines = done.stderr.splitlines()
    assert lines[0].startswith(
        "zigai demo: replaying zigai/cli/data/demo_weather_stream.yaml on http://127.0.0.1:")
    assert lines[1:] == [
        "[prompt] What is the weather in Lisbon right now?",
        '[tool call] get_weather {"city":"Lisbon"}',
        '[tool result] get_weather: {"city":"Lisbon","temperature_c":19,"conditions":"light rain"}',
        "[done] 2 requests, 1 tool call, 166 input + 31 output tokens",
    ]


def test_demo_cassette_is_package_data_loadable_from_any_install() -> None:
    from importlib import resources

    resource = resources.files(CASSETTE_PACKAGE) / CASSETTE_DIR / CASSETTE_NAME
    assert resource.is_file()
    text = resource.read_text(encoding="utf-8")
    assert text == cassette_text()
    assert len(load_exchanges(text)) == 2
    # setup.cfg ships it in wheels and non-editable installs (not only in the source tree).
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    patterns = config["options.package_data"][CASSETTE_PACKAGE].split()
    assert f"{CASSETTE_DIR}/*.yaml" in patterns
    assert config["options"]["packages"] == "find:"
    assert not (ROOT / "cassettes" / CASSETTE_NAME).exists()


def test_replay_is_strict_about_the_request_body() -> None:
    exchanges = load_exchanges(cassette_text())
    with ReplayServer(exchanges) as server:
        agent = build_demo_agent(server.base_url)
        with pytest.raises(ProviderServerError):
            agent.run("A different prompt")
        with pytest.raises(CassetteReplayError, match="body differs"):
            server.check()


def test_unused_interactions_fail_the_check() -> None:
    exchanges = load_exchanges(cassette_text())
    with ReplayServer(exchanges) as server:
        with pytest.raises(CassetteReplayError, match="2 cassette interaction"):
            server.check()


def test_malformed_cassette_is_rejected() -> None:
    with pytest.raises(CassetteReplayError):
        load_exchanges("version: 2\ninteractions: []\n")
    with pytest.raises(CassetteReplayError):
        load_exchanges("version: 1\ninteractions:\n- request: {method: GET}\n  response: {status: 200}\n")


def test_the_demo_cassette_is_read_by_the_kits_parser() -> None:
    """One parser: the demo refuses what the conformance kit refuses (a sensitive header, an
    empty recording) and serves what it reads (an AWS event stream, framed again)."""
    from zigai.conformance.cassette import parse_cassette

    text = cassette_text()
    assert load_exchanges(text) == parse_cassette(text)
    head = "version: 1\ninteractions:\n- request: {method: GET, uri: 'http://x/'}\n  response: {status: 200"
    with pytest.raises(CassetteReplayError, match="sensitive header 'set-cookie'"):
        load_exchanges(head + ", headers: {set-cookie: ['s=1']}}\n", "c.yaml")
    with pytest.raises(CassetteReplayError, match="non-empty list"):
        load_exchanges("version: 1\ninteractions: []\n")
    stream = load_exchanges(head + ", body: {type: eventstream, content: [{headers: {':event-type': messageStop},"
                            " payload: {stopReason: end_turn}}]}}\n")
    with ReplayServer(stream) as server:
        import urllib3

        from zigai.providers.eventstream import iter_messages

        reply = urllib3.PoolManager().request("GET", server.base_url + "/")
        server.check()
    (message,) = iter_messages([reply.data])
    assert dict(message.headers) == {":event-type": "messageStop"}
    assert message.payload == b'{"stopReason":"end_turn"}'


def test_replay_answers_every_kind_of_mismatch_with_599_and_names_it() -> None:
    import urllib3

    text = ("version: 1\ninteractions:\n"
            "- request: {method: POST, uri: 'http://x/j?q=1', body: {type: json, content: {a: 1}}}\n"
            "  response: {status: 200, body: {type: text, content: ok}}\n"
            "- request: {method: POST, uri: 'http://x/t', body: {type: text, content: hello}}\n"
            "  response: {status: 201}\n")
    http = urllib3.PoolManager()
    with ReplayServer(load_exchanges(text)) as server:
        def send(path: str, body: bytes, method: str = "POST") -> tuple[int, bytes]:
            reply = http.request(method, server.base_url + path, body=body, retries=False)
            return reply.status, reply.data

        assert send("/j", b"{}") == (599, b"expected POST /j?q=1, got POST /j")
        assert send("/j?q=1", b"{not json") == (599, b"request body is not JSON")
        assert send("/j?q=1", b'{"a": 1.0}')[0] == 599  # types matter
        assert send("/j?q=1", b'{"a": 1}') == (200, b"ok")
        assert send("/t", b"hello!") == (599, b"request #1 text body differs from the cassette")
        assert send("/t", b"hello") == (201, b"")
        assert send("/t", b"hello") == (599, b"unexpected extra request POST /t")
        with pytest.raises(CassetteReplayError, match="got POST /j;.*not JSON;.*body differs.*extra request"):
            server.check()


def test_replay_refuses_an_oversized_or_smuggled_request_before_reading_it() -> None:
    import socket

    from zigai.cli.replay import MAX_BODY

    exchanges = load_exchanges(cassette_text())
    with ReplayServer(exchanges) as server:
        port = int(server.base_url.rsplit(":", 1)[1])
        for head, status in ((b"Content-Length: %d\r\n" % (MAX_BODY + 1), b"413"),
                             (b"Transfer-Encoding: chunked\r\nContent-Length: 1\r\n", b"400")):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n" + head + b"\r\n")
                assert sock.recv(100).startswith(b"HTTP/1.1 " + status)
        with pytest.raises(CassetteReplayError, match="2 cassette interaction"):
            server.check()  # nothing was consumed
