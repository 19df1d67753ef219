"""The conformance kit: hold zigai and any other port of the design to the same recordings.

Modules, one job each:

* :mod:`.cassette` — version-1 cassettes, strict JSON comparison and its diff;
* :mod:`.normalize` — the named request normalizations a scenario may ask for;
* :mod:`.scenarios` — language-neutral scenario files (``scenario.schema.json`` beside it);
* :mod:`.catalog` — recordings under cassette roots, their scenario ids and scenarios;
* :mod:`.server` — the loopback server playing the provider side, with verdicts;
* :mod:`.report` — the status as JSON and JUnit XML;
* :mod:`.routes` / :mod:`.driver` — ``zigai conformance run``: zigai itself over real HTTP.

The project's own recordings and their scenario files ship as package data in ``cassettes/``
(:func:`~zigai.conformance.catalog.packaged_cassettes`).  docs/conformance.md is the guide.

Invariants: importing this package imports no provider adapter; the server binds loopback by
default and never opens an outbound connection.
"""

from __future__ import annotations

from zigai.conformance.cassette import InvalidCassette
from zigai.conformance.catalog import (
           DuplicateScenarioId,
           build_catalog,
           packaged_cassettes,
           packaged_scenarios,
)
from zigai.conformance.scenarios import InvalidScenarios, load_scenarios
from zigai.conformance.server import ConformanceServer

__all__ = ["ConformanceServer", "DuplicateScenarioId", "InvalidCassette", "InvalidScenarios", "build_catalog",
           "load_scenarios", "packaged_cassettes", "packaged_scenarios"]
