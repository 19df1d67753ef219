#!/usr/bin/env python3
"""Dev-only: generate ``zigai/pricing/_builtin_data.py`` from the ``genai-prices`` package data.

Run it with an interpreter that has ``genai-prices`` installed (it is never a
runtime dependency of zigai)::

    /work/peer-venv/bin/python scripts/gen_builtin_prices.py --snapshot-date 2026-12-02

What is taken, per model of the providers in ``PROVIDERS``:

* only a flat price: ``ModelInfo.prices`` must be one ``ModelPrice`` (or a
  one-element list whose condition is empty); time-conditional price lists are
  skipped, because which price applies depends on the request date;
* only ``Decimal`` rates that are whole nano-USD per million tokens; a tiered
  rate (or a finer one) is unknown: the model is skipped when that is its input
  or output rate, otherwise that one bucket stays unknown (``None``);
* the standard price only; request-specific ``price_variants`` (batch, service
  tiers ...) are not modelled;
* models with a rate for a quantity zigai's usage cannot see or separate
  (images, video, documents, characters, hours, per-request fees ...) are
  skipped, since pricing those tokens at the text rate would be wrong;
* charges that sit outside the token counts (``SEPARATE_CHARGES``: per-search
  fees, the 1-hour cache-write rate, cached-audio reads) are listed in
  ``unpriced_charges`` and not applied;
* model matching: ``equals`` clauses become aliases and ``starts_with`` clauses
  prefix rules; ``contains``, ``ends_with``, regex and ``and`` clauses are
  dropped (the model then matches less, never more).  An alias or prefix is
  kept only if the source's own first-match lookup sends that string (and, for
  a prefix, the string plus a suffix) to the same model; an alias equal to a
  kept model id is dropped (exact ids win).

The output is sorted and contains no timestamps except ``--snapshot-date``, so
the same package version and date always produce the same bytes.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from collections import Counter
from collections.abc import Iterable
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

# genai-prices provider id -> zigai provider name.  OpenRouter is left out on
# purpose: it reports the cost it charged, and its routed prices vary by upstream.
PROVIDERS: dict[str, str] = {
    "anthropic": "anthropic",
    "cerebras": "cerebras",
    "cohere": "cohere",
    "deepseek": "deepseek",
    "fireworks": "fireworks",
    "google": "google",
    "groq": "groq",
    "mistral": "mistral",
    "moonshotai": "moonshotai",
    "openai": "openai",
    "perplexity": "perplexity",
    "together": "together",
    "x-ai": "xai",
    "zai": "zai",
}

# genai-prices price key -> position in zigai's ModelPrice rate tuple.
TOKEN_RATES: dict[str, int] = {
    "input_mtok": 0,
    "output_mtok": 1,
    "cache_read_mtok": 2,
    "cache_write_mtok": 3,
    "input_audio_mtok": 4,
    "output_audio_mtok": 5,
    "output_reasoning_mtok": 6,
}
RATE_COUNT = 7
SEPARATE_CHARGES = frozenset(
    {"web_searches_kcount", "storage_searches_kcount", "cache_write_1h_mtok", "cache_audio_read_mtok"}
)
NANO_PER_USD = 10**9
OUTPUT = Path(__file__).resolve().parent.parent / "zigai" / "pricing" / "_builtin_data.py"

Row = tuple[Any, ...]


def _nano(rate: object) -> int | None:
    """Whole nano-USD per million tokens for a flat Decimal rate, else None (unknown)."""
    if not isinstance(rate, Decimal) or not rate.is_finite() or rate < 0:
        return None
    scaled = rate * NANO_PER_USD
    if scaled != scaled.to_integral_value():
        return None
    return int(scaled)


def _flat_price(model: Any) -> Any | None:
    from genai_prices import types

    prices = model.prices
    if isinstance(prices, types.ModelPrice):
        return prices
    if len(prices) == 1 and prices[0].constraint is None:
        return prices[0].prices
    return None


def _clause_terms(clause: Any, equals: list[str], prefixes: list[str]) -> None:
    from genai_prices import types

    if isinstance(clause, types.ClauseEquals):
        equals.append(clause.equals)
    elif isinstance(clause, types.ClauseStartsWith):
        prefixes.append(clause.starts_with)
    elif isinstance(clause, types.ClauseOr):
        for inner in clause.or_:
            _clause_terms(inner, equals, prefixes)
    # contains / ends_with / regex / and: dropped on purpose


def _source_match(source: Any, model_ref: str) -> str | None:
    """The id of the model the source itself picks for ``model_ref`` (first match wins)."""
    for model in source.models:
        if model.is_match(model_ref):
            return str(model.id)
    return None


def convert(providers: Iterable[Any]) -> tuple[list[Row], list[Row], list[Row], Counter[str]]:
    """Turn genai-prices providers into sorted (models, aliases, prefixes) rows plus skip counts."""
    models: list[Row] = []
    aliases: list[Row] = []
    prefixes: list[Row] = []
    skipped: Counter[str] = Counter()
    for source in providers:
        name = PROVIDERS.get(source.id)
        if name is None:
            continue
        ids: set[str] = set()
        kept: list[tuple[str, list[str], list[str]]] = []
        for model in source.models:
            if model.id in ids:
                skipped["duplicate id"] += 1
                continue
            price = _flat_price(model)
            if price is None:
                skipped["conditional price"] += 1
                continue
            rates: list[int | None] = [None] * RATE_COUNT
            charges: set[str] = set()
            reason = None
            for key, value in sorted(vars(price).items()):
                if value is None or key.startswith("_"):
                    continue
                if key in TOKEN_RATES:
                    rates[TOKEN_RATES[key]] = _nano(value)
                elif key in SEPARATE_CHARGES:
                    charges.add(key)
                else:
                    reason = f"unsupported rate {key}"
                    break
            if reason is None and (rates[0] is None or rates[1] is None):
                reason = "tiered or sub-nano input/output rate"
            if reason is not None:
                skipped[reason] += 1
                continue
            ids.add(model.id)
            models.append((name, model.id, *rates, tuple(sorted(charges))))
            equals: list[str] = []
            starts: list[str] = []
            _clause_terms(model.match, equals, starts)
            kept.append((model.id, equals, starts))
        claimed_alias: set[str] = set()
        claimed_prefix: set[str] = set()
        for model_id, equals, starts in kept:
            for alias in equals:
                if alias in ids or alias in claimed_alias:
                    continue
                if _source_match(source, alias) != model_id:
                    skipped["alias resolving elsewhere in the source"] += 1
                    continue
                claimed_alias.add(alias)
                aliases.append((name, alias, model_id))
            for prefix in starts:
                if prefix in claimed_prefix:
                    continue
                probes = (prefix, prefix + "-zigai-probe")
                if any(_source_match(source, probe) != model_id for probe in probes):
                    skipped["prefix resolving elsewhere in the source"] += 1
                    continue
                claimed_prefix.add(prefix)
                prefixes.append((name, prefix, model_id))
    return sorted(models), sorted(aliases), sorted(prefixes), skipped


def render(
    version: str, snapshot_date: str, data_digest: str, licence: str, providers: Iterable[Any]
) -> str:
    """The full text of ``_builtin_data.py``."""
    models, aliases, prefixes, _ = convert(providers)
    builtin_version = f"genai-prices-{version}+{snapshot_date}"
    out = [
        '"""Built-in price snapshot for zigai.pricing.builtin() -- GENERATED, do not edit.',
        "",
        "Generated by scripts/gen_builtin_prices.py from the Python package",
        f"genai-prices {version} (https://github.com/pydantic/genai-prices),",
        f"snapshot date {snapshot_date}; source data file genai_prices/data.py sha256={data_digest}.",
        "",
        "The source data is redistributed under its licence, reproduced verbatim from",
        "the wheel's dist-info:",
        "",
        *(f"    {line}".rstrip() for line in licence.splitlines()),
        "",
        "Only flat, unconditional per-token rates are kept; everything else is unknown",
        "(see the generator's docstring).  Rates are nano-USD per million tokens.",
        '"""',
        "",
        "from typing import Any",
        "",
        f"VERSION = {builtin_version!r}",
        f"SOURCE_VERSION = {version!r}",
        f"SNAPSHOT_DATE = {snapshot_date!r}",
        "",
        "# (provider, model_id, input, output, cache_read, cache_write, input_audio,",
        "#  output_audio, reasoning, unpriced_charges)",
        "MODELS: tuple[tuple[Any, ...], ...] = (",
        *(f"    {row!r}," for row in models),
        ")",
        "",
        "# (provider, alias, model_id)",
        "ALIASES: tuple[tuple[str, str, str], ...] = (",
        *(f"    {row!r}," for row in aliases),
        ")",
        "",
        "# (provider, prefix, model_id): the longest matching prefix wins",
        "PREFIXES: tuple[tuple[str, str, str], ...] = (",
        *(f"    {row!r}," for row in prefixes),
        ")",
        "",
    ]
    return "\n".join(out)


def _licence_text() -> str:
    """The package's licence file; refuse to generate unless it is the MIT licence."""
    dist = importlib.metadata.distribution("genai-prices")
    for entry in dist.files or ():
        if entry.name == "LICENSE" and ".dist-info" in str(entry):
            text = entry.read_text(encoding="utf-8")
            if '"""' in text or "\\" in text:
                raise SystemExit("the licence text cannot be embedded in a docstring verbatim")
            if "MIT License" in text and "Permission is hereby granted" in text:
                return text.strip()
            raise SystemExit("genai-prices is not MIT-licensed any more: review before redistributing")
    raise SystemExit("genai-prices ships no LICENSE file: review before redistributing")


def _data_digest() -> str:
    dist = importlib.metadata.distribution("genai-prices")
    for entry in dist.files or ():
        if str(entry).replace("\\", "/") == "genai_prices/data.py" and entry.hash is not None:
            return entry.hash.value
    return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--snapshot-date", required=True, help="YYYY-MM-DD recorded in the version")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="fail if the output would change")
    args = parser.parse_args(argv)
    try:
        date.fromisoformat(args.snapshot_date)
    except ValueError:
        parser.error(f"--snapshot-date must be YYYY-MM-DD, got {args.snapshot_date!r}")
    from genai_prices.data import providers

    version = importlib.metadata.version("genai-prices")
    text = render(version, args.snapshot_date, _data_digest(), _licence_text(), providers)
    _, _, _, skipped = convert(providers)
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is out of date", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    for reason, count in sorted(skipped.items()):
        print(f"  skipped {count:4d}: {reason}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
