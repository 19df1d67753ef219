"""YAML numbers are bounded by their text before a value is built (issue 32, defect 3).

YAML 1.1 reads ``1:0:0:...`` as a base-60 integer whose construction costs quadratic time,
and a digit string past Python's 4300-digit conversion limit raised a bare ``ValueError``.
Every YAML reader of zigai refuses such scalars with its own named error, from real files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from zigai._strict_yaml import MAX_NUMBER_CHARS
from zigai.agent_spec import InvalidAgentSpec, load
from zigai.capabilities_builtin import DirectorySkills
from zigai.cli.errors import CassetteReplayError
from zigai.cli.replay import load_exchanges
from zigai.environments import RootedDirectory
from zigai.evals import io as eval_io
from zigai.evals.errors import InvalidEvalDocument

SPEC = "version: 1\nmodel: {provider: test, name: a}\n"


def base60(chars: int) -> str:
    return "1" + ":0" * ((chars - 1) // 2)


def test_a_one_megabyte_base60_spec_file_is_refused_by_name(tmp_path: Path) -> None:
    target = tmp_path / "agent.yaml"
    target.write_text(SPEC + "name: " + base60(1_000_000 - 64) + "\n")
    assert target.stat().st_size <= 1_048_576
    with pytest.raises(InvalidAgentSpec) as caught:
        load(target)
    assert caught.value.path == "$.name" and "looks like a number" in str(caught.value)


@pytest.mark.parametrize(("scalar", "words"), [
    ("9" * 5000, "5000 characters"),
    ("-" + "9" * MAX_NUMBER_CHARS, f"limited to {MAX_NUMBER_CHARS} characters"),
    ("!!int '" + "9" * (MAX_NUMBER_CHARS + 1) + "'", f"the limit is {MAX_NUMBER_CHARS}"),
    ("!!float " + "1" * 5000, "5000 characters long"),
    ("1" + "0" * MAX_NUMBER_CHARS + ".5", "characters"),
    ("0x" + "f" * MAX_NUMBER_CHARS, "characters"),
    ("1:30", "base-60"),
    ("-1:30:00.5", "base-60"),
])
def test_long_or_base60_numbers_in_a_spec_get_the_named_error(tmp_path: Path, scalar: str, words: str) -> None:
    target = tmp_path / "agent.yaml"
    target.write_text(SPEC + f"settings: {{temperature: {scalar}}}\n")
    with pytest.raises(InvalidAgentSpec) as caught:
        load(target)
    assert caught.value.path == "$.settings.temperature" and words in str(caught.value)


def test_numbers_at_the_limit_and_quoted_digits_still_read(tmp_path: Path) -> None:
    at_limit = "0." + "5" * (MAX_NUMBER_CHARS - 2)
    target = tmp_path / "agent.yaml"
    target.write_text(SPEC + f"settings: {{temperature: {at_limit}}}\ndescription: '1:30'\n")
    spec = load(target)
    assert spec.spec.description == "1:30" and spec.spec.settings.temperature == pytest.approx(0.5555555555)
    target.write_text(SPEC + f"settings: {{temperature: {at_limit}5}}\n")
    with pytest.raises(InvalidAgentSpec, match=f"{MAX_NUMBER_CHARS + 1} characters"):
        load(target)


def test_a_large_base60_dataset_is_refused_by_name(tmp_path: Path) -> None:
    target = tmp_path / "cases.yaml"
    head = "format: zigai.evals.dataset\nversion: 1\nname: n\ncases:\n  - name: a\n    inputs: "
    target.write_text(head + base60(4 * 1024 * 1024 - 100) + "\nevaluators: []\n")
    with pytest.raises(InvalidEvalDocument) as caught:
        eval_io.load_dataset(target.read_bytes(), [], "yaml")
    assert caught.value.path == "$.cases[0].inputs" and "characters" in str(caught.value)
    target.write_text(head + "[1:0, 2]\nevaluators: []\n")
    with pytest.raises(InvalidEvalDocument, match="base-60") as caught:
        eval_io.load_dataset(target.read_bytes(), [], "yaml")
    assert caught.value.path == "$.cases[0].inputs[0]"


def test_a_cassette_with_a_hostile_number_is_a_cassette_error(tmp_path: Path) -> None:
    target = tmp_path / "c.yaml"
    target.write_text("version: 1\ninteractions:\n- request: {method: GET, uri: 'http://x/'}\n"
                      "  response: {status: " + "9" * 5000 + "}\n")
    with pytest.raises(CassetteReplayError, match="5000 characters"):
        load_exchanges(target.read_text(), source=str(target))
    target.write_text("version: 1:0:0\ninteractions: []\n")
    with pytest.raises(CassetteReplayError, match="base-60"):
        load_exchanges(target.read_text())
    with pytest.raises(CassetteReplayError, match="not YAML, so not a readable cassette"):
        load_exchanges("version: [1\n")


def test_skill_front_matter_with_a_hostile_number_is_an_invalid_skill(tmp_path: Path) -> None:
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "SKILL.md").write_text("---\ndescription: x\nweight: " + base60(200_000) + "\n---\nbody")
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "SKILL.md").write_text("---\ndescription: fine\nweight: 12\n---\nbody")
    with RootedDirectory.open(tmp_path) as root:
        listed = {info.name: info.description for info in DirectorySkills(root).list_skills()}
    assert listed["big"] == "[invalid SKILL.md: its front matter is not YAML (ConstructorError)]"
    assert listed["ok"] == "fine"


def test_the_pure_python_parser_reads_and_refuses_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)  # pyyaml built without libyaml
    target = tmp_path / "agent.yaml"
    target.write_text(SPEC + "description: '1:30'\nsettings: {temperature: 0.5}\n")
    assert load(target).spec.description == "1:30"
    for text, path, words in (
        (SPEC + "name: " + base60(100_000), "$.name", "looks like a number"),
        (SPEC + "settings: {temperature: 1:30}\n", "$.settings.temperature", "base-60"),
        (SPEC + "x: &a 1\n", "$", "anchors are refused"),
        (SPEC + "---\nversion: 1\n", "$", "single document"),
        ("# nothing\n", "$", "empty"),
        (SPEC + "x: " + "[" * 5000 + "]" * 5000 + "\n", "$", "nesting exceeds"),
    ):
        target.write_text(text)
        with pytest.raises(InvalidAgentSpec) as caught:
            load(target)
        assert caught.value.path == path and words in str(caught.value), text[:40]
