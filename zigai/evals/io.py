"""Evaluation documents: datasets and reports as versioned, strict JSON or YAML data.

Invariants:

* dataset documents are data only: the dataset name, cases (name, inputs, expected output,
  metadata) and the ordered *names* of ordinary, trace and report evaluators; loading
  resolves each name against an application registry and fails on a missing
  (:class:`UnknownEvaluatorName`) or ambiguous (:class:`AmbiguousEvaluatorName`) entry;
  a case with per-case run options is refused both ways (options may hold callbacks, queues
  or secrets);
* report documents keep every durable field: per-run inputs, expected output, metadata,
  output or error, task attempts, usage, evaluations (with attempts), spans (lowercase hex
  ids, typed attributes, events, timing, parents), analyses and aggregate usage; run timing
  (``duration_s``, provider and run time) is written unless ``timing=False`` -- the form for
  byte-comparing two runs;
* both syntaxes carry ``format`` and ``version`` and are read within a named limit profile
  (:data:`DATASET_LIMITS`, :data:`REPORT_LIMITS`) before any value is built: JSON through
  :func:`zigai.json.parse`, YAML through the strict reader of :mod:`zigai._strict_yaml`
  (no aliases, anchors or tags) and then the same profile; unknown or missing fields,
  wrong types and duplicate keys are refused with an :class:`InvalidEvalDocument` whose
  ``path`` (``$.cases[2].name``) starts its message;
* JSON is indented (two spaces) and stable; YAML is block style, two-space indented, with
  every string double-quoted; non-finite scores are written as ``"nan"``, ``"inf"`` and
  ``"-inf"``;
* a document round-trips exactly: ``dumps(loads(text)) == text`` for text this module wrote.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any, Literal

from zigai._strict_yaml import child_path, load_plain
from zigai.errors import JsonError, ZigAIError
from zigai.evals.analysis import Analysis, ReportEvaluator
from zigai.evals.case import Case
from zigai.evals.dataset import Dataset
from zigai.evals.errors import (
    AmbiguousEvaluatorName,
    InvalidEvalDocument,
    UnknownEvaluatorName,
    UnsupportedEvalDocumentVersion,
)
from zigai.evals.evaluators import EvaluationResult, Evaluator
from zigai.evals.report import CaseResult, Report
from zigai.evals.trace import TraceEvaluator
from zigai.json import Limits
from zigai.json import dumps as canonical_json
from zigai.json import parse as parse_bounded
from zigai.json import validate as validate_bounded
from zigai.telemetry import Span, SpanEvent
from zigai.usage import RunUsage, UsageDetails

__all__ = [
    "DATASET_FORMAT", "REPORT_FORMAT", "VERSION", "DATASET_LIMITS", "REPORT_LIMITS", "Format",
    "dataset_to_document", "dataset_from_document", "report_to_document", "report_from_document",
    "dumps", "loads", "dump_dataset", "load_dataset", "dump_report", "load_report",
]

DATASET_FORMAT = "zigai.evals.dataset"
REPORT_FORMAT = "zigai.evals.report"
VERSION = 1
_MIB = 1024 * 1024
DATASET_LIMITS = Limits(16 * _MIB, 4 * _MIB, 64, 65_536)
"""Dataset documents: 16 MiB, 4 MiB strings, depth 64, 65,536 items per collection."""
REPORT_LIMITS = Limits(256 * _MIB, 16 * _MIB, 64, 1_000_000)
"""Report documents: 256 MiB, 16 MiB strings, depth 64, 1,000,000 items per collection."""

Format = Literal["json", "yaml"]
Registry = Iterable[Evaluator | TraceEvaluator | ReportEvaluator]
_USAGE_COUNTS = ("requests", "tool_calls", "input_tokens", "output_tokens", "cache_write_tokens",
                 "cache_read_tokens", "input_audio_tokens", "output_audio_tokens", "reasoning_tokens",
                 "attempts")
_USAGE_TIMING = ("provider_time_ns", "run_time_ns")
_HEX_DIGITS = {"trace_id": 32, "span_id": 16, "parent_span_id": 16}


def _fail(path: str, what: str) -> InvalidEvalDocument:
    return InvalidEvalDocument(f"{path}: {what}", path=path)


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _object(value: Any, path: str, required: Iterable[str], optional: Iterable[str] = ()) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, f"must be an object, got {_type_name(value)}")
    needed = tuple(required)
    allowed = (*needed, *optional)
    for key in value:
        if key not in allowed:
            raise _fail(child_path(path, key), f"unknown field; allowed here: {', '.join(allowed)}")
    for key in needed:
        if key not in value:
            raise _fail(path, f"missing field {key!r}")
    return value


def _of(kind: type | tuple[type, ...], what: str, *, nullable: bool = False) -> Callable[[Any, str], Any]:
    def read(value: Any, path: str) -> Any:
        if value is None and nullable:
            return None
        if isinstance(value, kind) and not (isinstance(value, bool) and bool not in _kinds(kind)):
            return value
        raise _fail(path, f"must be {what}{' or null' if nullable else ''}, got {_type_name(value)}")
    return read


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


_str = _of(str, "a string")
_opt_str = _of(str, "a string", nullable=True)
_bool = _of(bool, "a boolean")
_opt_bool = _of(bool, "a boolean", nullable=True)
_list = _of(list, "an array")
_dict = _of(dict, "an object")


def _count(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _fail(path, f"must be a non-negative integer, got {value!r}")
    return value


def _opt_count(value: Any, path: str) -> int | None:
    return None if value is None else _count(value, path)


def _positive(value: Any, path: str) -> int:
    if _count(value, path) < 1:
        raise _fail(path, f"must be at least 1, got {value!r}")
    return value


def _field(fields: dict[str, Any], name: str, path: str, read: Callable[[Any, str], Any]) -> Any:
    return read(fields[name], child_path(path, name))


def _header(document: Any, expected: str, required: Iterable[str]) -> dict[str, Any]:
    if isinstance(document, dict):  # the kind of document first: a dataset given as a report says so
        if document.get("format") != expected:
            raise _fail("$.format", f"expected {expected!r}, got {document.get('format')!r}")
        version = document.get("version")
        if version != VERSION or isinstance(version, bool):
            raise UnsupportedEvalDocumentVersion(
                f"$.version: {expected} version {version!r} is not supported; this zigai "
                f"reads version {VERSION}", version=version)
    return _object(document, "$", ("format", "version", *required))


def _data(value: Any, path: str) -> Any:
    """``value`` as JSON data of its own (a copy), or a refusal at ``path``."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as error:
        raise _fail(path, f"is not JSON data ({error}); documents hold plain data only -- "
                          "convert it (e.g. to a dict) in the task") from None


# -- datasets -------------------------------------------------------------------------------------


def dataset_to_document(dataset: Dataset) -> dict[str, Any]:
    """The data-only document of ``dataset`` (evaluators by name, in order)."""
    cases = []
    for position, case in enumerate(dataset.cases):
        path = f"$.cases[{position}]"
        if case.options is not None:
            raise _fail(f"{path}.options", f"case {case.name!r} has per-case run options; they may hold "
                                           "callbacks or secrets and are never written -- set them in code")
        cases.append({"name": case.name, "inputs": _data(case.inputs, f"{path}.inputs"),
                      "expected_output": _data(case.expected_output, f"{path}.expected_output"),
                      "metadata": _data(dict(case.metadata), f"{path}.metadata")})
    return {
        "format": DATASET_FORMAT, "version": VERSION, "name": dataset.name, "cases": cases,
        "evaluators": [e.name for e in dataset.evaluators],
        "trace_evaluators": [e.name for e in dataset.trace_evaluators],
        "report_evaluators": [e.name for e in dataset.report_evaluators],
    }


def _resolve(names: Any, kind: type, registry: tuple[Any, ...], path: str) -> list[Any]:
    found = []
    for position, name in enumerate(_list(names, path)):
        where = child_path(path, position)
        _str(name, where)
        matches = [entry for entry in registry if isinstance(entry, kind) and getattr(entry, "name", None) == name]
        if not matches:
            known = sorted(str(getattr(entry, "name", "")) for entry in registry if isinstance(entry, kind))
            raise UnknownEvaluatorName(
                f"{where}: the registry holds no {kind.__name__} named {name!r} (it holds: "
                f"{', '.join(known) or 'none'}); register one with that name", path=where, name=name)
        if len(matches) > 1:
            raise AmbiguousEvaluatorName(
                f"{where}: the registry holds {len(matches)} {kind.__name__}s named {name!r}; "
                "keep one per name", path=where, name=name)
        found.append(matches[0])
    return found


def dataset_from_document(document: Any, registry: Registry) -> Dataset:
    """Build a :class:`Dataset` from a document, resolving evaluator names in ``registry``."""
    fields = _header(document, DATASET_FORMAT, ("name", "cases", "evaluators", "trace_evaluators",
                                                "report_evaluators"))
    entries = tuple(registry)
    cases = []
    for position, raw in enumerate(_field(fields, "cases", "$", _list)):
        path = f"$.cases[{position}]"
        if isinstance(raw, dict) and "options" in raw:
            raise _fail(f"{path}.options", "per-case run options are not data (they may hold callbacks "
                                           "or secrets); set them in code")
        case = _object(raw, path, ("name", "inputs"), ("expected_output", "metadata"))
        name = _field(case, "name", path, _str)
        metadata = _dict(case.get("metadata", {}), f"{path}.metadata")
        cases.append(_built(partial(Case, name, case["inputs"], case.get("expected_output"), metadata), path))
    evaluators = _resolve(fields["evaluators"], Evaluator, entries, "$.evaluators")
    traces = _resolve(fields["trace_evaluators"], TraceEvaluator, entries, "$.trace_evaluators")
    reports = _resolve(fields["report_evaluators"], ReportEvaluator, entries, "$.report_evaluators")
    name = _field(fields, "name", "$", _str)
    return _built(partial(Dataset, cases, evaluators, trace_evaluators=traces, report_evaluators=reports,
                          name=name), "$")


def _built(make: Callable[[], Any], path: str) -> Any:
    """Run a constructor; its own validation error becomes a refusal at ``path``."""
    try:
        return make()
    except (ZigAIError, TypeError, ValueError) as error:
        raise _fail(path, f"{error}") from None


# -- reports --------------------------------------------------------------------------------------


def _number_out(value: float | None) -> float | str | None:
    if value is None or math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _number_in(value: Any, path: str) -> float | None:
    if isinstance(value, str) and value in _NON_FINITE:
        return _NON_FINITE[value]
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return None if value is None else float(value)
    raise _fail(path, f"must be a number, null, 'nan', 'inf' or '-inf', got {value!r}")


def _usage_out(usage: RunUsage, timing: bool) -> dict[str, Any]:
    out: dict[str, Any] = {name: getattr(usage, name) for name in _USAGE_COUNTS}
    out["details"] = dict(usage.details)
    if timing:
        out.update({name: getattr(usage, name) for name in _USAGE_TIMING})
    return out


def _usage_in(value: Any, path: str) -> RunUsage:
    fields = _object(value, path, (*_USAGE_COUNTS, "details"), _USAGE_TIMING)
    counts = {name: _field(fields, name, path, _count) for name in (*_USAGE_COUNTS, *_USAGE_TIMING)
              if name in fields}
    details = _field(fields, "details", path, _dict)
    for key, item in details.items():
        _count(item, child_path(f"{path}.details", key))
    return _built(lambda: RunUsage(**counts, details=UsageDetails(details)), path)


def _attributes_out(attributes: Mapping[str, Any]) -> dict[str, Any]:
    return {key: list(value) if isinstance(value, tuple) else value for key, value in attributes.items()}


def _attributes_in(value: Any, path: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, item in _dict(value, path).items():
        where = child_path(path, key)
        if isinstance(item, list):
            kinds = {type(x) for x in item}
            if len(kinds) > 1 or not kinds <= {str, int, float}:
                raise _fail(where, "an array attribute holds only strings, only integers or only numbers")
            result[key] = tuple(item)
        elif isinstance(item, (str, bool, int, float)):
            result[key] = item
        else:
            raise _fail(where, f"must be a string, boolean, number or array, got {_type_name(item)}")
    return result


def _span_out(span: Span) -> dict[str, Any]:
    return {
        "name": span.name, "kind": span.kind, "trace_id": span.trace_id, "span_id": span.span_id,
        "parent_span_id": span.parent_span_id, "parent_is_remote": span.parent_is_remote,
        "trace_flags": span.trace_flags, "start_ns": span.start_ns, "end_ns": span.end_ns,
        "attributes": _attributes_out(span.attributes), "status": span.status,
        "status_description": span.status_description,
        "events": [{"name": e.name, "time_ns": e.time_ns, "attributes": _attributes_out(e.attributes)}
                   for e in span.events],
    }


_SPAN_FIELDS = ("name", "kind", "trace_id", "span_id", "parent_span_id", "parent_is_remote", "trace_flags",
                "start_ns", "end_ns", "attributes", "status", "status_description", "events")


def _choice(*options: str) -> Callable[[Any, str], str]:
    def read(value: Any, path: str) -> str:
        if value not in options:
            raise _fail(path, f"must be one of {', '.join(options)}, got {value!r}")
        return str(value)
    return read


def _span_in(value: Any, path: str) -> Span:
    f = _object(value, path, _SPAN_FIELDS)
    for name, digits in _HEX_DIGITS.items():
        if not (f[name] is None and name == "parent_span_id") and not (
                isinstance(f[name], str) and re.fullmatch(f"[0-9a-f]{{{digits}}}", f[name])):
            raise _fail(f"{path}.{name}", f"must be {digits} lowercase hex digits, got {f[name]!r}")
    events = []
    for n, raw in enumerate(_field(f, "events", path, _list)):
        where = f"{path}.events[{n}]"
        e = _object(raw, where, ("name", "time_ns", "attributes"))
        events.append(SpanEvent(_field(e, "name", where, _str), _field(e, "time_ns", where, _count),
                                _attributes_in(e["attributes"], f"{where}.attributes")))
    return Span(_field(f, "name", path, _str), _field(f, "kind", path, _choice("internal", "client")),
                f["trace_id"], f["span_id"], f["parent_span_id"], _field(f, "parent_is_remote", path, _bool),
                _field(f, "trace_flags", path, _count), _field(f, "start_ns", path, _count),
                _field(f, "end_ns", path, _opt_count), _attributes_in(f["attributes"], f"{path}.attributes"),
                _field(f, "status", path, _choice("unset", "ok", "error")),
                _field(f, "status_description", path, _opt_str), tuple(events))


_EVALUATION_FIELDS = ("name", "passed", "score", "reason", "error_type", "error_message", "attempts")


def _evaluation_out(item: EvaluationResult) -> dict[str, Any]:
    return {"name": item.name, "passed": item.passed, "score": _number_out(item.score), "reason": item.reason,
            "error_type": item.error_type, "error_message": item.error_message, "attempts": item.attempts}


def _evaluation_in(value: Any, path: str) -> EvaluationResult:
    f = _object(value, path, _EVALUATION_FIELDS)
    return EvaluationResult(
        _field(f, "name", path, _str), _field(f, "passed", path, _opt_bool), _field(f, "score", path, _number_in),
        _field(f, "reason", path, _opt_str), _field(f, "error_type", path, _opt_str),
        _field(f, "error_message", path, _opt_str), _field(f, "attempts", path, _positive))


_CASE_FIELDS = ("case_index", "repetition", "name", "inputs", "expected_output", "metadata", "output", "usage",
                "evaluations", "error_type", "error_message", "task_attempts", "spans")


def _case_out(case: CaseResult, path: str, timing: bool) -> dict[str, Any]:
    out = {
        "case_index": case.case_index, "repetition": case.repetition, "name": case.name,
        "inputs": _data(case.inputs, f"{path}.inputs"),
        "expected_output": _data(case.expected_output, f"{path}.expected_output"),
        "metadata": _data(dict(case.metadata), f"{path}.metadata"),
        "output": _data(case.output, f"{path}.output"), "usage": _usage_out(case.usage, timing),
        "evaluations": [_evaluation_out(item) for item in case.evaluations],
        "error_type": case.error_type, "error_message": case.error_message,
        "task_attempts": case.task_attempts, "spans": [_span_out(span) for span in case.spans],
    }
    if timing:
        out["duration_s"] = case.duration_s
    return out


def _duration(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
        raise _fail(path, f"must be a finite number of seconds >= 0, got {value!r}")
    return float(value)


def _case_in(value: Any, path: str, position: int, repetitions: int) -> CaseResult:
    f = _object(value, path, _CASE_FIELDS, ("duration_s",))
    index, repetition = _field(f, "case_index", path, _count), _field(f, "repetition", path, _count)
    if (index, repetition) != divmod(position, repetitions):
        raise _fail(path, f"holds case {index} repetition {repetition}, but slot {position} of a "
                          f"{repetitions}-repetition report belongs to case {position // repetitions} "
                          f"repetition {position % repetitions}; reports are in source order")
    evaluations = tuple(_evaluation_in(item, f"{path}.evaluations[{n}]")
                        for n, item in enumerate(_field(f, "evaluations", path, _list)))
    spans = tuple(_span_in(item, f"{path}.spans[{n}]") for n, item in enumerate(_field(f, "spans", path, _list)))
    return CaseResult(
        index, _field(f, "name", path, _str), f["inputs"], f["expected_output"],
        _field(f, "metadata", path, _dict), f["output"], _usage_in(f["usage"], f"{path}.usage"), evaluations,
        error_type=_field(f, "error_type", path, _opt_str), error_message=_field(f, "error_message", path, _opt_str),
        repetition=repetition, task_attempts=_field(f, "task_attempts", path, _count), spans=spans,
        duration_s=_duration(f.get("duration_s", 0.0), f"{path}.duration_s"),
    )


_ANALYSIS_FIELDS = ("name", "passed", "value", "unit", "reason", "error_type", "error_message")


def report_to_document(report: Report, *, timing: bool = True) -> dict[str, Any]:
    """Every durable field of ``report`` (``timing=False`` leaves out durations and times)."""
    return {
        "format": REPORT_FORMAT, "version": VERSION, "dataset": report.dataset_name,
        "repetitions": report.repetitions, "usage": _usage_out(report.usage, timing),
        "cases": [_case_out(case, f"$.cases[{n}]", timing) for n, case in enumerate(report.cases)],
        "analyses": [{"name": a.name, "passed": a.passed, "value": _number_out(a.value), "unit": a.unit,
                      "reason": a.reason, "error_type": a.error_type, "error_message": a.error_message}
                     for a in report.analyses],
    }


def report_from_document(document: Any) -> Report:
    """Rebuild an owned :class:`Report` from a report document."""
    f = _header(document, REPORT_FORMAT, ("dataset", "repetitions", "usage", "cases", "analyses"))
    repetitions = _field(f, "repetitions", "$", _positive)
    cases = tuple(_case_in(item, f"$.cases[{n}]", n, repetitions)
                  for n, item in enumerate(_field(f, "cases", "$", _list)))
    analyses = []
    for n, raw in enumerate(_field(f, "analyses", "$", _list)):
        path = f"$.analyses[{n}]"
        a = _object(raw, path, _ANALYSIS_FIELDS)
        analyses.append(Analysis(_field(a, "name", path, _str), _field(a, "passed", path, _opt_bool),
                                 _field(a, "value", path, _number_in), _field(a, "unit", path, _opt_str),
                                 _field(a, "reason", path, _opt_str), _field(a, "error_type", path, _opt_str),
                                 _field(a, "error_message", path, _opt_str)))
    report = Report(_field(f, "dataset", "$", _str), cases, repetitions=repetitions, analyses=tuple(analyses))
    total = _usage_in(f["usage"], "$.usage")
    if report.usage != total:
        report.close()
        raise _fail("$.usage", "is not the sum of the cases' usage; the document was edited or truncated")
    return report


# -- text -----------------------------------------------------------------------------------------


def _yaml_dumper() -> Any:
    import yaml

    class QuotedDumper(yaml.SafeDumper):
        def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
            super().increase_indent(flow, False)  # list items indented under their key

    QuotedDumper.add_representer(
        str, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"'))
    return QuotedDumper


def dumps(document: Mapping[str, Any], format: Format = "json") -> str:
    """Stable text of a document: two-space indented JSON, or block YAML with quoted strings."""
    if format == "json":
        return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if format == "yaml":
        import yaml

        return str(yaml.dump(dict(document), Dumper=_yaml_dumper(), sort_keys=False, indent=2,
                             allow_unicode=True, default_flow_style=False, width=1 << 30))
    raise _fail("$", f"format must be 'json' or 'yaml', got {format!r}")


def _describe(limits: Limits) -> str:
    return (f"document profile ({limits.max_document_bytes} bytes, {limits.max_value_bytes}-byte strings, "
            f"depth {limits.max_depth}, {limits.max_items} items)")


def loads(text: str | bytes, format: Format = "json", limits: Limits = REPORT_LIMITS) -> Any:
    """Parse one document within ``limits``: the size first, then syntax, depth and counts."""
    if format not in ("json", "yaml"):
        raise _fail("$", f"format must be 'json' or 'yaml', got {format!r}")
    data = text.encode("utf-8") if isinstance(text, str) else text
    if len(data) > limits.max_document_bytes:
        raise _fail("$", f"the document is {len(data)} bytes; the {_describe(limits)} allows "
                         f"{limits.max_document_bytes}")
    if format == "json":
        try:
            return parse_bounded(data, limits)
        except JsonError as error:
            raise _fail("$", f"not valid JSON within the {_describe(limits)}: {error}") from None
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _fail("$", f"the document is not UTF-8: {error}") from None
    value = load_plain(decoded, _fail, "an evaluation document", _describe(limits))
    try:
        validate_bounded(canonical_json(value), limits)
    except JsonError as error:
        raise _fail("$", f"the document exceeds the {_describe(limits)}: {error}") from None
    return value


def dump_dataset(dataset: Dataset, format: Format = "json") -> str:
    """:func:`dataset_to_document` as text."""
    return dumps(dataset_to_document(dataset), format)


def load_dataset(text: str | bytes, registry: Registry, format: Format = "json") -> Dataset:
    """A dataset document's text (within :data:`DATASET_LIMITS`) as a :class:`Dataset`."""
    return dataset_from_document(loads(text, format, DATASET_LIMITS), registry)


def dump_report(report: Report, format: Format = "json", *, timing: bool = True) -> str:
    """:func:`report_to_document` as text."""
    return dumps(report_to_document(report, timing=timing), format)


def load_report(text: str | bytes, format: Format = "json") -> Report:
    """A report document's text (within :data:`REPORT_LIMITS`) as an owned :class:`Report`."""
    return report_from_document(loads(text, format, REPORT_LIMITS))
