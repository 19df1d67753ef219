"""zigai.pricing: exact nano-USD costs, immutable versioned tables, the opt-in built-in snapshot."""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import subprocess
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest

from zigai.pricing import (
    InvalidPrice,
    InvalidPriceTable,
    ModelPrice,
    PriceTable,
    UsageCost,
    builtin,
)
from zigai.usage import InvalidUsage, RequestUsage, RunUsage

REPO = Path(__file__).resolve().parent.parent
GENERATOR = REPO / "scripts" / "gen_builtin_prices.py"
DATA = REPO / "zigai" / "pricing" / "_builtin_data.py"

# $3 in, $15 out, $0.30 cache read, $3.75 cache write, per million tokens.
SONNET = ModelPrice.from_usd("3", "15", cache_read="0.30", cache_write="3.75")
TABLE = PriceTable(
    version="test-2026-01-01",
    entries={("anthropic", "claude-x"): SONNET, ("openai", "gpt-y"): ModelPrice(1, 2)},
    aliases={("anthropic", "claude-x-latest"): "claude-x"},
    prefixes={("anthropic", "claude-x-2"): "claude-x", ("openai", "gpt-y"): "gpt-y"},
)


# --- UsageCost ---------------------------------------------------------------------------------


def test_usage_cost_is_exact_nano_usd_with_decimal_usd_and_dollar_string() -> None:
    cost = UsageCost(123_456)
    assert cost.usd == Decimal("0.000123456")
    assert isinstance(cost.usd, Decimal)
    assert str(cost) == "$0.000123456"
    assert str(UsageCost(12_345_000_000_001)) == "$12345.000000001"
    assert UsageCost(10**30).usd == Decimal("1" + "0" * 21)  # beyond float precision, still exact


def test_usage_cost_adds_sums_and_orders() -> None:
    assert UsageCost(1) + UsageCost(2) == UsageCost(3)
    assert sum([UsageCost(5), UsageCost(7)]) == UsageCost(12)
    assert UsageCost(1) < UsageCost(2)
    with pytest.raises(TypeError):
        UsageCost(1) + 1  # type: ignore[operator]


def test_usage_cost_from_usd_is_exact_and_rejects_float_and_sub_nano() -> None:
    assert UsageCost.from_usd("0.000000001") == UsageCost(1)
    assert UsageCost.from_usd(Decimal("1.5")) == UsageCost(1_500_000_000)
    assert UsageCost.from_usd(2) == UsageCost(2_000_000_000)
    for bad in (0.1, True, "0.0000000001", "-1", "nan", "Infinity", "abc", None):
        with pytest.raises(InvalidPrice):
            UsageCost.from_usd(bad)  # type: ignore[arg-type]


def test_usage_cost_rejects_non_int_and_negative() -> None:
    for bad in (-1, 1.0, True, Decimal(1)):
        with pytest.raises(InvalidPrice):
            UsageCost(bad)  # type: ignore[arg-type]
    assert UsageCost(0).usd == Decimal("0E-9")


# --- ModelPrice ---------------------------------------------------------------------------------


def test_model_price_from_usd_stores_nano_usd_per_million_tokens() -> None:
    assert SONNET.input_per_mtok == 3_000_000_000
    assert SONNET.cache_read_per_mtok == 300_000_000
    assert SONNET.input_audio_per_mtok is None
    for bad in (0.5, "1e-10", "-2"):
        with pytest.raises(InvalidPrice):
            ModelPrice.from_usd(bad, "1")  # type: ignore[arg-type]
    with pytest.raises(InvalidPrice):
        ModelPrice(1, None)  # type: ignore[arg-type]
    with pytest.raises(InvalidPrice):
        ModelPrice(1, 1, cache_read_per_mtok=-1)
    with pytest.raises(InvalidPrice):
        ModelPrice(1, 1, unpriced_charges="web")  # type: ignore[arg-type]
    assert ModelPrice(1, 1, unpriced_charges=("b", "a", "b")).unpriced_charges == ("a", "b")


def test_estimate_splits_inclusive_buckets_exactly() -> None:
    usage = RequestUsage(
        input_tokens=10_000, cache_read_tokens=6_000, cache_write_tokens=1_000, output_tokens=2_000
    )
    # by hand, nano-USD per token = rate / 10**6: 3000 uncached * 3000 + 6000 * 300
    # + 1000 * 3750 + 2000 * 15000
    expected = 3_000 * 3_000 + 6_000 * 300 + 1_000 * 3_750 + 2_000 * 15_000
    assert SONNET.estimate(usage) == UsageCost(expected) == UsageCost(44_550_000)
    assert str(SONNET.estimate(usage)) == "$0.044550000"


def test_estimate_rounds_half_up_once_at_the_end() -> None:
    price = ModelPrice(input_per_mtok=1, output_per_mtok=3)
    assert price.estimate(RequestUsage(input_tokens=499_999)) == UsageCost(0)
    assert price.estimate(RequestUsage(input_tokens=500_000)) == UsageCost(1)  # exactly half: up
    assert price.estimate(RequestUsage(input_tokens=1_499_999)) == UsageCost(1)
    # two buckets each below half a nano-USD add up before rounding
    assert price.estimate(RequestUsage(input_tokens=200_000, output_tokens=100_000)) == UsageCost(1)


def test_estimate_is_exact_for_counts_beyond_float_precision() -> None:
    big = 10**20 + 1
    price = ModelPrice(input_per_mtok=3_000_000_000, output_per_mtok=0)
    assert price.estimate(RequestUsage(input_tokens=big)) == UsageCost(big * 3_000)


def test_non_empty_bucket_without_rate_is_unknown_never_zero() -> None:
    assert SONNET.estimate(RequestUsage(input_tokens=10, input_audio_tokens=1)) is None
    assert SONNET.estimate(RequestUsage(output_tokens=10, output_audio_tokens=1)) is None
    plain = ModelPrice.from_usd("1", "2")
    assert plain.estimate(RequestUsage(input_tokens=10, cache_read_tokens=1)) is None
    assert plain.estimate(RequestUsage(input_tokens=10, cache_write_tokens=1)) is None


def test_zero_bucket_without_rate_is_fine() -> None:
    plain = ModelPrice.from_usd("1", "2")
    usage = RequestUsage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert plain.estimate(usage) == UsageCost(3_000_000_000)
    assert plain.estimate(RequestUsage()) == UsageCost(0)


def test_audio_buckets_and_cached_audio_overlap() -> None:
    price = ModelPrice.from_usd(
        "2", "8", cache_read="1", input_audio="40", output_audio="80"
    )
    usage = RequestUsage(
        input_tokens=1_000, input_audio_tokens=400, output_tokens=300, output_audio_tokens=100
    )
    assert price.estimate(usage) == UsageCost(600 * 2_000 + 400 * 40_000 + 200 * 8_000 + 100 * 80_000)
    # how much of the cached input was audio is not reported: the split is unknown
    both = RequestUsage(input_tokens=1_000, cache_read_tokens=10, input_audio_tokens=10)
    assert price.estimate(both) is None


def test_reasoning_is_output_unless_a_reasoning_rate_is_given() -> None:
    usage = RequestUsage(output_tokens=1_000, reasoning_tokens=400)
    assert ModelPrice(0, 5_000).estimate(usage) == UsageCost(5)
    priced = ModelPrice(0, 5_000, reasoning_per_mtok=10_000)
    assert priced.estimate(usage) == UsageCost((600 * 5_000 + 400 * 10_000) // 1_000_000)
    overlap = RequestUsage(output_tokens=10, reasoning_tokens=8, output_audio_tokens=8)
    assert ModelPrice(0, 1, reasoning_per_mtok=1, output_audio_per_mtok=1).estimate(overlap) is None


def test_estimate_rejects_non_usage() -> None:
    with pytest.raises(InvalidUsage):
        SONNET.estimate({"input_tokens": 1})  # type: ignore[arg-type]


# --- PriceTable ---------------------------------------------------------------------------------


def test_table_estimates_known_models_and_returns_none_for_unknown() -> None:
    usage = RequestUsage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert TABLE.estimate("anthropic", "claude-x", usage) == UsageCost(18_000_000_000)
    assert TABLE.estimate("anthropic", "claude-unknown", usage) is None
    assert TABLE.estimate("openai", "claude-x", usage) is None  # provider is part of the key
    assert TABLE.estimate("anthropic", "CLAUDE-X", usage) is None  # case-sensitive, no guessing


def test_table_lookup_exact_alias_then_longest_prefix() -> None:
    assert TABLE.resolve("anthropic", "claude-x") == "claude-x"
    assert TABLE.resolve("anthropic", "claude-x-latest") == "claude-x"
    assert TABLE.resolve("anthropic", "claude-x-20250101") == "claude-x"
    assert TABLE.resolve("anthropic", "claude-x-1") is None
    table = PriceTable(
        "v",
        {("p", "a"): ModelPrice(1, 1), ("p", "ab"): ModelPrice(2, 2)},
        prefixes={("p", "a"): "a", ("p", "ab-"): "ab"},
    )
    assert table.resolve("p", "ab-3") == "ab"  # longest prefix wins
    assert table.resolve("p", "ax") == "a"
    assert table.lookup("p", "ab") == ModelPrice(2, 2)  # exact beats the prefix "a"
    assert table.lookup("q", "a") is None


def test_table_aggregates_run_usage_with_one_final_rounding() -> None:
    first = RequestUsage(input_tokens=100_000, output_tokens=100_000, cache_read_tokens=50_000)
    second = RequestUsage(input_tokens=300_000, output_tokens=7, cache_write_tokens=1_000)
    run = RunUsage().incr(first).incr(second).with_tool_calls(2)
    total = TABLE.estimate("anthropic", "claude-x", run)
    assert total == TABLE.estimate("anthropic", "claude-x", run.as_request_usage())
    by_hand = 349_000 * 3_000 + 50_000 * 300 + 1_000 * 3_750 + 100_007 * 15_000
    assert total == UsageCost(by_hand) == UsageCost(2_565_855_000)
    # 0.7 nano-USD per input token: each request rounds 0.7 up to 1, the run rounds 1.4 to 1
    tiny = PriceTable("v", {("p", "m"): ModelPrice(input_per_mtok=700_000, output_per_mtok=0)})
    one = RequestUsage(input_tokens=1)
    assert tiny.estimate("p", "m", one) == UsageCost(1)
    assert tiny.estimate("p", "m", RunUsage().incr(one).incr(one)) == UsageCost(1)


def test_table_is_immutable_and_copies_its_inputs() -> None:
    entries = {("p", "m"): ModelPrice(1, 1)}
    table = PriceTable("v1", entries)
    entries[("p", "other")] = ModelPrice(2, 2)
    assert ("p", "other") not in table.entries
    with pytest.raises(TypeError):
        table.entries[("p", "x")] = ModelPrice(1, 1)  # type: ignore[index]
    with pytest.raises(AttributeError):
        table.version = "v2"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        SONNET.input_per_mtok = 0  # type: ignore[misc]


def test_table_version_equality_hash_pickle_and_repr() -> None:
    same = PriceTable(TABLE.version, dict(TABLE.entries), dict(TABLE.aliases), dict(TABLE.prefixes))
    assert same == TABLE and hash(same) == hash(TABLE)
    other = PriceTable("test-2026-02-01", dict(TABLE.entries), dict(TABLE.aliases))
    assert other != TABLE
    clone = pickle.loads(pickle.dumps(TABLE))
    assert clone == TABLE and clone.resolve("anthropic", "claude-x-2x") == "claude-x"
    assert repr(TABLE) == (
        "PriceTable(version='test-2026-01-01', entries=2, aliases=1, prefixes=2)"
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"version": ""}, "version"),
        ({"entries": {("p",): ModelPrice(1, 1)}}, "pairs"),
        ({"entries": {("p", ""): ModelPrice(1, 1)}}, "pairs"),
        ({"entries": {("p", "m"): (1, 1)}}, "ModelPrice"),
        ({"aliases": {("p", "alias"): "missing"}}, "names no entry"),
        ({"aliases": {("q", "alias"): "m"}}, "names no entry"),
        ({"aliases": {("p", "m"): "m"}}, "shadow"),
        ({"prefixes": {("p", "m-"): "missing"}}, "names no entry"),
    ],
)
def test_table_rejects_inconsistent_data(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"version": "v", "entries": {("p", "m"): ModelPrice(1, 1)}}
    args.update(kwargs)
    with pytest.raises(InvalidPriceTable, match=message):
        PriceTable(**args)  # type: ignore[arg-type]


def test_pricing_errors_pickle() -> None:
    for error in (InvalidPrice("bad rate"), InvalidPriceTable("bad table")):
        clone = pickle.loads(pickle.dumps(error))
        assert type(clone) is type(error) and str(clone) == str(error)


# --- built-in snapshot ----------------------------------------------------------------------------


def test_builtin_is_opt_in_and_not_loaded_by_import() -> None:
    code = (
        "import sys, zigai, zigai.pricing; "
        "print('zigai.pricing' in sys.modules and 'zigai.pricing._builtin_data' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    code = "import sys, zigai; print('zigai.pricing' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_builtin_version_names_the_snapshot() -> None:
    import zigai.pricing as pricing
    from zigai.pricing import _builtin_data

    assert pricing.builtin_version == _builtin_data.VERSION == builtin().version
    assert pricing.builtin_version == (
        f"genai-prices-{_builtin_data.SOURCE_VERSION}+{_builtin_data.SNAPSHOT_DATE}"
    )
    assert builtin() is builtin()  # loaded once, shared (it is immutable)
    with pytest.raises(AttributeError):
        pricing.no_such_name  # noqa: B018


def test_builtin_prices_a_known_model_exactly_as_by_hand() -> None:
    table = builtin()
    price = table.lookup("anthropic", "claude-sonnet-4-0")
    assert price is not None
    assert (price.input_per_mtok, price.output_per_mtok) == (3_000_000_000, 15_000_000_000)
    assert (price.cache_read_per_mtok, price.cache_write_per_mtok) == (300_000_000, 3_750_000_000)
    usage = RequestUsage(
        input_tokens=12_345, cache_read_tokens=2_000, cache_write_tokens=345, output_tokens=678
    )
    # $3/M * 10000 + $0.30/M * 2000 + $3.75/M * 345 + $15/M * 678
    # = $0.03 + $0.0006 + $0.00129375 + $0.01017 = $0.04206375
    cost = table.estimate("anthropic", "claude-sonnet-4-0", usage)
    assert cost == UsageCost(42_063_750)
    assert cost is not None and cost.usd == Decimal("0.042063750")
    # the source's own aliases and prefix rules are carried in the data
    assert table.resolve("anthropic", "claude-4-sonnet") == "claude-sonnet-4-0"
    assert table.estimate("anthropic", "claude-sonnet-4-0-20990101", usage) == cost
    assert table.estimate("anthropic", "no-such-model", usage) is None


def test_builtin_data_is_sorted_and_attributed() -> None:
    from zigai.pricing import _builtin_data as data

    assert list(data.MODELS) == sorted(data.MODELS)
    assert list(data.ALIASES) == sorted(data.ALIASES)
    assert list(data.PREFIXES) == sorted(data.PREFIXES)
    header = data.__doc__ or ""
    assert "genai-prices" in header and "MIT License" in header and data.SNAPSHOT_DATE in header
    providers = {row[0] for row in data.MODELS}
    assert {"openai", "anthropic", "google", "groq", "mistral", "deepseek"} <= providers
    assert "openrouter" not in providers


# --- generator (needs the dev-only genai-prices package) --------------------------------------


def _peer_python() -> str:
    if importlib.util.find_spec("genai_prices") is not None:
        return sys.executable
    configured = os.environ.get("ZIGAI_PEER_PYTHON")
    candidate = Path(configured) if configured else REPO.parent / "peer-venv" / "bin" / "python"
    if candidate.exists():
        probe = subprocess.run([str(candidate), "-c", "import genai_prices"], capture_output=True)
        if probe.returncode == 0:
            return str(candidate)
    pytest.skip(
        "genai-prices is not importable (dev-only; pip install genai-prices, or set "
        "ZIGAI_PEER_PYTHON to an interpreter that has it)"
    )


def test_generator_is_deterministic_and_matches_the_committed_data(tmp_path: Path) -> None:
    from zigai.pricing import _builtin_data as data

    python = _peer_python()
    version = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('genai-prices'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    outputs = []
    for name in ("a.py", "b.py"):
        target = tmp_path / name
        subprocess.run(
            [python, str(GENERATOR), "--snapshot-date", data.SNAPSHOT_DATE, "--output", str(target)],
            capture_output=True, check=True,
        )
        outputs.append(target.read_bytes())
    assert outputs[0] == outputs[1]
    if version != data.SOURCE_VERSION:
        pytest.skip(f"installed genai-prices {version} differs from the snapshot's {data.SOURCE_VERSION}")
    assert outputs[0] == DATA.read_bytes()


def test_builtin_estimates_agree_with_genai_prices() -> None:
    python = _peer_python()
    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("anthropic", "claude-sonnet-4-0", {"input_tokens": 12_345, "cache_read_tokens": 2_000,
                                            "cache_write_tokens": 345, "output_tokens": 678}),
        ("openai", "gpt-4o", {"input_tokens": 5_000, "cache_read_tokens": 1_000, "output_tokens": 77}),
        ("google", builtin_model("google"), {"input_tokens": 999, "output_tokens": 1_001}),
        ("groq", builtin_model("groq"), {"input_tokens": 31_337, "output_tokens": 4_242}),
    ]
    script = (
        "import json, sys\n"
        "from genai_prices import Usage, calc_price\n"
        "out = []\n"
        "for provider, model, usage in json.load(sys.stdin):\n"
        "    src = {'xai': 'x-ai'}.get(provider, provider)\n"
        "    price = calc_price(Usage(**usage), model_ref=model, provider_id=src)\n"
        "    out.append(str(price.total_price))\n"
        "print(json.dumps(out))\n"
    )
    result = subprocess.run(
        [python, "-c", script], input=json.dumps(cases), capture_output=True, text=True, check=True
    )
    theirs = [Decimal(value) for value in json.loads(result.stdout)]
    for (provider, model, usage), expected in zip(cases, theirs, strict=True):
        ours = builtin().estimate(provider, model, RequestUsage(**usage))
        assert ours is not None, (provider, model)
        nano = (expected * 10**9).to_integral_value(rounding=ROUND_HALF_UP)
        assert ours.nano_usd == int(nano), (provider, model, expected)


def builtin_model(provider: str) -> str:
    """The first built-in model of ``provider`` (keeps the cross-check independent of churn)."""
    return next(model for p, model in builtin().entries if p == provider)
