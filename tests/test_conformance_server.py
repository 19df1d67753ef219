"""The conformance server's checks, answers, bounds and reports, over real loopback sockets."""

from __future__ import annotations

import http.client
import io
import json
import socket
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from zigai.cli import main as zigai_main
from zigai.conformance import (
    ConformanceServer,
    DuplicateScenarioId,
    InvalidCassette,
    InvalidScenarios,
)
from zigai.conformance.cassette import first_difference, parse_cassette
from zigai.conformance.catalog import (
    Entry,
    build_catalog,
    packaged_cassettes,
    packaged_scenarios,
    scenario_id,
)
from zigai.conformance.driver import RemoteServer, run_entries
from zigai.conformance.report import junit_xml, write_json, write_junit
from zigai.conformance.scenarios import load_scenarios
from zigai.conformance.server import _events, loopback
from zigai.errors import ConformanceError

TWO = """version: 1
interactions:
- request:
    method: POST
    uri: "https://api.example.test/v1/first"
    body: {type: json, content: {a: 1, b: [true, "x"]}}
  response:
    status: 200
    headers: {x-request-id: ["r1"]}
    body: {type: json, content: {ok: 1}}
- request:
    method: POST
    uri: "https://api.example.test/v1/second?alt=sse"
    body: {type: text, content: "plain"}
  response:
    status: 200
    body:
      type: text
      content: "data: {\\"n\\":1}\\n\\ndata: {\\"n\\":2}\\n\\n"
- request:
    method: GET
    uri: "https://api.example.test/v1/third"
  response:
    status: 404
    body: {type: json, content: {error: gone}}
"""


def _entry(text: str = TWO, ident: str = "two", normalize: str | None = None, tmp: Path | None = None) -> Entry:
    scenario = None
    if normalize is not None and tmp is not None:
        path = tmp / "s.yaml"
        path.write_text(f"scenarios:\n  - match: '*'\n    family: provider-files\n    normalize: [{normalize}]\n"
                        "    file: {filename: a, content: b, media_type: text/plain}\n    operations: [upload]\n",
                        encoding="utf-8")
        scenario = load_scenarios(path)[0]
    return Entry(ident, Path(f"{ident}.yaml"), f"{ident}.yaml", parse_cassette(text), scenario)


def _request(server: ConformanceServer, method: str, target: str, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    host, port = server.base_url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request(method, target, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def _first_mismatch(server: ConformanceServer, ident: str = "two") -> dict[str, Any]:
    mismatch = server.scenario_status(ident)["first_mismatch"]
    assert mismatch is not None
    return dict(mismatch)


def test_a_recording_played_in_order_passes_and_streams_its_events() -> None:
    with ConformanceServer([_entry()]) as server:
        assert server.scenario_status("two")["verdict"] == "not-run"
        status, headers, body = _request(server, "POST", "/s/two/v1/first", b'{"b":[true,"x"],"a":1}')
        assert (status, json.loads(body), headers["x-request-id"]) == (200, {"ok": 1}, "r1")
        assert headers["content-type"] == "application/json"
        assert server.scenario_status("two")["verdict"] == "incomplete"
        status, headers, body = _request(server, "POST", "/s/two/v1/second?alt=sse", b"plain")
        assert status == 200 and headers["content-type"] == "text/event-stream"
        assert body == b'data: {"n":1}\n\ndata: {"n":2}\n\n'
        status, _, body = _request(server, "GET", "/s/two/v1/third")
        assert (status, json.loads(body)) == (404, {"error": "gone"})
        state = server.scenario_status("two")
        assert (state["verdict"], state["consumed"], state["interactions"]) == ("pass", 3, 3)
        assert state["prefix"] == f"{server.base_url}/s/two"
        assert state["routes"] == ["POST /v1/first", "POST /v1/second?alt=sse", "GET /v1/third"]


@pytest.mark.parametrize(
    ("method", "target", "body", "kind", "message"),
    [
        ("POST", "/s/two/v1/first", b'{"a":1.0,"b":[true,"x"]}', "body", "differs from the recording at /a"),
        ("POST", "/s/two/v1/first", b'{"a":1,"b":[true]}', "body", "differs from the recording at /b"),
        ("POST", "/s/two/v1/first", b"not json", "body", "not JSON but JSON was recorded"),
        ("POST", "/s/two/v1/first", None, "body", "has no body but one was recorded"),
        ("PUT", "/s/two/v1/first", b"{}", "method", "expected interaction #0: POST /v1/first"),
        ("POST", "/s/two/v2/first", b"{}", "route", "expected interaction #0: POST /v1/first"),
        ("POST", "/s/two/v1/second?alt=sse", b"plain", "out_of_order",
         "matches recorded interaction #1, but #0 (POST /v1/first) comes first"),
    ],
)
def test_a_wrong_first_request_fails_the_scenario_with_a_clear_message(
        method: str, target: str, body: bytes | None, kind: str, message: str) -> None:
    with ConformanceServer([_entry()]) as server:
        status, headers, answer = _request(server, method, target, body)
        assert status == 400 and headers["x-zigai-conformance"] == "mismatch"
        assert message in json.loads(answer)["error"]["message"]
        mismatch = _first_mismatch(server)
        assert mismatch["kind"] == kind and message in mismatch["message"]
        assert server.scenario_status("two")["verdict"] == "fail"
        # every later request is refused, even the right one, and the first failure is kept
        status, _, answer = _request(server, "POST", "/s/two/v1/first", b'{"a":1,"b":[true,"x"]}')
        assert status == 400 and "already failed" in json.loads(answer)["error"]["message"]
        assert _first_mismatch(server)["kind"] == kind


def test_the_json_difference_names_the_first_pointer_and_carries_a_diff() -> None:
    with ConformanceServer([_entry()]) as server:
        _request(server, "POST", "/s/two/v1/first", b'{"a":1,"b":[true,"y"]}')
        mismatch = _first_mismatch(server)
        assert mismatch["difference"] == {"pointer": "/b/1", "expected": "x", "actual": "y"}
        assert '-    "x"' in mismatch["diff"] and '+    "y"' in mismatch["diff"]


def test_text_bodies_compare_exactly_and_a_body_nobody_recorded_fails() -> None:
    with ConformanceServer([_entry()]) as server:
        _request(server, "POST", "/s/two/v1/first", b'{"a":1,"b":[true,"x"]}')
        status, _, _ = _request(server, "POST", "/s/two/v1/second?alt=sse", b"plain ")
        assert status == 400 and "text body differs" in _first_mismatch(server)["message"]
    with ConformanceServer([_entry()]) as server:
        _request(server, "POST", "/s/two/v1/first", b'{"a":1,"b":[true,"x"]}')
        _request(server, "POST", "/s/two/v1/second?alt=sse", b"plain")
        _request(server, "GET", "/s/two/v1/third", b"{}")
        assert "has a body but none was recorded" in _first_mismatch(server)["message"]


def test_an_extra_request_after_the_last_interaction_fails() -> None:
    one = TWO.split("- request:")[0] + "- request:" + TWO.split("- request:")[3]
    with ConformanceServer([_entry(one, "one")]) as server:
        assert _request(server, "GET", "/s/one/v1/third")[0] == 404
        assert server.scenario_status("one")["verdict"] == "pass"
        status, _, answer = _request(server, "GET", "/s/one/v1/third")
        assert status == 400 and "extra request: all 1 recorded interactions were already used" in answer.decode()
        assert server.scenario_status("one")["verdict"] == "fail"


def test_unknown_scenarios_and_paths_outside_the_prefixes_are_unrouted_failures() -> None:
    with ConformanceServer([_entry()]) as server:
        status, _, answer = _request(server, "POST", "/v1/first", b"{}")
        assert status == 404 and "under /s/<scenario-id>/" in answer.decode()
        status, _, answer = _request(server, "POST", "/s/nope/v1/first", b"{}")
        assert status == 404 and "unknown scenario id 'nope'" in answer.decode()
        report = server.status()
        assert [u["target"] for u in report["unrouted"]] == ["/v1/first", "/s/nope/v1/first"]
        assert report["summary"] == {"pass": 0, "fail": 0, "incomplete": 0, "not-run": 1}


def test_a_body_at_the_limit_is_read_and_one_byte_more_is_refused_unread() -> None:
    body = json.dumps({"a": 1, "b": [True, "x"]}, separators=(",", ":")).encode()
    with ConformanceServer([_entry()], max_body_bytes=len(body)) as server:
        assert _request(server, "POST", "/s/two/v1/first", body)[0] == 200
    with ConformanceServer([_entry()], max_body_bytes=len(body) - 1) as server:
        status, headers, answer = _request(server, "POST", "/s/two/v1/first", body)
        assert status == 413 and headers["connection"] == "close"
        assert f"over the server's limit of {len(body) - 1} bytes" in answer.decode()
        assert _first_mismatch(server)["kind"] == "body_too_large"


def test_status_is_served_as_json_and_head_gets_the_head_only() -> None:
    with ConformanceServer([_entry()]) as server:
        status, headers, body = _request(server, "GET", "/_status")
        assert status == 200 and json.loads(body)["scenarios"][0]["id"] == "two"
        status, headers, body = _request(server, "HEAD", "/_status")
        assert status == 200 and body == b"" and int(headers["content-length"]) > 0


def test_events_keep_the_recorded_boundaries_and_rechunking_keeps_the_bytes() -> None:
    payload = "data: é1\n\nevent: x\ndata: 2\n\ndata: tail".encode()
    assert list(_events(payload)) == [b"data: \xc3\xa91\n\n", b"event: x\ndata: 2\n\n", b"data: tail"]
    with ConformanceServer([_entry()], rechunk=True, seed=3) as server:
        pieces = list(server._pieces(list(_events(payload))))
        assert b"".join(pieces) == payload and len(pieces) > 3
    with ConformanceServer([_entry()], rechunk=True, seed=3) as server:
        _request(server, "POST", "/s/two/v1/first", b'{"a":1,"b":[true,"x"]}')
        # read the streamed answer on a raw socket: the pieces arrive as one exact body
        host, port = server.base_url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(b"POST /s/two/v1/second?alt=sse HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
                         b"Connection: close\r\n\r\nplain")
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and body == b'data: {"n":1}\n\ndata: {"n":2}\n\n'


def test_named_normalizations_apply_only_to_the_scenario_that_names_them(tmp_path: Path) -> None:
    recorded = ("version: 1\ninteractions:\n- request:\n    method: POST\n    uri: 'https://x.test/upload/v1/files'\n"
                "    body: {type: text, content: '[REDACTED FILE CONTENT]'}\n  response: {status: 200}\n")
    headers = {"X-Goog-Upload-Command": "upload, finalize"}
    with ConformanceServer([_entry(recorded, "named", "multipart_redaction", tmp_path),
                            _entry(recorded, "plain")]) as server:
        assert _request(server, "POST", "/s/named/upload/v1/files", b"secret bytes", headers)[0] == 200
        assert _request(server, "POST", "/s/plain/upload/v1/files", b"secret bytes", headers)[0] == 400
    session = recorded.replace("/upload/v1/files'", "/upload/v1/files/REDACTED'")
    with ConformanceServer([_entry(session, "named", "upload_session_url", tmp_path)]) as server:
        target = "/s/named/upload/v1/files?upload_id=abc&upload_protocol=resumable"
        assert _request(server, "POST", target, b"[REDACTED FILE CONTENT]")[0] == 200


def test_reports_give_each_verdict_in_json_and_junit(tmp_path: Path) -> None:
    entries = [_entry(ident=name) for name in ("ok", "bad", "half", "idle")]
    with ConformanceServer(entries) as server:
        for name in ("ok", "half"):
            _request(server, "POST", f"/s/{name}/v1/first", b'{"a":1,"b":[true,"x"]}')
        _request(server, "POST", "/s/ok/v1/second?alt=sse", b"plain")
        _request(server, "GET", "/s/ok/v1/third")
        _request(server, "POST", "/s/bad/v1/first", b'{"a":2,"b":[true,"x"]}')
        status = server.status()
    assert status["summary"] == {"pass": 1, "fail": 1, "incomplete": 1, "not-run": 1}
    write_json(tmp_path / "r.json", status)
    write_junit(tmp_path / "r.xml", status)
    assert json.loads((tmp_path / "r.json").read_text("utf-8")) == status
    suite = ElementTree.fromstring((tmp_path / "r.xml").read_bytes())
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "2", "1")
    cases = {case.get("name"): case for case in suite}
    assert len(cases["ok"]) == 0 and cases["idle"][0].tag == "skipped"
    assert "JSON body differs from the recording at /a" in (cases["bad"][0].get("message") or "")
    assert cases["half"][0].get("message") == "incomplete: 1 of 3 interactions consumed"
    assert junit_xml(status).startswith(b"<?xml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("version: 2\ninteractions: []\n", "unsupported version 2"),
        ("version: 1\ninteractions: []\n", "non-empty list"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /}, response: {status: 99}}]\n", "invalid status"),
        ("version: 1\ninteractions: [{request: {method: GET}, response: {status: 200}}]\n", "missing ['uri']"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /, headers: {Authorization: [x]}},"
         " response: {status: 200}}]\n", "sensitive header 'Authorization'"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /}, response: {status: 200,"
         " body: {type: json, content: .nan}}}]\n", "non-finite number"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /}, response: {status: 200,"
         " body: {type: yaml, content: x}}}]\n", "body type must be"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /}, response: {status: 200,"
         " body: {type: text, content: [x]}}}]\n", "a text body's content must be a string"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /}, response: {status: 200,"
         " body: {type: none, content: x}}}]\n", "a body of type none has no content"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /}, response: {status: 200,"
         " body: {type: json, content: {1: x}}}}]\n", "non-string key"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /}, response: {status: 200,"
         " headers: [x]}}]\n", "headers must be a mapping"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /}, response: {status: 200,"
         " body: {type: json, content: 2023-01-01}}}]\n", "is not a JSON value"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /}, response: {status: 200,"
         " body: {type: json}}}]\n", "a body is"),
        ("version: 1\ninteractions: [{request: {method: 1, uri: /}, response: {status: 200}}]\n",
         "method and uri must be strings"),
        ("version: 1\ninteractions: [7]\n", "expected a mapping"),
        ("{unclosed\n", "not YAML"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /, body: {type: eventstream, content: []}},"
         " response: {status: 200}}]\n", "for a response, eventstream"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /}, response: {status: 200,"
         " body: {type: eventstream, content: []}}}]\n", "non-empty list of messages"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /}, response: {status: 200,"
         " body: {type: eventstream, content: [{payload: {}}]}}}]\n", "a message is {headers"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /}, response: {status: 200,"
         " body: {type: eventstream, content: [{headers: {a: 1.5}, payload: {}}]}}}]\n",
         "headers map names to strings, booleans or integers"),
        ("version: 1\ninteractions: [{request: {method: GET, uri: /}, response: {status: 200,"
         " body: {type: eventstream, content: [{headers: {}, payload: .inf}]}}}]\n", "non-finite number"),
    ],
)
def test_invalid_cassettes_are_refused_with_the_place_named(text: str, message: str) -> None:
    with pytest.raises(InvalidCassette, match=None) as caught:
        parse_cassette(text, "c.yaml")
    assert message in str(caught.value) and str(caught.value).startswith("c.yaml")


def test_a_redacted_session_url_header_is_the_one_sensitive_header_a_cassette_keeps() -> None:
    text = ("version: 1\ninteractions: [{request: {method: POST, uri: /}, response: {status: 200, headers: "
            "{x-goog-upload-url: ['https://x.test/upload/v1/files/REDACTED']}}}]\n")
    assert parse_cassette(text)[0].response_headers[0][0] == "x-goog-upload-url"
    with pytest.raises(InvalidCassette):
        parse_cassette(text.replace("REDACTED", "abc123"))


def test_first_difference_reports_missing_unexpected_and_length_changes() -> None:
    assert first_difference({"a": 1}, {}) == {"pointer": "/a", "expected": 1, "missing": True}
    assert first_difference({}, {"b/c": 1}) == {"pointer": "/b~1c", "actual": 1, "unexpected": True}
    assert first_difference([1], [1, 2]) == {"pointer": "/", "expected_length": 1, "actual_length": 2}
    assert first_difference(1, True) == {"pointer": "/", "expected": 1, "actual": True}
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) is None


def test_catalog_ids_are_unique_and_the_packaged_recordings_are_found(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "x.yaml").write_text(TWO, encoding="utf-8")
    assert scenario_id("buffered/openai.yaml") == "buffered.openai"
    with pytest.raises(ConformanceError, match="cannot be a scenario id"):
        scenario_id("with space.yaml")
    with pytest.raises(DuplicateScenarioId, match="'x'"):
        build_catalog([tmp_path / "a", tmp_path / "b"], [])
    scenarios = [s for path in packaged_scenarios() for s in load_scenarios(path)]
    entries = build_catalog([packaged_cassettes()], scenarios)
    assert len(entries) >= 34 and all(entry.scenario is not None for entry in entries)


def test_scenario_files_are_checked_against_the_shipped_json_schema(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    for text, message in [("scenarios:\n  - match: x\n    family: buffered\n    prompt: hi\n    normalize: [gzip]\n",
                           "scenarios/0/normalize/0"),
                          ("scenarios: 3\n", "scenarios: 3 is not of type 'array'"),
                          ("- [\n", "not a UTF-8 YAML document")]:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InvalidScenarios, match=None) as caught:
            load_scenarios(path)
        assert message in str(caught.value)
    path.write_bytes(b"x" * (4 * 1024 * 1024 + 1))
    with pytest.raises(InvalidScenarios, match="larger than"):
        load_scenarios(path)


def test_loopback_hosts() -> None:
    assert loopback("127.0.0.1") and loopback("::1") and loopback("localhost")
    assert not loopback("0.0.0.0") and not loopback("example.com")


def test_cli_refuses_a_public_host_and_missing_inputs(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert zigai_main(["conformance", "serve", "--host", "0.0.0.0"], out=out, err=err) == 2
    assert "not a loopback address; pass --allow-remote" in err.getvalue()
    assert zigai_main(["conformance", "run", "--cassettes", str(tmp_path / "none")], out=out, err=err) == 2
    assert "not found" in err.getvalue()
    assert zigai_main(["conformance"], out=out, err=err) == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 3\ninteractions: []\n", encoding="utf-8")
    assert zigai_main(["conformance", "run", "--cassettes", str(bad)], out=out, err=err) == 2
    assert "InvalidCassette" in err.getvalue()


def test_cli_run_writes_reports_and_fails_when_a_scenario_fails(tmp_path: Path) -> None:
    out = io.StringIO()
    code = zigai_main(["conformance", "run", "--only", "local/responses/*", "--report", str(tmp_path / "r.json"),
                       "--junit", str(tmp_path / "r.xml"), "--rechunk"], out=out, err=io.StringIO())
    assert code == 0, out.getvalue()
    assert out.getvalue().splitlines()[-1] == "8 passed, 0 failed, 0 skipped"
    report = json.loads((tmp_path / "r.json").read_text("utf-8"))
    assert report["summary"]["pass"] == 8 and report["summary"]["not-run"] == len(report["scenarios"]) - 8
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("scenarios:\n  - match: local/responses/buffered_text.yaml\n    family: buffered\n"
                     "    prompt: something else\n", encoding="utf-8")
    out = io.StringIO()
    assert zigai_main(["conformance", "run", "--only", "local/responses/buffered_text.yaml",
                       "--scenarios", str(wrong)], out=out, err=io.StringIO()) == 1
    assert "FAIL local/responses/buffered_text.yaml: server: request #0 (POST /v1/responses)" in out.getvalue()


def test_a_remote_server_is_read_through_its_status(tmp_path: Path) -> None:
    from zigai.security import UrlPolicy
    from zigai.transport import HttpTransport

    entries = [e for e in build_catalog([packaged_cassettes()],
                                        [s for path in packaged_scenarios() for s in load_scenarios(path)])
               if e.relative.startswith("local/anthropic/")]
    with ConformanceServer(entries) as server:
        out = io.StringIO()
        assert run_entries(entries[:2], server.base_url, out) == (2, 0, 0), out.getvalue()
        assert server.scenario_status(entries[0].id)["verdict"] == "pass"
        with HttpTransport(url_policy=UrlPolicy.local_development()) as http:
            remote = RemoteServer(server.base_url + "/", http)
            with pytest.raises(AssertionError, match="does not serve scenario 'nope'"):
                remote.scenario_status("nope")
            with pytest.raises(AssertionError, match="answered HTTP 404"):
                RemoteServer(server.base_url + "/elsewhere", http).scenario_status("x")


def test_package_data_ships_every_recording_and_scenario_file() -> None:
    """``pip install zigai`` is enough to run the kit: setup.cfg's package data of
    zigai.conformance covers every file under the packaged cassettes and the schema."""
    import configparser

    root = Path(__file__).resolve().parent.parent
    config = configparser.ConfigParser()
    config.read(root / "setup.cfg", encoding="utf-8")
    patterns = [p.strip() for p in config["options.package_data"]["zigai.conformance"].split(",")]
    package = root / "zigai" / "conformance"
    shipped = {path.relative_to(package).as_posix() for pattern in patterns for path in package.glob(pattern)}
    wanted = {f"cassettes/{p.relative_to(package / 'cassettes').as_posix()}"
              for p in (package / "cassettes").rglob("*") if p.is_file()}
    assert wanted and wanted | {"scenario.schema.json"} == shipped


def test_the_schema_names_exactly_the_normalizations_the_server_knows() -> None:
    from zigai.conformance.normalize import NORMALIZATIONS
    from zigai.conformance.scenarios import FAMILIES, scenario_schema

    properties = scenario_schema()["$defs"]["scenario"]["properties"]
    assert set(properties["normalize"]["items"]["enum"]) == NORMALIZATIONS
    assert set(properties["family"]["enum"]) == FAMILIES


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ("scenarios:\n  - match: x\n    family: buffered\n", "scenarios/0: 'prompt' is a required property"),
        ("scenarios:\n  - match: x\n    family: provider-files\n    operations: [upload]\n",
         "'file' is a required property"),
        ("scenarios:\n  - 7\n", "scenarios/0: 7 is not of type 'object'"),
    ],
)
def test_schema_rules_by_family_and_shape(tmp_path: Path, text: str, place: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidScenarios, match=None) as caught:
        load_scenarios(path)
    assert place in str(caught.value)


def test_cassette_files_are_bounded_and_must_be_utf8(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zigai.conformance import cassette

    path = tmp_path / "c.yaml"
    path.write_text(TWO, encoding="utf-8")
    monkeypatch.setattr(cassette, "MAX_CASSETTE_BYTES", len(TWO.encode()))
    assert len(cassette.load_cassette(path)) == 3  # exactly at the limit
    path.write_text(TWO + " ", encoding="utf-8")
    with pytest.raises(InvalidCassette, match="larger than"):
        cassette.load_cassette(path)
    path.write_bytes(b"version: 1\n\xff\n")
    with pytest.raises(InvalidCassette, match="not UTF-8"):
        cassette.load_cassette(path)
    with pytest.raises(InvalidCassette, match="must map a string name to strings"):
        parse_cassette("version: 1\ninteractions: [{request: {method: GET, uri: /}, response: {status: 200,"
                       " headers: {x-a: [1]}}}]\n")


def test_cassette_numbers_are_bounded_before_they_are_built() -> None:
    """The one cassette parser reads YAML with the bounded loader: a base-60 or overlong number
    is refused as an invalid cassette rather than built (quadratic time, or a crash)."""
    one = "interactions: [{request: {method: GET, uri: /}, response: {status: 200}}]\n"
    assert len(parse_cassette("version: 1\n" + one)) == 1
    with pytest.raises(InvalidCassette, match="base-60"):
        parse_cassette("version: 1:0:0\n" + one, "c.yaml")
    limit = "9" * 128  # MAX_NUMBER_CHARS: still read (and refused as a status), one more is not
    with pytest.raises(InvalidCassette, match="invalid status"):
        parse_cassette(one.replace("status: 200", f"status: {limit}").replace("interactions", "version: 1\ninteractions"))
    with pytest.raises(InvalidCassette, match="129 characters"):
        parse_cassette(one.replace("status: 200", f"status: {limit}9").replace("interactions", "version: 1\ninteractions"))


def test_a_session_url_header_with_anything_after_redacted_is_refused() -> None:
    text = ("version: 1\ninteractions: [{request: {method: POST, uri: /}, response: {status: 200, headers: "
            "{x-goog-upload-url: ['https://x.test/upload/v1/files/REDACTED']}}}]\n")
    assert parse_cassette(text)[0].response_headers[0][1].endswith("/REDACTED")
    for tail in ("#abc123", "?upload_id=abc123", "/abc123"):
        with pytest.raises(InvalidCassette, match="sensitive header 'x-goog-upload-url'"):
            parse_cassette(text.replace("REDACTED", "REDACTED" + tail))


def test_framing_headers_of_a_recording_are_replaced_and_unrouted_requests_are_capped() -> None:
    recorded = TWO.replace("headers: {x-request-id: [\"r1\"]}",
                           "headers: {x-request-id: [\"r1\"], content-length: [\"999\"], connection: [close]}")
    with ConformanceServer([_entry(recorded)]) as server:
        status, headers, body = _request(server, "POST", "/s/two/v1/first", b'{"a":1,"b":[true,"x"]}')
        assert status == 200 and headers["content-length"] == str(len(body)) == "8"
        for _ in range(101):
            _request(server, "GET", "/nowhere")
        assert len(server.status()["unrouted"]) == 100


def test_a_report_that_cannot_be_written_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "r.json").mkdir()
    with pytest.raises(OSError):
        write_json(tmp_path / "r.json", {"scenarios": []})
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_the_server_is_bounded_by_the_http_core_limits() -> None:
    """A client that never finishes its request head gets 408 once the head timeout passes."""
    import time

    from zigai.http_server import ServerLimits

    with ConformanceServer([_entry()], limits=ServerLimits(head_timeout_s=0.3)) as server:
        host, port = server.base_url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(b"POST /s/two/v1/first HTTP/1.1\r\n")
            started = time.monotonic()
            answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408") and time.monotonic() - started < 20
        assert server.scenario_status("two")["verdict"] == "not-run"


def test_unrouted_requests_are_one_failing_junit_case() -> None:
    with ConformanceServer([_entry()]) as server:
        _request(server, "GET", "/elsewhere")
        suite = ElementTree.fromstring(junit_xml(server.status()))
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("2", "1", "1")
    case = next(c for c in suite if c.get("name") == "unrouted")
    assert case[0].get("message") == "1 unrouted request(s)" and "/elsewhere" in (case[0].text or "")


def test_two_requests_of_one_scenario_cannot_claim_the_same_interaction() -> None:
    """A slow first request holds the scenario; a second one sent meanwhile is compared with
    the next interaction after it, never with the same one."""
    import time

    body = b'{"a":1,"b":[true,"x"]}'
    head = f"POST /s/two/v1/first HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"

    def read_all(sock: socket.socket) -> bytes:
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        return data

    with ConformanceServer([_entry()]) as server:
        host, port = server.base_url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as slow, \
                socket.create_connection((host, int(port)), timeout=30) as fast:
            slow.sendall(head.encode() + body[:5])
            deadline = time.monotonic() + 30
            while server.scenario_status("two")["requests"] == 0:  # slow now holds the scenario
                assert time.monotonic() < deadline
                time.sleep(0.01)
            fast.sendall(head.encode() + body)
            time.sleep(0.3)  # lets the fast request reach the server while the slow one waits
            slow.sendall(body[5:])
            first, second = read_all(slow), read_all(fast)
        assert first.startswith(b"HTTP/1.1 200")
        assert second.startswith(b"HTTP/1.1 400") and b"expected interaction #1: POST /v1/second" in second
        assert server.scenario_status("two")["consumed"] == 1
