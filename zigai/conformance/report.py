"""Report files of a conformance session: the status as JSON, and JUnit XML for CI.

Job
    Write :meth:`ConformanceServer.status` (optionally with an implementation's own per-scenario
    results) to ``FILE.json`` and as a JUnit ``<testsuite>`` to ``FILE.xml``.

Invariants
    Files are replaced atomically (written beside the target, then renamed), so a reader never
    sees half a report.  In JUnit, ``pass`` is a passing case, ``fail`` and ``incomplete`` are
    ``<failure>`` cases with the first mismatch, ``not-run`` is ``<skipped>``; requests under no
    scenario make one more ``<failure>`` case, ``unrouted``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

__all__ = ["junit_xml", "write_json", "write_junit"]


def _replace(path: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_json(path: Path, status: dict[str, Any]) -> None:
    _replace(path, (json.dumps(status, indent=2, ensure_ascii=False) + "\n").encode())


def junit_xml(status: dict[str, Any], name: str = "zigai-conformance") -> bytes:
    scenarios = status["scenarios"]
    unrouted = status["unrouted"]
    failures = sum(1 for s in scenarios if s["verdict"] in ("fail", "incomplete")) + bool(unrouted)
    skipped = sum(1 for s in scenarios if s["verdict"] == "not-run")
    suite = ElementTree.Element("testsuite", name=name, tests=str(len(scenarios) + bool(unrouted)),
                                failures=str(failures), skipped=str(skipped), errors="0")
    if unrouted:
        case = ElementTree.SubElement(suite, "testcase", classname=name, name="unrouted")
        failure = ElementTree.SubElement(case, "failure", message=f"{len(unrouted)} unrouted request(s)")
        failure.text = json.dumps(unrouted, indent=2, ensure_ascii=False)
    for scenario in scenarios:
        case = ElementTree.SubElement(suite, "testcase", classname=name, name=scenario["id"])
        consumed = f"{scenario['consumed']} of {scenario['interactions']} interactions consumed"
        if scenario["verdict"] == "fail":
            mismatch = scenario["first_mismatch"] or {}
            failure = ElementTree.SubElement(case, "failure", message=str(mismatch.get("message", ""))[:2000])
            failure.text = json.dumps(mismatch, indent=2, ensure_ascii=False) + "\n" + consumed
        elif scenario["verdict"] == "incomplete":
            ElementTree.SubElement(case, "failure", message=f"incomplete: {consumed}")
        elif scenario["verdict"] == "not-run":
            ElementTree.SubElement(case, "skipped", message="no request reached this scenario")
    return ElementTree.tostring(suite, encoding="utf-8", xml_declaration=True)


def write_junit(path: Path, status: dict[str, Any]) -> None:
    _replace(path, junit_xml(status))
