"""The scenarios a conformance server plays: cassettes found under roots, with their ids.

Job
    Walk cassette roots (folders or single files), load every recording, give it its scenario
    id and attach the first matching scenario (for its named normalizations and, in ``run``,
    the run it describes).

Ids
    A cassette's id is its path relative to its root, without ``.yaml``, with ``/`` replaced
    by ``.`` (``buffered/openai_gpt_4o_mini.yaml`` is ``buffered.openai_gpt_4o_mini``).  Two
    cassettes with one id raise :class:`DuplicateScenarioId`.

Invariants
    Files named ``*scenarios.yaml`` are scenario files, never recordings.  The packaged
    recordings (:func:`packaged_cassettes`) and scenario files (:func:`packaged_scenarios`) are
    what ``pip install zigai`` ships.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from zigai.conformance.cassette import Interaction, load_cassette
from zigai.conformance.scenarios import Scenario, find_scenario, load_scenarios
from zigai.errors import ConformanceError

__all__ = ["DuplicateScenarioId", "Entry", "build_catalog", "iter_cassettes", "packaged_cassettes",
           "packaged_scenarios", "scenario_id"]

_ID = re.compile(r"^[A-Za-z0-9_.\-]+$")


class DuplicateScenarioId(ConformanceError):
    """Two cassettes would be served under the same scenario id (rename one or pass one root)."""


@dataclass(frozen=True)
class Entry:
    """One playable recording: its id, file, path relative to its root and scenario (if any)."""

    id: str
    path: Path
    relative: str
    interactions: tuple[Interaction, ...]
    scenario: Scenario | None


def packaged_cassettes() -> Path:
    """The project's own recordings, shipped inside the package."""
    return Path(str(resources.files("zigai.conformance").joinpath("cassettes")))


def packaged_scenarios() -> list[Path]:
    """The scenario files shipped beside the recordings, in precedence order."""
    root = packaged_cassettes()
    return [root / "own-scenarios.yaml", root / "conformance-scenarios.yaml"]


def scenario_id(relative: str) -> str:
    """The id of the cassette at ``relative`` (see the module docstring)."""
    stem = relative[: -len(".yaml")] if relative.endswith(".yaml") else relative
    ident = stem.replace("/", ".")
    if not _ID.match(ident):
        raise ConformanceError(f"cassette path {relative!r} cannot be a scenario id "
                               "(use letters, digits, '_', '-' and '.')")
    return ident


def iter_cassettes(paths: Iterable[Path]) -> Iterator[tuple[Path, str]]:
    """Every recording under ``paths`` with its path relative to its root, sorted per root."""
    for base in paths:
        if base.is_file():
            yield base, base.name
            continue
        for path in sorted(base.rglob("*.yaml")):
            if not path.name.endswith("scenarios.yaml"):
                yield path, path.relative_to(base).as_posix()


def load_all_scenarios(files: Iterable[Path]) -> list[Scenario]:
    """The scenarios of ``files``, earlier files first (they take precedence)."""
    found: list[Scenario] = []
    for path in files:
        found += load_scenarios(path)
    return found


def build_catalog(roots: Iterable[Path], scenarios: list[Scenario]) -> list[Entry]:
    """One entry per recording under ``roots``, ids unique."""
    entries: dict[str, Entry] = {}
    for path, relative in iter_cassettes(roots):
        ident = scenario_id(relative)
        if ident in entries:
            raise DuplicateScenarioId(
                f"{path} and {entries[ident].path} both have the scenario id {ident!r}")
        entries[ident] = Entry(ident, path, relative, load_cassette(path), find_scenario(relative, scenarios))
    return list(entries.values())
