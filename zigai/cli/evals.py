"""``zigai eval DATASET --agent SPEC --report OUT``: run a dataset document over a spec'd agent.

Composition only: the dataset is read with :mod:`zigai.evals.io` against a registry of the
built-in evaluators plus the ``--evaluators FILE.py`` ones; the agent is built from the agent
spec exactly as ``zigai run --spec`` builds it (:func:`zigai.cli.spec.spec_agent`); the run is
``Dataset.evaluate``; ``--compare`` is :func:`zigai.evals.compare.compare`.

Invariants:

* progress goes to stderr only: on a terminal one line rewritten in place (a bar, cases
  done / total, failures), otherwise one plain line per finished case run; stdout gets the
  readable table (and the comparison) once the run is over;
* every operator file (dataset, spec, evaluators, baseline) is read and the report's
  directory checked *before* any case runs; their failures exit 2 (3 when the spec needs
  environment variables); the report is written atomically after the run;
* exit status: 0 when the report was written (and, with ``--compare``, nothing regressed);
  1 when ``--compare`` found a regression.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Mapping
from contextlib import ExitStack
from typing import Any, TextIO

from zigai.cli.errors import CliUsageError, ExitCode, OutputFileNotWritten

__all__ = ["EVAL_EXIT_CODES_HELP", "add_eval_parser", "builtin_evaluators", "eval_command"]

EVAL_EXIT_CODES_HELP = """\
exit codes:
  0    the report was written (and with --compare: no regression against the baseline)
  1    --compare found a regression (a check removed or pass -> fail), or another fault
  2    operator input: arguments, the dataset, the agent spec, the evaluators file, the
       baseline report, or the report's directory
  3    environment variables the agent spec needs are not set
  4    provider or network failure outside the recorded case errors

evaluator names a dataset may use without --evaluators:
  exact_match, contains, is_json (case evaluators), pass_rate (report evaluator)
"""

_BAR = 24


def builtin_evaluators() -> list[Any]:
    """The evaluators every dataset can name: ``exact_match``, ``contains``, ``is_json``, ``pass_rate``."""
    from zigai.evals import Contains, ExactMatch, IsJson, PassRate

    return [ExactMatch(), Contains(), IsJson(), PassRate()]


def add_eval_parser(commands: Any, out: TextIO | None) -> None:
    """The ``eval`` subcommand of the shared parser."""
    command = commands.add_parser(
        "eval", out=out, help="run a dataset of cases over an agent spec and write a report",
        epilog=EVAL_EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument("dataset", metavar="DATASET.yaml", help="dataset document (YAML or JSON, zigai.evals.io)")
    command.add_argument("--agent", required=True, metavar="SPEC", help="agent spec file (JSON or YAML)")
    command.add_argument("--report", required=True, metavar="OUT.json",
                         help="where the report document is written (.yaml/.yml: YAML, otherwise JSON)")
    command.add_argument("--compare", metavar="BASELINE.json",
                         help="a report document to compare against; exit 1 on any regression")
    command.add_argument("--evaluators", metavar="FILE.py",
                         help="Python file whose module-level evaluator objects join the registry "
                              "(an EVALUATORS list, if defined, is used instead)")
    command.add_argument("--tools", metavar="FILE.py", help="the agent spec's tool registry (as for 'run --spec')")
    command.add_argument("--repetitions", type=_at_least_one, default=1, metavar="N",
                         help="runs of every case (default 1)")
    command.add_argument("--concurrency", type=_at_least_one, default=1, metavar="N",
                         help="case runs in flight at once (default 1)")


def _at_least_one(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


def _format_of(path: str) -> Any:
    return "yaml" if path.lower().endswith((".yaml", ".yml")) else "json"


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise CliUsageError(f"{what} {path!r} cannot be read: {exc.strerror or exc}") from None


def _registry(evaluators_file: str | None) -> list[Any]:
    from zigai.cli.tools_file import load_module
    from zigai.evals import Evaluator, ReportEvaluator, TraceEvaluator

    kinds = (Evaluator, TraceEvaluator, ReportEvaluator)
    own: list[Any] = []
    if evaluators_file:
        module = load_module(evaluators_file, "evaluators file")
        declared = getattr(module, "EVALUATORS", None)
        if declared is None:
            own = [value for attr, value in vars(module).items() if isinstance(value, kinds) and not attr.startswith("_")]
        elif isinstance(declared, (list, tuple)) and all(isinstance(item, kinds) for item in declared):
            own = list(declared)
        else:
            raise CliUsageError(f"evaluators file {evaluators_file!r}: EVALUATORS must be a list of "
                                "Evaluator, TraceEvaluator or ReportEvaluator values")
    names = {item.name for item in own}
    return own + [item for item in builtin_evaluators() if item.name not in names]  # the file's win


def _check_writable(path: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise CliUsageError(f"--report {path!r}: directory {directory!r} does not exist")
    if os.path.isdir(path):
        raise CliUsageError(f"--report {path!r} is a directory")


def _write(path: str, text: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    try:
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=".zigai-report-")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        raise OutputFileNotWritten(f"report {path!r} could not be written: {exc.strerror or exc}") from None


class _ProgressBar:
    """Finished case runs on stderr: a bar rewritten in place on a terminal, plain lines otherwise."""

    def __init__(self, err: TextIO) -> None:
        self._err = err
        self._tty = bool(getattr(err, "isatty", lambda: False)())

    def __call__(self, progress: Any) -> None:
        case = progress.case
        failures = f"{progress.failed} failed"
        if self._tty:
            filled = _BAR * progress.done // progress.total
            self._err.write(f"\r[{'#' * filled}{'.' * (_BAR - filled)}] {progress.done}/{progress.total} cases, "
                            f"{failures}")
            if progress.done == progress.total:
                self._err.write("\n")
        else:
            label = case.name if case.repetition == 0 else f"{case.name}#{case.repetition}"
            self._err.write(f"eval: {progress.done}/{progress.total} {'PASS' if case.passed else 'FAIL'} "
                            f"{label} ({failures})\n")
        self._err.flush()


def _cell(case: Any, name: str) -> str:
    if case.error_type is not None:
        return "-"
    try:
        item = case.evaluation(name)
    except KeyError:
        return "-"
    if item.error_type is not None:
        return "error"
    if item.passed is None:
        return f"{item.score:g}" if item.score is not None else "-"
    verdict = "ok" if item.passed else "FAIL"
    return verdict if item.score is None else f"{verdict} {item.score:g}"


def table(report: Any) -> str:
    """The report as aligned columns: case, result, one column per evaluator; then analyses."""
    names: list[str] = []
    for case in report.cases:
        names += [item.name for item in case.evaluations if item.name not in names]
    rows = [["case", "result", *names]]
    for case in report.cases:
        label = case.name if report.repetitions == 1 else f"{case.name}#{case.repetition}"
        result = "PASS" if case.passed else ("ERROR" if case.error_type is not None else "FAIL")
        rows.append([label, result, *(_cell(case, name) for name in names)])
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    for case in report.cases:
        if case.error_type is not None:
            lines.append(f"error in {case.name}#{case.repetition}: {case.error_type}: {case.error_message}")
    for item in report.analyses:
        parts = ["FAIL" if item.failed else "ok" if item.passed else ""]
        if item.value is not None:
            parts.append(f"{item.value:g}{' ' + item.unit if item.unit else ''}")
        if item.reason or item.error_type:
            parts.append(f"({item.reason or f'{item.error_type}: {item.error_message}'})")
        lines.append(" ".join([f"[{item.name}]", *(part for part in parts if part)]))
    passed = sum(case.passed for case in report.cases)
    lines.append(f"{passed}/{len(report.cases)} case runs passed ({report.pass_rate:.0%}); "
                 f"{report.usage.requests} model requests, {report.usage.input_tokens + report.usage.output_tokens} tokens")
    return "\n".join(lines) + "\n"


def eval_command(args: argparse.Namespace, env: Mapping[str, str], out: TextIO, err: TextIO) -> int:
    """``zigai eval``: read every input, run the dataset, write the report, compare."""
    from zigai.cli.config import RunSettings
    from zigai.cli.spec import spec_agent
    from zigai.evals import io as eval_io
    from zigai.evals.errors import InvalidEvalDocument

    registry = _registry(args.evaluators)
    try:
        dataset = eval_io.load_dataset(_read(args.dataset, "dataset"), registry, _format_of(args.dataset))
    except InvalidEvalDocument as exc:
        raise CliUsageError(f"dataset {args.dataset!r}: {exc}") from None
    _check_writable(args.report)
    with ExitStack() as stack:
        baseline = None
        if args.compare:
            try:
                baseline = eval_io.load_report(_read(args.compare, "baseline report"), _format_of(args.compare))
            except InvalidEvalDocument as exc:
                raise CliUsageError(f"baseline report {args.compare!r}: {exc}") from None
            stack.enter_context(baseline)
        settings = RunSettings(spec=os.path.abspath(args.agent),
                               tools=os.path.abspath(args.tools) if args.tools else None)
        agent = spec_agent(settings, env, stack)
        report = stack.enter_context(dataset.evaluate(agent, repetitions=args.repetitions,
                                                      max_concurrency=args.concurrency, progress=_ProgressBar(err)))
        _write(args.report, eval_io.dump_report(report, _format_of(args.report)))
        out.write(table(report))
        out.write(f"report written to {args.report}\n")
        if baseline is None:
            return int(ExitCode.ok)
        from zigai.evals.compare import compare

        comparison = compare(baseline, report, baseline_label="baseline", candidate_label="candidate")
        out.write(comparison.summary() + "\n")
        return int(ExitCode.fault if comparison.regressed else ExitCode.ok)
