"""``zigai eval`` (issue 20 item 9): dataset document + agent spec -> report, table, progress, exit codes."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from zigai.cli import main
from zigai.evals import io as eval_io

ROOT = Path(__file__).resolve().parent.parent
ANSWER = "success (no tool calls)"  # what the spec's test model answers

SPEC = "version: 1\nname: offline\nmodel: {provider: test, name: default}\n"


def _dataset(second_expected: str = ANSWER, evaluators: str = "[exact_match, contains]") -> str:
    return ("format: zigai.evals.dataset\nversion: 1\nname: smoke\ncases:\n"
            f'  - {{name: first, inputs: "hello", expected_output: "{ANSWER}"}}\n'
            f'  - {{name: second, inputs: "again", expected_output: "{second_expected}", metadata: {{n: 2}}}}\n'
            f"evaluators: {evaluators}\ntrace_evaluators: []\nreport_evaluators: [pass_rate]\n")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "agent.yaml").write_text(SPEC)
    (tmp_path / "dataset.yaml").write_text(_dataset())
    (tmp_path / "regressed.yaml").write_text(_dataset("something else"))
    return tmp_path


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.endswith(("_API_KEY", "_TOKEN")) and not k.startswith("ZIGAI_")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def _process(cwd: Path, *args: str, **popen) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zigai", "eval", *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=60, **popen)


def _in_process(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        code = main(["eval", *args], env=_env() if env is None else env, out=out, err=err)
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


def test_a_real_process_writes_the_report_prints_the_table_and_plain_progress(work):
    done = _process(work, "dataset.yaml", "--agent", "agent.yaml", "--report", "out.json")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["case", "result", "exact_match", "contains"]
    assert lines[1].split() == ["first", "PASS", "ok", "ok"] and lines[2].split() == ["second", "PASS", "ok", "ok"]
    assert "[pass_rate] 1 ratio" in done.stdout and "2/2 case runs passed (100%); 2 model requests" in done.stdout
    assert done.stderr.splitlines() == ["eval: 1/2 PASS first (0 failed)", "eval: 2/2 PASS second (0 failed)"]
    with eval_io.load_report((work / "out.json").read_text()) as report:
        assert [case.output for case in report] == [ANSWER, ANSWER] and report.dataset_name == "smoke"
        assert report.cases[1].metadata == {"n": 2} and report.usage.requests == 2


def test_compare_exits_1_on_a_regression_and_0_when_nothing_regressed(work):
    assert _process(work, "dataset.yaml", "--agent", "agent.yaml", "--report", "base.json").returncode == 0
    same = _process(work, "dataset.yaml", "--agent", "agent.yaml", "--report", "same.json", "--compare", "base.json")
    assert same.returncode == 0, same.stderr
    assert "unchanged: 0 regressions, 0 improvements" in same.stdout
    worse = _process(work, "regressed.yaml", "--agent", "agent.yaml", "--report", "worse.yaml",
                     "--compare", "base.json", "--repetitions", "2", "--concurrency", "2")
    assert worse.returncode == 1, worse.stderr
    assert "REGRESSION second#0 exact_match: pass -> fail" in worse.stdout
    assert "regressed: 2 regressions" in worse.stdout and "second#1  FAIL" in worse.stdout
    with eval_io.load_report((work / "worse.yaml").read_text(), "yaml") as report:
        assert len(report) == 4 and report.repetitions == 2


def test_progress_on_a_terminal_is_one_bar_rewritten_in_place(work):
    leader, follower = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "zigai", "eval", "regressed.yaml", "--agent", "agent.yaml",
                               "--report", "out.json"], cwd=work, env=_env(), stdout=subprocess.PIPE,
                              stderr=follower, text=True, timeout=60)
        os.close(follower)
        follower = -1
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: everything was read
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    assert done.returncode == 0
    text = seen.decode()
    assert "\r[############............] 1/2 cases, 0 failed" in text
    assert text.rstrip().endswith("\r[########################] 2/2 cases, 1 failed")
    assert "eval:" not in text and done.stdout.splitlines()[2].split() == ["second", "FAIL", "FAIL", "FAIL"]


def test_evaluators_file_adds_to_and_overrides_the_builtins(work):
    (work / "checks.py").write_text(
        "from zigai.evals import Check, Contains\n"
        "short = Check('short', lambda ctx: len(ctx.output) < 10)\n"
        "contains = Contains('success', name='contains')\n"
        "_hidden = Check('hidden', lambda ctx: True)\n")
    (work / "custom.yaml").write_text(_dataset(evaluators="[short, contains, exact_match]"))
    code, out, err = _in_process(work, "custom.yaml", "--agent", "agent.yaml", "--report", "out.json",
                                 "--evaluators", "checks.py")
    assert code == 0, err
    assert out.splitlines()[1].split() == ["first", "FAIL", "FAIL", "ok", "ok"]
    (work / "listed.py").write_text("from zigai.evals import Check\nEVALUATORS = [Check('short', lambda c: True)]\n")
    code, out, err = _in_process(work, "custom.yaml", "--agent", "agent.yaml", "--report", "out.json",
                                 "--evaluators", "listed.py")
    assert code == 0 and out.splitlines()[1].split() == ["first", "PASS", "ok", "ok", "ok"]
    (work / "bad.py").write_text("EVALUATORS = ['short']\n")
    code, _, err = _in_process(work, "custom.yaml", "--agent", "agent.yaml", "--report", "out.json",
                               "--evaluators", "bad.py")
    assert code == 2 and "EVALUATORS must be a list" in err


def test_operator_input_errors_exit_2_before_any_case_runs(work):
    cases = [
        (["missing.yaml", "--agent", "agent.yaml", "--report", "o.json"], "dataset 'missing.yaml' cannot be read"),
        (["unknown.yaml", "--agent", "agent.yaml", "--report", "o.json"],
         "$.evaluators[0]: the registry holds no Evaluator named 'judge'"),
        (["typo.yaml", "--agent", "agent.yaml", "--report", "o.json"], "$.name: must be a string, got an array"),
        (["dataset.yaml", "--agent", "agent.yaml", "--report", "nowhere/o.json"], "does not exist"),
        (["dataset.yaml", "--agent", "agent.yaml", "--report", "."], "is a directory"),
        (["dataset.yaml", "--agent", "nope.yaml", "--report", "o.json"], "nope.yaml"),
        (["dataset.yaml", "--agent", "dataset.yaml", "--report", "o.json"], "InvalidAgentSpec"),
        (["dataset.yaml", "--agent", "agent.yaml", "--report", "o.json", "--compare", "dataset.yaml"],
         "baseline report 'dataset.yaml': $.format"),
        (["dataset.yaml", "--agent", "agent.yaml", "--report", "o.json", "--compare", "gone.json"],
         "baseline report 'gone.json' cannot be read"),
        (["dataset.yaml", "--report", "o.json"], "--agent"),
        (["dataset.yaml", "--agent", "agent.yaml", "--report", "o.json", "--concurrency", "0"], "--concurrency"),
    ]
    (work / "unknown.yaml").write_text(_dataset(evaluators="[judge]"))
    (work / "typo.yaml").write_text(_dataset().replace("name: smoke", "name: [smoke]"))
    for argv, message in cases:
        code, out, err = _in_process(work, *argv)
        assert code == 2, (argv, err)
        assert message in err and out == "", (argv, err)
    assert not (work / "o.json").exists()


def test_a_spec_needing_a_missing_credential_exits_3(work):
    (work / "cloud.yaml").write_text("version: 1\nmodel: {provider: openai, name: gpt-5-mini}\n")
    code, _, err = _in_process(work, "dataset.yaml", "--agent", "cloud.yaml", "--report", "o.json")
    assert code == 3 and "OPENAI_API_KEY" in err


def test_the_spec_tool_registry_is_passed_and_an_unwritable_report_is_a_fault(work, monkeypatch):
    (work / "tools.py").write_text("def nothing() -> None:\n    'Do nothing.'\n")
    code, _, err = _in_process(work, "dataset.yaml", "--agent", "agent.yaml", "--report", "o.json",
                               "--tools", "tools.py")
    assert code == 0, err

    import zigai.cli.evals as cli_evals

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cli_evals.tempfile, "mkstemp", refuse)
    code, _, err = _in_process(work, "dataset.yaml", "--agent", "agent.yaml", "--report", "o2.json")
    assert code == 1 and "OutputFileNotWritten" in err and "Permission denied" in err


def test_the_table_shows_task_errors_scores_and_evaluator_errors():
    from zigai.cli.evals import table
    from zigai.evals import Case, Check, Dataset, Grade, PassRate, ReportCheck

    def grade(ctx):
        if ctx.inputs == 2:
            raise RuntimeError("broken")
        return Grade(score=0.5) if ctx.inputs == 1 else Grade(passed=True, score=1.0)

    def task(n):
        if n == 3:
            raise ValueError("no")
        return n

    dataset = Dataset([Case(f"c{n}", n) for n in range(4)], [Check("g", grade)],
                      report_evaluators=[PassRate(0.9), ReportCheck("boom", lambda view: 1 / 0),
                                         ReportCheck("fine", lambda view: True)])
    with dataset.evaluate(task) as report:
        lines = table(report).splitlines()
    assert "[pass_rate] FAIL 0.5 ratio (pass rate 0.5 is below 0.9)" in lines, lines
    assert "[boom] FAIL (ZeroDivisionError: division by zero)" in lines and "[fine] ok" in lines
    assert lines[1].split() == ["c0", "PASS", "ok", "1"]
    assert lines[2].split() == ["c1", "PASS", "0.5"] and lines[3].split() == ["c2", "FAIL", "error"]
    assert lines[4].split() == ["c3", "ERROR", "-"] and "error in c3#0: ValueError: no" in lines
    from zigai.evals import CaseResult, EvaluationResult, Report
    from zigai.usage import RunUsage

    empty = EvaluationResult("none")  # a loaded report may hold a verdict-less result
    rows = (CaseResult(0, "a", 1, None, {}, 1, RunUsage(), (empty,)),
            CaseResult(1, "b", 2, None, {}, 2, RunUsage(), ()))
    with Report("made", rows) as report:
        assert [line.split() for line in table(report).splitlines()[1:3]] == [["a", "PASS", "-"], ["b", "PASS", "-"]]


def test_help_lists_the_exit_codes_and_builtin_names():
    out = io.StringIO()
    assert main(["eval", "--help"], out=out, err=io.StringIO()) == 0
    assert "--compare found a regression" in out.getvalue() and "exact_match, contains, is_json" in out.getvalue()
