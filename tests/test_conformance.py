"""The conformance runner over the read-only corpus, and its scenario-file contract."""

from __future__ import annotations

import dataclasses
import io
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import conformance  # noqa: E402
from support.corpus import Recordings  # noqa: E402

from zigai.agent import Agent  # noqa: E402

# Only routes that belong to later work may be skipped.
ALLOWED_SKIPS = set(conformance.LATER_WORK.values())


def test_every_recording_replays_strictly(recordings: Recordings) -> None:
    """The runner replays every recording through the real Agent: our own ``cassettes/``
    with ``own-scenarios.yaml`` (each one must pass), the corpus with its scenarios."""
    out = io.StringIO()
    scenarios = conformance.load_scenarios(recordings.scenarios)
    passed, failed, skipped = conformance.run([recordings.root], scenarios, out)
    lines = out.getvalue().splitlines()
    assert lines[-1] == f"{passed} passed, {failed} failed, {skipped} skipped"
    failures = [line for line in lines if line.startswith("FAIL")]
    assert not failures, "\n".join(failures)
    if recordings.own:
        assert skipped == 0, out.getvalue()
        assert passed >= 27
        return
    allowed = set(ALLOWED_SKIPS)
    if not hasattr(Agent, "run_stream"):
        allowed.add("Agent.run_stream is not implemented yet")
    bad_skips = [
        line for line in lines
        if line.startswith("SKIP") and line.split(": ", 1)[1] not in allowed
    ]
    assert not bad_skips, "\n".join(bad_skips)
    assert passed >= 80


def test_own_scenarios_are_generated_from_the_recording_definitions() -> None:
    """``cassettes/own-scenarios.yaml`` is what ``scripts/gen_own_scenarios.py`` writes from
    the definitions the recording scripts ran; a re-recording without regenerating fails."""
    import gen_own_scenarios

    assert gen_own_scenarios.render() == gen_own_scenarios.TARGET.read_text(encoding="utf-8")
    assert gen_own_scenarios.main(["--check"]) == 0


def test_the_runner_walks_our_own_recordings_and_fails_a_changed_scenario(tmp_path: Path) -> None:
    """A scenario that asks for another tool, or drops the few-shot history, no longer
    replays: the runner checks our recordings, it does not just load them."""
    cassettes = ROOT / "cassettes"
    own = conformance.load_scenarios(cassettes / "own-scenarios.yaml")
    tool_loop = conformance.find_scenario("local/chat/tool_loop.yaml", own)
    assert tool_loop is not None and tool_loop.history
    wrong_tool = dataclasses.replace(tool_loop, expect={"tool_names": ["forecast"]})
    no_history = dataclasses.replace(tool_loop, history=())
    for scenario, reason in ((wrong_tool, "tools called ['weather'] != expected ['forecast']"),
                             (no_history, "JSON body differs from the recording")):
        out = io.StringIO()
        path = cassettes / "local" / "chat" / "tool_loop.yaml"
        assert conformance.run([path], [dataclasses.replace(scenario, match="*")], out) == (0, 1, 0)
        assert reason in out.getvalue()


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenarios.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "text",
    [
        "nothing: here\n",
        "scenarios:\n  - match: '*.yaml'\n    prompt: hi\n",
        "scenarios:\n  - match: '*.yaml'\n    family: jazz\n    prompt: hi\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n    surprise: 1\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n    expect: {vibes: good}\n",
        "scenarios:\n  - match: '*.yaml'\n    family: provider-error\n    prompt: hi\n",
        "scenarios:\n  - match: '*.yaml'\n    family: structured-output\n    prompt: hi\n",
        "scenarios:\n  - match: '*.yaml'\n    family: provider-files\n",
        "scenarios:\n  - match: '*.yaml'\n    family: provider-files\n"
        "    file: {filename: a, content: b, media_type: text/plain, size: 1}\n"
        "    operations: [upload]\n",
        "scenarios:\n  - match: '*.yaml'\n    family: provider-files\n"
        "    file: {filename: a, content: b, media_type: text/plain}\n    operations: [inspect]\n",
        "scenarios:\n  - match: '*.yaml'\n    family: provider-files\n"
        "    file: {filename: a, content: b, media_type: text/plain}\n"
        "    operations: [upload, rename]\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: []\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: [hi, 3]\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: [{image: {media_type: image/png}}]\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: [{audio: {}}]\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n    prompt_parts: []\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n    prompt_parts: look\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n"
        "    prompt_parts: [{image: {media_type: image/png}}]\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n    builtin_tools: web_search\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n    builtin_tools: [telepathy]\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n"
        "    builtin_tools: [web_search, web_search]\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n"
        "    settings: {extra_body: {tag: cohere}}\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n"
        "    settings: {extra_body: {tag: 3, body: {}}}\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n    history: hello\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n    history: [hello]\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n    output_mode: prompted\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n    profile: {vision: true}\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n    profile: {sampling: 1}\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n"
        "    tool_until_returned: yes please\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n"
        "    profile: {reasoning_efforts: high}\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n"
        "    chat_options: {system_role: developer}\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n"
        "    responses_options: {store: true}\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n"
        "    responses_options: {replay_reasoning: 1}\n",
        "scenarios:\n  - match: '*.yaml'\n    family: buffered\n    prompt: hi\n    follow_up: ''\n",
        "scenarios:\n  - match: '*.yaml'\n    family: provider-error\n    prompt: hi\n"
        "    runs: [{expect: {}, seed: 3}]\n",
        "scenarios:\n  - match: '*.yaml'\n    family: provider-error\n    prompt: hi\n"
        "    runs: [{model: 7}]\n",
    ],
)
def test_malformed_scenario_files_are_rejected(tmp_path: Path, text: str) -> None:
    with pytest.raises(conformance.ScenarioError):
        conformance.load_scenarios(_write(tmp_path, text))


def test_first_matching_scenario_wins_and_extra_files_take_precedence(tmp_path: Path) -> None:
    extra = conformance.load_scenarios(_write(
        tmp_path, "scenarios:\n  - match: 'buffered/*.yaml'\n    family: buffered\n    prompt: override\n"
    ))
    default = conformance.load_scenarios(conformance.DEFAULT_SCENARIOS)
    assert conformance.find_scenario("buffered/x.yaml", extra + default).prompt == "override"
    assert conformance.find_scenario("buffered/x.yaml", default).prompt == "Reply with exactly: pong"
    assert conformance.find_scenario("unknown/x.yaml", default) is None


def test_unmatched_cassettes_are_skipped_with_a_reason(tmp_path: Path) -> None:
    cassette = tmp_path / "lonely.yaml"
    cassette.write_text(
        "version: 1\ninteractions:\n- request:\n    method: POST\n"
        "    uri: https://api.openai.com/v1/responses\n    headers: {}\n"
        "    body: {type: json, content: {model: m}}\n"
        "  response:\n    status: 200\n    headers: {}\n    body: {type: json, content: {}}\n",
        encoding="utf-8",
    )
    out = io.StringIO()
    result = conformance.run([cassette], [], out)
    assert result == (0, 0, 1)
    assert "SKIP lonely.yaml: no scenario matches this cassette" in out.getvalue()


FILE_SCENARIO = """scenarios:
  - match: "openai.yaml"
    family: provider-files
    normalize: [multipart_redaction]
    file:
      filename: zigai-cassette.jsonl
      media_type: text/plain
      purpose: {purpose}
      content: "{content}"
    operations: [upload, inspect, download, delete]
"""


@pytest.mark.conformance(
    "no recording of ours has a Files API exchange: neither llama-server nor llm-katan 0.22.0 "
    "serves /v1/files"
)
@pytest.mark.parametrize(
    ("purpose", "content", "verdict"),
    [
        ("fine-tune", "x" * 84 + "\\n", "PASS"),
        ("user_data", "x" * 84 + "\\n", "FAIL"),  # the recorded multipart names fine-tune
        ("fine-tune", "x" * 85 + "\\n", "FAIL"),  # the recorded descriptor says 85 bytes
    ],
)
def test_file_recordings_replay_strictly(conformance_root: Path, tmp_path: Path, purpose: str,
                                         content: str, verdict: str) -> None:
    extra = conformance.load_scenarios(_write(
        tmp_path, FILE_SCENARIO.format(purpose=purpose, content=content)))
    out = io.StringIO()
    conformance.run([conformance_root / "zigai-cassettes" / "files" / "openai.yaml"], extra, out)
    assert out.getvalue().splitlines()[0].startswith(f"{verdict} openai.yaml")


PNG = "iVBORw0KGgo="  # the PNG signature, base64


def _responses_cassette(tmp_path: Path, input_item: str, tools: str = "", output: str = "") -> Path:
    cassette = tmp_path / "case.yaml"
    cassette.write_text(
        "version: 1\ninteractions:\n- request:\n    method: POST\n"
        "    uri: https://api.openai.com/v1/responses\n    headers: {}\n"
        f"    body: {{type: json, content: {{model: gpt-4o-mini, input: [{input_item}]{tools}}}}}\n"
        "  response:\n    status: 200\n    headers: {}\n"
        f"    body: {{type: json, content: {{status: completed, output: [{output}{{type: message, id: m1,"
        " content: [{type: output_text, text: pong}]}]}}\n",
        encoding="utf-8",
    )
    return cassette


def test_a_prompt_list_sends_text_and_image_parts_of_one_prompt(tmp_path: Path) -> None:
    item = ("{type: message, role: user, content: [{type: input_text, text: What is this?},"
            f" {{type: input_image, image_url: 'data:image/png;base64,{PNG}'}}]}}")
    cassette = _responses_cassette(tmp_path, item)
    scenarios = conformance.load_scenarios(_write(tmp_path, (
        "scenarios:\n  - match: 'case.yaml'\n    family: buffered\n"
        f"    prompt: ['What is this?', {{image: {{media_type: image/png, base64: '{PNG}'}}}}]\n"
        "    expect: {output: pong, requests: 1}\n"
    )))
    out = io.StringIO()
    assert conformance.run([cassette], scenarios, out) == (1, 0, 0), out.getvalue()


def test_prompt_parts_are_sent_before_the_prompt_as_their_own_user_parts(tmp_path: Path) -> None:
    items = ("{type: message, role: user, content: [{type: input_image,"
             f" image_url: 'data:image/png;base64,{PNG}'}}]}},"
             " {type: message, role: user, content: [{type: input_text, text: Caption.}]},"
             " {type: message, role: user, content: What is this?}")
    cassette = _responses_cassette(tmp_path, items)
    scenario = (
        "scenarios:\n  - match: 'case.yaml'\n    family: buffered\n    prompt: What is this?\n"
        f"    prompt_parts: [{{image: {{media_type: image/png, base64: '{PNG}'}}}}, %s]\n"
        "    expect: {output: pong, requests: 1}\n"
    )
    (loaded,) = conformance.load_scenarios(_write(tmp_path, scenario % "Caption."))
    assert loaded.prompt == "What is this?" and len(loaded.prompt_parts) == 2
    out = io.StringIO()
    assert conformance.run([cassette], [loaded], out) == (1, 0, 0), out.getvalue()
    swapped = conformance.load_scenarios(_write(tmp_path, scenario.replace(
        "prompt: What is this?", "prompt: Caption.") % "'What is this?'"))
    out = io.StringIO()
    assert conformance.run([cassette], swapped, out) == (0, 1, 0), out.getvalue()


def test_builtin_tools_reach_the_request_and_provider_run_calls_are_expected(tmp_path: Path) -> None:
    item = "{type: message, role: user, content: Search.}"
    search = "{type: web_search_call, id: ws_1, status: completed, action: {type: search, query: q}}, "
    cassette = _responses_cassette(tmp_path, item, ", tools: [{type: web_search}]", search)
    scenario = (
        "scenarios:\n  - match: 'case.yaml'\n    family: buffered\n    prompt: Search.\n"
        "    builtin_tools: [web_search]\n    expect: {output: pong, native_tool_calls: %s}\n"
    )
    scenarios = conformance.load_scenarios(_write(tmp_path, scenario % "[web_search]"))
    assert scenarios[0].builtin_tools == ("web_search",)
    out = io.StringIO()
    assert conformance.run([cassette], scenarios, out) == (1, 0, 0), out.getvalue()
    wrong = conformance.load_scenarios(_write(tmp_path, scenario % "[]"))
    out = io.StringIO()
    assert conformance.run([cassette], wrong, out) == (0, 1, 0)
    assert "provider-run tool calls ['web_search'] != expected []" in out.getvalue()


def test_settings_carry_a_tagged_extension_body(tmp_path: Path) -> None:
    from zigai.settings import ProviderExtraBody

    (scenario,) = conformance.load_scenarios(_write(tmp_path, (
        "scenarios:\n  - match: '*'\n    family: buffered\n    prompt: hi\n"
        "    settings: {max_tokens: 5, extra_body: {tag: cohere, body: {strict_tools: true}}}\n"
    )))
    settings = conformance._settings(scenario.settings)
    assert settings.max_tokens == 5
    assert settings.extra_body == ProviderExtraBody("cohere", {"strict_tools": True})
    assert conformance._settings({}) is None
