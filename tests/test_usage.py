"""RequestUsage / RunUsage: invariants, aggregation and immutability."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from zigai.errors import MessageError
from zigai.usage import InvalidUsage, RequestUsage, RunUsage, UsageDetails


def test_total_tokens_is_input_plus_output_with_inclusive_subsets() -> None:
    usage = RequestUsage(
        input_tokens=100, output_tokens=40, cache_read_tokens=60, cache_write_tokens=40,
        input_audio_tokens=10, output_audio_tokens=5, reasoning_tokens=30,
    )
    assert usage.total_tokens == 140


@pytest.mark.parametrize(
    "kwargs",
    [
        {"input_tokens": 10, "cache_read_tokens": 11},
        {"input_tokens": 10, "cache_write_tokens": 11},
        {"input_tokens": 10, "cache_read_tokens": 6, "cache_write_tokens": 5},
        {"input_tokens": 10, "input_audio_tokens": 11},
        {"output_tokens": 10, "reasoning_tokens": 11},
        {"output_tokens": 10, "output_audio_tokens": 11},
    ],
)
def test_subset_counter_larger_than_its_total_is_rejected(kwargs: dict[str, int]) -> None:
    with pytest.raises(InvalidUsage, match="inclusive subset"):
        RequestUsage(**kwargs)


def test_subset_counter_equal_to_its_total_is_accepted() -> None:
    usage = RequestUsage(input_tokens=10, cache_read_tokens=4, cache_write_tokens=6,
                         output_tokens=3, reasoning_tokens=3)
    assert usage.cache_read_tokens + usage.cache_write_tokens == usage.input_tokens


@pytest.mark.parametrize("bad", [-1, 1.0, True, "3", None])
def test_counters_must_be_non_negative_ints(bad: object) -> None:
    with pytest.raises(InvalidUsage):
        RequestUsage(input_tokens=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidUsage):
        RunUsage(requests=bad)  # type: ignore[arg-type]


def test_invalid_usage_is_a_message_error() -> None:
    assert issubclass(InvalidUsage, MessageError)


def test_add_sums_counters_and_details_per_name() -> None:
    a = RequestUsage(input_tokens=5, output_tokens=2, details={"a": 1, "b": 2})
    b = RequestUsage(input_tokens=1, output_tokens=1, cache_read_tokens=1, details={"b": 3, "c": 4})
    total = a + b
    assert total == RequestUsage(input_tokens=6, output_tokens=3, cache_read_tokens=1,
                                 details={"a": 1, "b": 5, "c": 4})
    assert a.details == {"a": 1, "b": 2}  # operands untouched


def test_details_are_immutable_sorted_hashable_and_pickle() -> None:
    usage = RequestUsage(details={"z": 1, "a": 2})
    assert isinstance(usage.details, UsageDetails)
    assert list(usage.details) == ["a", "z"]
    with pytest.raises(AttributeError):
        usage.details._items = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        usage.details["a"] = 3  # type: ignore[index]
    assert hash(usage) == hash(RequestUsage(details={"a": 2, "z": 1}))
    assert pickle.loads(pickle.dumps(usage)) == usage


@pytest.mark.parametrize("details", [{"": 1}, {1: 1}, {"a": -1}, {"a": 1.5}])
def test_bad_details_are_rejected(details: dict[object, object]) -> None:
    with pytest.raises(InvalidUsage):
        RequestUsage(details=details)  # type: ignore[arg-type]


def test_request_usage_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        RequestUsage().input_tokens = 3  # type: ignore[misc]


def test_run_usage_incr_returns_a_new_value() -> None:
    run = RunUsage()
    after = run.incr(RequestUsage(input_tokens=7, output_tokens=3, details={"x": 1}))
    after = after.incr(RequestUsage(input_tokens=1, output_tokens=1, details={"x": 2}))
    assert run == RunUsage()
    assert after == RunUsage(requests=2, input_tokens=8, output_tokens=4, details={"x": 3})
    assert after.total_tokens == 12
    assert after.with_tool_calls(2).tool_calls == 2
    assert after.with_tool_calls(2).requests == 2
    assert (after + after.with_tool_calls()).requests == 4
    assert after.as_request_usage() == RequestUsage(input_tokens=8, output_tokens=4,
                                                    details={"x": 3})


def test_run_usage_incr_rejects_non_request_usage() -> None:
    with pytest.raises(InvalidUsage):
        RunUsage().incr(RunUsage())  # type: ignore[arg-type]


def test_empty_request_usage() -> None:
    assert RequestUsage().is_empty()
    assert not RequestUsage(output_tokens=1).is_empty()


@pytest.mark.parametrize("name", ["attempts", "provider_time_ns", "run_time_ns"])
@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_run_timing_counters_are_non_negative_ints(name: str, bad: object) -> None:
    with pytest.raises(InvalidUsage, match=name):
        RunUsage(**{name: bad})  # type: ignore[arg-type]
    with pytest.raises(InvalidUsage, match=name):
        RunUsage().with_timing(**{name: bad})  # type: ignore[arg-type]


def test_run_timing_accumulates_through_every_operation_and_is_not_part_of_equality() -> None:
    base = RunUsage(requests=1, attempts=2, provider_time_ns=30, run_time_ns=100, details={"x": 1})
    grown = base.incr(RequestUsage(output_tokens=2), attempts=3, provider_time_ns=7)
    assert (grown.requests, grown.attempts, grown.provider_time_ns, grown.run_time_ns) == (2, 5, 37, 100)
    assert grown.details == {"x": 1}
    timed = grown.with_timing(attempts=1, provider_time_ns=3, run_time_ns=50).with_tool_calls(2)
    assert (timed.attempts, timed.provider_time_ns, timed.run_time_ns, timed.tool_calls) == (6, 40, 150, 2)
    total = base + timed
    assert (total.attempts, total.provider_time_ns, total.run_time_ns, total.requests) == (8, 70, 250, 3)
    # durations are measurements: equal work compares (and hashes) equal, attempts do not
    same_work = RunUsage(requests=1, attempts=2, details={"x": 1})
    assert base == same_work and hash(base) == hash(same_work)
    assert base != RunUsage(requests=1, attempts=3, details={"x": 1})
    assert RunUsage(run_time_ns=1_500_000_000).run_time_s == 1.5
    assert RunUsage(provider_time_ns=250_000_000).provider_time_s == 0.25
