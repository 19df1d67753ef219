#!/usr/bin/env python3
"""Generate ``zigai/models/_catalog_data.py`` from the reviewable ``data/model_catalog.json``.

Usage::

    python scripts/gen_model_catalog.py            # rewrite the generated module
    python scripts/gen_model_catalog.py --check    # exit 1 when it would change

The source is validated before anything is written (shape, sorted entries and aliases, HTTPS
source links, limits, profile enum sets, and every ModelCatalog invariant: alias collisions,
replacement links); a failure names the entry and exits 2 without touching the output.  The
output depends only on the source, so the same source always gives the same bytes.  Edit the
JSON (keep it sorted), run this script, and commit both files together.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SOURCE = ROOT / "data" / "model_catalog.json"
OUTPUT = ROOT / "zigai" / "models" / "_catalog_data.py"


def generate(source: Path = SOURCE) -> str:
    """The generated module text for ``source`` (raises the catalog's named errors)."""
    from zigai.models._catalog_source import render_module

    document = json.loads(source.read_text(encoding="utf-8"))
    return render_module(document)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="fail if the output would change")
    args = parser.parse_args(argv)
    from zigai.models.catalog import ModelCatalogError

    try:
        text = generate(args.source)
    except (ModelCatalogError, ValueError) as exc:
        print(f"{args.source}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    if args.check:
        current = args.output.read_bytes() if args.output.exists() else b""
        if current != text.encode("utf-8"):
            print(f"{args.output} is out of date; run scripts/gen_model_catalog.py", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
