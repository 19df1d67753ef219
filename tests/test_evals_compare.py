"""zigai.evals item 6: comparing reports -- joins, regression rules, usage deltas, stable CI JSON."""

from __future__ import annotations

import json
import math
import random
import time

import pytest

from zigai.agent import Agent
from zigai.evals import Case, Check, Dataset, ExactMatch, InvalidEvalOptions, PassRate, ReportCheck
from zigai.evals.compare import COMPARE_FORMAT, COMPARE_VERSION, compare
from zigai.testing import TestModel


def _dataset(expected, names=("a", "b", "c"), checks=None, report=()):
    return Dataset([Case(n, n, expected_output=expected.get(n, n)) for n in names],
                   checks if checks is not None else [ExactMatch()], report_evaluators=report)


def test_regressions_improvements_removed_checks_and_candidate_only_entries():
    base = _dataset({"b": "wrong"}, checks=[ExactMatch(), Check("kept", lambda c: True),
                                           Check("dropped", lambda c: True)])
    cand = Dataset([Case("a", "a", expected_output="x"), Case("b", "b", expected_output="b"),
                    Case("c", "c", expected_output="c"), Case("d", "d", expected_output="d")],
                   [ExactMatch(), Check("kept", lambda c: 1 / 0 if c.inputs == "c" else True),
                    Check("new", lambda c: 0.5)])
    with base.evaluate(lambda x: x) as old, cand.evaluate(lambda x: x) as new:
        result = compare(old, new, baseline_label="main", candidate_label="pr")
    assert [(c.name, c.change) for c in result.cases] == [
        ("a", "regression"), ("b", "regression"), ("c", "regression"), ("d", "added")]
    a, b, c, d = result.cases
    assert [(k.name, k.baseline, k.candidate, k.change) for k in a.checks] == [
        ("exact_match", "pass", "fail", "regression"), ("kept", "pass", "pass", "unchanged"),
        ("dropped", "pass", None, "regression"), ("new", None, "none", "added")]
    assert b.checks[0].change == "improvement" and (b.baseline_passed, b.candidate_passed) == (False, True)
    assert c.checks[1].candidate == "fail"  # a recorded evaluator error counts as fail
    assert (d.baseline_passed, d.candidate_passed) == (None, True)
    assert len(result.improvements) == 1 and result.regressed and result.conclusion == "regressed"
    assert result.summary().splitlines()[0] == "REGRESSION a#0 exact_match: pass -> fail"
    assert "IMPROVEMENT b#0 exact_match: fail -> pass" in result.summary()


def test_a_lost_case_run_and_a_failed_task_remove_its_checks():
    data = _dataset({})
    with data.evaluate(lambda x: x, repetitions=2) as old, data.evaluate(
            lambda x: 1 / 0 if x == "b" else x) as new:
        result = compare(old, new)
    assert [(c.name, c.repetition, c.change) for c in result.cases] == [
        ("a", 0, "unchanged"), ("a", 1, "regression"), ("b", 0, "regression"), ("b", 1, "regression"),
        ("c", 0, "unchanged"), ("c", 1, "regression")]
    assert result.cases[1].candidate_passed is None and result.cases[1].checks[0].candidate is None
    with data.evaluate(lambda x: x) as same, data.evaluate(lambda x: x) as again:
        unchanged = compare(same, again)
        assert unchanged.conclusion == "unchanged" and not unchanged.regressed
        assert unchanged.summary() == "unchanged: 0 regressions, 0 improvements; usage unchanged"


def test_analyses_rank_false_below_null_below_true():
    def ranked(values):
        return [ReportCheck(f"r{i}", (lambda v, value=value: True if value is True else
                                      False if value is False else 1.0)) for i, value in enumerate(values)]

    base = _dataset({}, report=ranked([True, None, None, False, True]) + [PassRate(name="gone")])
    cand = _dataset({}, report=ranked([None, True, False, True, True]))
    with base.evaluate(lambda x: x) as old, cand.evaluate(lambda x: x) as new:
        result = compare(old, new)
    assert [(k.name, k.baseline, k.candidate, k.change) for k in result.analyses] == [
        ("r0", "pass", "none", "regression"), ("r1", "none", "pass", "improvement"),
        ("r2", "none", "fail", "regression"), ("r3", "fail", "pass", "improvement"),
        ("r4", "pass", "pass", "unchanged"), ("gone", "none", None, "regression")]
    assert result.analyses[1].baseline_value == 1.0
    assert "REGRESSION report r0: pass -> none" in result.summary()


def test_signed_usage_deltas():
    data = _dataset({}, names=("a",), checks=[])
    with data.evaluate(Agent(TestModel(custom_output_text="one two three")), repetitions=2) as old, \
            data.evaluate(lambda x: x) as new:
        result = compare(old, new)
        assert result.usage_delta["requests"] == -2
        assert result.usage_delta["total_tokens"] == -old.usage.total_tokens < 0
        assert result.usage_delta["output_tokens"] == -old.usage.output_tokens
    assert "usage requests -2" in result.summary()


def test_ci_json_is_versioned_and_byte_stable_across_two_concurrent_runs():
    def jittery(n):
        time.sleep(random.random() / 2000)
        return n if n % 5 else -n

    def score(ctx):
        return [0.5, math.nan, math.inf, -math.inf][ctx.case_index % 4]

    data = Dataset([Case(f"c{n}", n, expected_output=n) for n in range(40)],
                   [ExactMatch(), Check("score", score)], report_evaluators=[PassRate(0.9)])
    texts = []
    for _ in range(2):
        with data.evaluate(lambda n: n, repetitions=2, max_concurrency=8) as old, \
                data.evaluate(jittery, repetitions=2, max_concurrency=8) as new:
            texts.append(compare(old, new, candidate_label="pr-1").to_json())
    assert texts[0] == texts[1] and texts[0].endswith("}\n")
    document = json.loads(texts[0])
    assert (document["format"], document["version"]) == (COMPARE_FORMAT, COMPARE_VERSION)
    assert document["conclusion"] == "regressed" and document["regressions"] == 7 * 2 + 1  # n = 5, 10 ... 35 turn negative
    assert [case["checks"][1]["baseline_value"] for case in document["cases"][:8:2]] == [0.5, "nan", "inf", "-inf"]
    assert list(document) == ["format", "version", "baseline", "candidate", "conclusion", "regressions",
                              "improvements", "usage_delta", "cases", "analyses"]
    assert "time" not in texts[0] and "/" not in texts[0]  # no clocks, no paths


def test_compare_checks_its_inputs():
    with _dataset({}).evaluate(lambda x: x) as report:
        with pytest.raises(InvalidEvalOptions, match="candidate"):
            compare(report, "x")  # type: ignore[arg-type]
        with pytest.raises(InvalidEvalOptions, match="baseline_label"):
            compare(report, report, baseline_label=1)  # type: ignore[arg-type]
        assert repr(compare(report, report)) == "Comparison(unchanged, cases=3)"
