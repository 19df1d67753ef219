"""Compare zigai's PydanticAI stable-v2 validator with the real library on mutated fixtures.

Run with the peer venv (pydantic-ai-slim==2.31.0)::

    /work/peer-venv/bin/python scripts/diff_pydantic_ai_codec.py

For every object in every golden fixture and every key in it, the script
deletes the key or replaces its value with one of a few probe values, then
asks both the library (``ModelMessagesTypeAdapter.validate_json``) and
``zigai.codecs._pydantic_ai_schema.check_messages`` whether the document is
valid.  It prints the agreement table, every case zigai accepts but the
library rejects (a bug: exit status 1), and a summary of the cases the library
accepts but zigai rejects (intended strictness: lax coercions and inferred
discriminators).  Dev-only; never part of the test suite.
"""

from __future__ import annotations

import collections
import copy
import importlib.metadata
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROBES: list[Any] = [None, 1, 1.5, "x", [], {}, True, "2026-01-01T00:00:00Z", ["x"], {"a": 1}]


def _objects(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    if isinstance(value, dict):
        yield path, value
        for key, item in value.items():
            yield from _objects(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _objects(item, (*path, index))


def main() -> int:
    if importlib.metadata.version("pydantic-ai-slim") != "2.31.0":
        sys.stderr.write("needs pydantic-ai-slim==2.31.0\n")
        return 2
    sys.path.insert(0, str(ROOT))
    import pydantic_ai.messages as messages

    from zigai.codecs._pydantic_ai_schema import SchemaViolation, check_messages

    adapter = messages.ModelMessagesTypeAdapter

    def library_ok(value: Any) -> bool:
        try:
            adapter.validate_json(json.dumps(value))
        except Exception:
            return False
        return True

    def zigai_ok(value: Any) -> bool:
        try:
            check_messages(value)
        except SchemaViolation:
            return False
        return True

    table: collections.Counter[tuple[bool, bool]] = collections.Counter()
    stricter: collections.Counter[tuple[str, str]] = collections.Counter()
    bugs: list[str] = []
    for fixture in sorted((ROOT / "tests" / "fixtures" / "pydantic_ai").glob("*.json")):
        if fixture.name in ("MANIFEST.json", "conversation.json"):
            continue
        base = json.loads(fixture.read_text(encoding="utf-8"))
        for path, obj in list(_objects(base)):
            for key in list(obj):
                for probe in ["<delete>", *PROBES]:
                    if probe != "<delete>" and obj[key] == probe and type(obj[key]) is type(probe):
                        continue
                    mutated = copy.deepcopy(base)
                    target = mutated
                    for step in path:
                        target = target[step]
                    if probe == "<delete>":
                        del target[key]
                    else:
                        target[key] = probe
                    verdict = (library_ok(mutated), zigai_ok(mutated))
                    table[verdict] += 1
                    label = f"{key} := {json.dumps(probe) if probe != '<delete>' else 'deleted'}"
                    if verdict == (False, True):
                        bugs.append(f"{fixture.name} {list(path)} {label}")
                    elif verdict == (True, False):
                        stricter[(key, label)] += 1
    print("library/zigai verdicts (accept, accept):", dict(table))
    print(f"zigai accepts, library rejects: {len(bugs)}")
    for line in bugs:
        print("  ", line)
    print("library accepts, zigai rejects (intended strictness):")
    for (_key, label), count in sorted(stricter.items()):
        print(f"   {count:4d}  {label}")
    return 1 if bugs else 0


if __name__ == "__main__":
    raise SystemExit(main())
