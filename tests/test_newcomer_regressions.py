"""Regression tests for issue 12's bug and ergonomics bullets that had no test of their own.

* a bare container annotation is refused with an example of the *same* container
  (``dict`` → ``dict[str, int]``, ``set`` → ``set[str]``), never a ``list[str]`` for everything;
* a history file that cannot be written after the run never loses the answer that was paid
  for: the answer is printed first, then the failure names the user's path;
* a setting or feature outside an unknown model name's conservative profile fails before any
  I/O with an error naming the model and the fix (a client ``profile=`` or a ``profile_lookup``).
"""

from __future__ import annotations

import collections.abc
import io
import os
from pathlib import Path
from typing import Any

import pytest

from zigai.agent import Agent
from zigai.cli import ExitCode, main
from zigai.model import UnsupportedModelFeature
from zigai.providers import openai
from zigai.reflect import tool
from zigai.settings import ModelSettings, UnsupportedModelSetting
from zigai.tool import ToolDefinitionError


@pytest.mark.parametrize(("annotation", "example"), [
    (dict, "dict[str, int]"),
    (collections.abc.Mapping, "dict[str, int]"),
    (list, "list[str]"),
    (collections.abc.Sequence, "list[str]"),
    (tuple, "tuple[int, ...]"),
    (set, "set[str]"),
    (collections.abc.Set, "set[str]"),
    (frozenset, "frozenset[str]"),
])
def test_a_bare_container_is_refused_with_an_example_of_the_same_container(
    annotation: Any, example: str,
) -> None:
    def lookup(keys):  # type: ignore[no-untyped-def]
        return 1

    lookup.__annotations__ = {"keys": annotation, "return": int}
    lookup.__doc__ = "Look keys up."
    with pytest.raises(ToolDefinitionError) as info:
        tool(lookup)
    name = getattr(annotation, "__name__", str(annotation))
    assert f"$.keys: bare {name} needs item types (e.g. {example})" in str(info.value)


TIDY_TOOLS = '''
import shutil


def tidy() -> str:
    """Tidy the working folder."""
    shutil.rmtree("kept")       # removes the history file's folder while the run is going
    return "tidied"
'''


def test_a_history_save_that_fails_after_the_run_still_prints_the_answer(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(TIDY_TOOLS)
    (tmp_path / "kept").mkdir()
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = main(["run", "hi", "--model", "test", "--tools", "tools.py", "--history", "kept/h.json"],
                    env={}, out=out, err=err)
    finally:
        os.chdir(old)
    assert out.getvalue() == '{"tidy":"tidied"}\n'          # the answer reached the user first
    assert code == ExitCode.fault
    assert "cannot write history file 'kept/h.json'" in err.getvalue()
    assert ".tmp" not in err.getvalue() and "Traceback" not in err.getvalue()


def _unknown_model_agent(**options: Any) -> Agent[Any]:
    # An unknown name gets a conservative profile; the checks below run before any I/O, so the
    # provider's default transport is never used.
    return Agent(openai.Client("my-local-model", openai.Provider("sk-test-only")), **options)


def test_an_unsupported_setting_on_an_unknown_model_names_the_model_and_the_fix() -> None:
    agent = _unknown_model_agent(model_settings=ModelSettings(temperature=0.0))
    with pytest.raises(UnsupportedModelSetting) as info:
        agent.run("hi")
    message = str(info.value)
    assert message.startswith("openai:my-local-model: ")
    assert "temperature" in message
    assert "profile=ModelProfile(...)" in message and "profile_lookup" in message


def test_an_unsupported_feature_on_an_unknown_model_names_the_model_and_the_fix() -> None:
    agent = _unknown_model_agent(builtin_tools=["web_search"])
    with pytest.raises(UnsupportedModelFeature) as info:
        agent.run("hi")
    message = str(info.value)
    assert message.startswith("openai:my-local-model: ") and "web_search" in message
    assert "profile=ModelProfile(...)" in message and "profile_lookup" in message



APPROVAL_TOOLS = str(Path(__file__).resolve().parents[1] / "docs" / "examples" / "approval_tools.py")


def _pause_into_a_folder_that_vanishes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       err: io.StringIO) -> int:
    """Run to a pause whose pause-file folder is removed after the up-front path check."""
    import shutil
    import tempfile

    from zigai.cli import approvals

    (tmp_path / "kept").mkdir()
    (tmp_path / "salvage").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "salvage"))
    real_write = approvals.atomic_write_text

    def folder_gone_then_write(path: str, text: str, what: str = "file") -> None:
        shutil.rmtree("kept")      # the real OS failure, after the run was paid for
        real_write(path, text, what)

    monkeypatch.setattr(approvals, "atomic_write_text", folder_gone_then_write)
    return main(["run", "Delete the temp files", "--model", "test", "--tools", APPROVAL_TOOLS,
                 "--pause-file", "kept/p.json"], env={}, out=io.StringIO(), err=err)


def test_a_pause_file_that_cannot_be_written_after_the_run_is_saved_elsewhere_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    err = io.StringIO()
    code = _pause_into_a_folder_that_vanishes(tmp_path, monkeypatch, err)
    assert code == ExitCode.fault                       # the requested path is empty: a fault
    saved = list((tmp_path / "salvage").glob("zigai-pause-*.json"))
    assert len(saved) == 1
    assert (saved[0].stat().st_mode & 0o777) == 0o600  # the state is owner-only, like the file
    text = err.getvalue()
    assert "cannot write pause file 'kept/p.json'" in text and str(saved[0]) in text
    assert f"zigai resume {saved[0]} --approve <id>" in text and "Traceback" not in text
    out = io.StringIO()
    assert main(["resume", str(saved[0]), "--approve", "test-call-0"], env={}, out=out,
                err=io.StringIO()) == ExitCode.ok    # the paid-for pause continues from there
    assert out.getvalue() and not saved[0].exists()


def test_a_pause_that_cannot_be_saved_anywhere_is_printed_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tempfile

    def no_temporary_folder(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", no_temporary_folder)
    err = io.StringIO()
    assert _pause_into_a_folder_that_vanishes(tmp_path, monkeypatch, err) == ExitCode.fault
    text = err.getvalue()
    document = text.split("-----\n")[1]
    assert '"kind": "zigai.cli.pause"' in document and '"state"' in document
    assert "cannot write pause file 'kept/p.json'" in text and "Traceback" not in text


@pytest.mark.parametrize(("model", "hint"), [
    ("gpt-5-mini", "; did you mean 'openai:gpt-5-mini'?"),
    ("o3-mini", "; did you mean 'openai:o3-mini'?"),
    ("claude-sonnet-4-5", "; did you mean 'anthropic:claude-sonnet-4-5'?"),
    ("gemini-2.5-flash", "; did you mean 'google:gemini-2.5-flash'?"),
    ("llama3", "; put the provider first, as in 'openai_compatible:llama3'"),
    ("openai:", ""),
    ("gpt 5", ""),
])
def test_a_bare_model_name_gets_the_provider_prefix_it_needs(model: str, hint: str) -> None:
    from zigai.models import InvalidModelString, infer_model

    with pytest.raises(InvalidModelString) as info:
        infer_model(model, env={})
    assert str(info.value) == f"model strings look like 'openai:gpt-5-mini' or 'test', got {model!r}{hint}"
    code, _, err = _cli_bare(model)
    assert code == ExitCode.usage and hint in err


def _cli_bare(model: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", "hi", "--model", model], env={}, out=out, err=err)
    return code, out.getvalue(), err.getvalue()
