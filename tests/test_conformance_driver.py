"""``zigai conformance run``'s checks: a changed expectation, error run or route fails with the
reason a developer needs, over the same loopback server a port uses."""

from __future__ import annotations

import dataclasses
import http.client
import io
from pathlib import Path
from typing import Any

import pytest

from zigai import provider
from zigai.conformance import ConformanceServer
from zigai.conformance.cassette import parse_cassette
from zigai.conformance.catalog import Entry, build_catalog, packaged_cassettes, packaged_scenarios
from zigai.conformance.driver import _error_category, _server_verdict, run_entries
from zigai.conformance.routes import Route, _openai_profile, build_model
from zigai.conformance.scenarios import Scenario, load_scenarios
from zigai.providers.anthropic import AnthropicDecodeError

SCENARIOS = [s for path in packaged_scenarios() for s in load_scenarios(path)]
OWN = {entry.relative: entry for entry in build_catalog([packaged_cassettes()], SCENARIOS)}


def _run(entry: Entry, **changes: Any) -> str:
    """The output line of running ``entry`` with its scenario changed by ``changes``."""
    assert entry.scenario is not None
    changed = dataclasses.replace(entry, scenario=dataclasses.replace(entry.scenario, **changes))
    out = io.StringIO()
    with ConformanceServer([changed]) as server:
        run_entries([changed], server, out)
    return out.getvalue().splitlines()[0]


@pytest.mark.parametrize(
    ("relative", "expect", "reason"),
    [
        ("local/responses/tool_loop.yaml", {"output": "nope"}, "!= expected 'nope'"),
        ("local/responses/tool_loop.yaml", {"output_contains": "zebra"}, "does not contain 'zebra'"),
        ("local/responses/tool_loop.yaml", {"tool_calls": []}, "tool calls [{'name': 'weather'"),
        ("local/responses/tool_loop.yaml", {"requests": 5}, "2 model requests, expected 5"),
        ("local/responses/tool_loop.yaml", {"usage": {"tool_calls": 7}}, "usage tool_calls 1 != expected 7"),
        ("local/responses/tool_loop.yaml", {"thinking": True}, "final response carries no thinking part"),
        ("local/responses/structured_output.yaml", {"output": {"city": "Nowhere"}}, "!= expected {'city': 'Nowhere'}"),
    ],
)
def test_a_changed_expectation_fails_with_what_differs(relative: str, expect: dict[str, Any], reason: str) -> None:
    line = _run(OWN[relative], expect=expect)
    assert line.startswith(f"FAIL {relative}: AssertionError: ") and reason in line, line


@pytest.mark.parametrize(
    ("runs", "reason"),
    [
        (({"expect": {"requests": 1}}, {"expect": {"requests": 1}}), "run 1: unexpected RateLimited"),
        (({"expect": {}}, {"expect": {"error": "server_error"}}), "run 1: error rate_limit (RateLimited"),
        (({"expect": {}}, {"expect": {"error": "rate_limit", "status": 503}}), "run 1: status 429 != 503"),
        (({"expect": {"error": "rate_limit"}},), "run 0: expected rate_limit, got success"),
    ],
)
def test_error_runs_check_the_category_status_and_success(runs: tuple[dict[str, Any], ...], reason: str) -> None:
    line = _run(OWN["katan/chat/error_sequence.yaml"], retry=None, runs=runs)
    assert line.startswith("FAIL katan/chat/error_sequence.yaml") and reason in line, line


def test_an_error_run_that_matches_still_fails_on_the_server_verdict() -> None:
    """Run 1 expects the 429 without retries, so zigai is satisfied, but the recording's
    further interactions were never requested: the server's verdict fails the scenario."""
    runs = ({"expect": {}}, {"expect": {"error": "rate_limit", "status": 429}})
    line = _run(OWN["katan/chat/error_sequence.yaml"], retry=None, runs=runs)
    assert "2 unconsumed interaction(s): #2 POST /v1/chat/completions, #3 POST /v1/chat/completions" in line


def test_the_server_verdict_reports_its_first_mismatch() -> None:
    entry = OWN["local/responses/buffered_text.yaml"]
    with ConformanceServer([entry]) as server:
        host, port = server.base_url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        connection.request("POST", f"/s/{entry.id}/v1/responses", body=b"{}")
        assert connection.getresponse().status == 400
        connection.close()
        with pytest.raises(AssertionError, match="server: request #0 .*JSON body differs"):
            _server_verdict(server, entry)


@pytest.mark.parametrize(
    ("error", "category"),
    [
        (provider.RateLimited("x"), "rate_limit"), (provider.ProviderServerError("x"), "server_error"),
        (provider.ProviderResponseDecodeError("x"), "decode"), (AnthropicDecodeError("x"), "decode"),
        (provider.ProviderBadRequest("x"), "bad_request"), (provider.ProviderAuthError("x"), "auth"),
        (provider.ProviderNotFound("x"), "not_found"), (provider.ProviderClientError("x"), "client_error"),
        (ValueError("x"), "ValueError"),
    ],
)
def test_error_categories(error: BaseException, category: str) -> None:
    assert _error_category(error) == category


def _tmp_entry(tmp_path: Path, uri: str, scenario: Scenario | None, name: str = "case") -> Entry:
    text = (f"version: 1\ninteractions:\n- request: {{method: POST, uri: '{uri}', body: {{type: text, content: x}}}}\n"
            "  response: {status: 200, body: {type: json, content: {}}}\n")
    return Entry(name, tmp_path / f"{name}.yaml", f"{name}.yaml", parse_cassette(text), scenario)


def test_unknown_routes_missing_scenarios_and_wrong_families_are_reported(tmp_path: Path) -> None:
    buffered = Scenario(match="*", family="buffered", prompt="hi")
    files = Scenario(match="*", family="provider-files", prompt="", file={"filename": "a", "content": "b",
                     "media_type": "text/plain"}, operations=("upload",))
    entries = [_tmp_entry(tmp_path, "https://x.test/v9/unknown", buffered, "unknown"),
               _tmp_entry(tmp_path, "https://api.openai.com/v1/responses", None, "lonely"),
               _tmp_entry(tmp_path, "https://api.openai.com/v1/files", buffered, "openai"),
               _tmp_entry(tmp_path, "https://api.example.com/v1/files", files, "elsewhere")]
    out = io.StringIO()
    with ConformanceServer(entries) as server:
        assert run_entries(entries, server, out) == (0, 1, 3)
    lines = out.getvalue().splitlines()
    assert lines[0] == "SKIP unknown.yaml: no adapter route recognizes https://x.test/v9/unknown"
    assert lines[1] == "SKIP lonely.yaml: no scenario matches this cassette"
    assert lines[2] == "FAIL openai.yaml: AssertionError: route provider-files does not fit family buffered"
    assert lines[3] == "SKIP elsewhere.yaml: no files provider is named by this cassette (https://api.example.com/v1)"


@pytest.mark.parametrize(
    ("kind", "options", "message"),
    [
        ("anthropic-messages", {"profile": {}}, "a scenario profile applies to openai-responses routes"),
        ("openai-responses", {"chat_options": {}}, "chat_options apply to plain chat-completions routes"),
        ("chat-completions", {"responses_options": {}}, "responses_options apply to openai-responses routes"),
    ],
)
def test_adapter_hints_apply_only_to_their_route(kind: str, options: dict[str, Any], message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        build_model(Route(kind, "https://api.example.com/v1", "m", None), object(), **options)


def test_a_profile_with_sampling_lets_sampling_settings_through() -> None:
    from zigai.providers.openai import profiles

    assert _openai_profile({"sampling": True}).settings == profiles.BASE_SETTINGS | profiles.SAMPLING_SETTINGS
    assert _openai_profile({}).settings == profiles.BASE_SETTINGS


def test_a_traceback_is_printed_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZIGAI_CONFORMANCE_TRACEBACK", "1")
    entry = OWN["local/responses/buffered_text.yaml"]
    assert entry.scenario is not None
    changed = dataclasses.replace(entry, scenario=dataclasses.replace(entry.scenario, expect={"requests": 9}))
    out = io.StringIO()
    with ConformanceServer([changed]) as server:
        run_entries([changed], server, out)
    assert "Traceback (most recent call last)" in out.getvalue()


@pytest.mark.conformance("no recording of ours has a Files API exchange")
def test_file_expectations_are_checked(conformance_root: Path, tmp_path: Path) -> None:
    entry = next(e for e in build_catalog([conformance_root / "zigai-cassettes"], SCENARIOS)
                 if e.relative == "files/openai.yaml")
    assert entry.scenario is not None
    for expect, reason in (({"file": {"filename": "other.jsonl"}}, "file filename 'zigai-cassette.jsonl' != "),
                           ({"download_json": [1]}, "!= [1]")):
        line = _run(entry, expect={**entry.scenario.expect, **expect})
        assert line.startswith("FAIL files/openai.yaml") and reason in line, line


def test_a_file_descriptor_must_belong_to_the_provider_that_made_it() -> None:
    from types import SimpleNamespace

    from zigai.conformance.driver import _check_file

    with pytest.raises(AssertionError, match="descriptor owner 'google' != 'openai'"):
        _check_file(SimpleNamespace(provider_name="google"), {}, "openai")


CONVERSE_STREAM = """version: 1
interactions:
- request:
    method: POST
    uri: "https://bedrock-runtime.example-region.amazonaws.com/model/us.anthropic.claude-sonnet-4-6/converse-stream"
    body:
      type: json
      content:
        messages: [{role: user, content: [{text: "Reply with exactly: pong"}]}]
        inferenceConfig: {maxTokens: 256}
  response:
    status: 200
    body:
      type: eventstream
      content:
      - headers: {":event-type": messageStart, ":content-type": application/json, ":message-type": event}
        payload: {role: assistant}
      - headers: {":event-type": contentBlockDelta, ":content-type": application/json, ":message-type": event}
        payload: {contentBlockIndex: 0, delta: {text: "po"}}
      - headers: {":event-type": contentBlockDelta, ":content-type": application/json, ":message-type": event}
        payload: {contentBlockIndex: 0, delta: {text: "ng é"}}
      - headers: {":event-type": contentBlockStop, ":content-type": application/json, ":message-type": event}
        payload: {contentBlockIndex: 0}
      - headers: {":event-type": messageStop, ":content-type": application/json, ":message-type": event}
        payload: {stopReason: end_turn}
      - headers: {":event-type": metadata, ":content-type": application/json, ":message-type": event}
        payload: {usage: {inputTokens: 13, outputTokens: 5, totalTokens: 18}, metrics: {latencyMs: 9}}
"""


@pytest.mark.parametrize("rechunk", [False, True])
def test_a_bedrock_event_stream_is_served_frame_by_frame_and_zigai_decodes_it(tmp_path: Path, rechunk: bool) -> None:
    """A binary EventStream response, stored as readable messages, reaches zigai's Bedrock
    ConverseStream decoder over HTTP intact (also cut at random points inside frames)."""
    path = tmp_path / "bedrock" / "streamed_text.yaml"
    path.parent.mkdir()
    path.write_text(CONVERSE_STREAM, encoding="utf-8")
    scenarios = tmp_path / "s.yaml"
    scenarios.write_text("scenarios:\n  - match: '*'\n    family: streamed-text\n    prompt: 'Reply with exactly: pong'\n"
                         "    settings: {max_tokens: 256}\n"
                         "    expect: {output: 'pong é', usage: {input_tokens: 13, output_tokens: 5}}\n",
                         encoding="utf-8")
    entries = build_catalog([tmp_path / "bedrock"], load_scenarios(scenarios))
    out = io.StringIO()
    with ConformanceServer(entries, rechunk=rechunk, seed=5) as server:
        assert run_entries(entries, server, out) == (1, 0, 0), out.getvalue()
        frames = entries[0].interactions[0].response_body.frames()  # type: ignore[union-attr]
        assert len(frames) == 6 and all(frame[:4] == len(frame).to_bytes(4, "big") for frame in frames)


def test_the_recorder_stores_an_event_stream_as_messages_that_replay_and_serve() -> None:
    """tests/support's RecordingTransport keeps a binary ConverseStream as readable messages;
    the in-process ReplayTransport and the conformance server both frame them again."""
    import json as _json

    from support.cassettes import RecordingTransport, ReplayTransport
    from support.cassettes import parse_cassette as support_parse
    from support.mock_transport import MockResponse, MockTransport

    from zigai.agent import Agent
    from zigai.providers import bedrock
    from zigai.providers.eventstream import encode_message

    kit = parse_cassette(CONVERSE_STREAM)[0].response_body
    assert kit is not None
    wire = b"".join(encode_message(m["headers"], _json.dumps(m["payload"]).encode()) for m in kit.content)
    inner = MockTransport(lambda request: MockResponse(200, (("content-type", "application/vnd.amazon.eventstream"),),
                                                       wire))

    def output(transport: Any) -> str:
        model = bedrock.Client("us.anthropic.claude-sonnet-4-6", bedrock.Provider("k", "example-region", transport))
        with Agent(model).run_stream("Reply with exactly: pong") as stream:
            for _ in stream:
                pass
            with stream.result() as result:
                return str(result.output)

    recorder = RecordingTransport(inner)
    assert output(recorder) == "pong é"
    text = recorder.dump()
    assert "type: eventstream" in text and "contentBlockDelta" in text
    (recorded,) = support_parse(text)
    assert recorded.response_body is not None and recorded.response_body.content == kit.content
    assert output(ReplayTransport([recorded])) == "pong é"
    assert parse_cassette(text)[0].response_body == kit  # the kit reads what the recorder wrote
