"""The speed paths of message construction and history decoding build exactly the checked value.

Hot message classes accept their common exact shape in one test and otherwise run every
field check (``_check_fields``); usage validates all invariants in one expression and
otherwise explains the first broken one; the history fast decoder builds instances without
``__init__``.  Each test here compares a fast path with the checked path it short-cuts, on
valid values and on every kind of wrong value, so a shortcut can never accept (or change)
what the checks would reject (or normalize).
"""

from __future__ import annotations

import itertools
import json
import random
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from _message_samples import every_kind_history
from hypothesis import given, settings
from hypothesis import strategies as st

from zigai import history
from zigai import messages as m
from zigai import usage as u
from zigai.history import decode
from zigai.usage import RequestUsage


class _Text(str):
    """A str subclass: valid for the checks, but not the exact shape the shortcut takes."""


_STAMPS = [None, datetime(2025, 1, 1, tzinfo=UTC),
           datetime(2025, 1, 1, 2, tzinfo=timezone(timedelta(hours=2))),
           datetime(2025, 1, 1), "2025-01-01T00:00:00Z"]
_NAMES = ["x", "", None, _Text("y"), 0, True, b"x"]
_TEXTS = ["x", "", _Text("y"), None, 1]
_PROVIDERS = [None, m.ProviderPart("openai", id="i"), "openai"]
_METADATA = [None, m.Metadata.from_value({"a": 1}), {"a": 1}]

# class -> (field -> candidate values); the first candidate of every field is valid.
_POOLS: dict[type, dict[str, list[Any]]] = {
    m.TextPart: {"content": _TEXTS, "id": _NAMES, "provider": _PROVIDERS,
                 "part_kind": ["text", "thinking"]},
    m.ThinkingPart: {"content": _TEXTS, "id": _NAMES, "signature": _NAMES,
                     "provider": _PROVIDERS, "part_kind": ["thinking", "text"]},
    m.ToolCallPart: {"tool_name": _NAMES, "args": ['{"a":1}', "", {"b": [1]}, {"x": {1, 2}}, None, 3],
                     "tool_call_id": _NAMES, "id": _NAMES, "provider": _PROVIDERS,
                     "part_kind": ["tool-call", "text"]},
    m.SystemPromptPart: {"content": _TEXTS, "timestamp": _STAMPS,
                         "part_kind": ["system-prompt", "user-prompt"]},
    m.UserPromptPart: {"content": ["x", "", (m.TextContent("t"),), (), ["x"], None, 3],
                       "timestamp": _STAMPS, "part_kind": ["user-prompt", "system-prompt"]},
    m.ToolReturnPart: {"tool_name": _NAMES, "tool_call_id": _NAMES,
                       "content": [{"a": [1, 2.5]}, None, float("nan"), {1: 2}, {3}],
                       "outcome": [m.ToolOutcome.success, "error", "bogus", None, 1],
                       "timestamp": _STAMPS, "metadata": _METADATA,
                       "part_kind": ["tool-return", "text"]},
    m.RequestMessage: {"parts": [(m.UserPromptPart("hi"),)], "instructions": _TEXTS,
                       "timestamp": _STAMPS, "metadata": _METADATA,
                       "kind": ["request", "response"]},
    m.ResponseMessage: {"parts": [(m.TextPart("hi"),)],
                        "usage": [RequestUsage(input_tokens=2), None, {"input_tokens": 1}],
                        "model_name": _NAMES, "provider_name": _NAMES,
                        "provider_response_id": _NAMES,
                        "finish_reason": [m.FinishReason.stop, None, "length", "bored", 3],
                        "raw_finish_reason": _TEXTS, "timestamp": _STAMPS,
                        "provider_details": [m.ProviderDetails.from_value({"t": 1}), None,
                                             m.Metadata.from_value({}), {"t": 1}],
                        "metadata": _METADATA, "kind": ["response", "request"]},
}


def _bare(cls: type, values: dict[str, Any]) -> Any:
    made = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(made, name, value)
    return made


def _outcome(run: Any, made: Any) -> tuple[Any, ...]:
    try:
        run(made)
    except Exception as exc:  # noqa: BLE001 - the exception itself is what is compared
        return ("raised", type(exc), str(exc))
    return ("built", tuple((name, type(getattr(made, name)), getattr(made, name))
                           for name in made.__dataclass_fields__))


def _combinations(pool: dict[str, list[Any]], rng: random.Random) -> list[dict[str, Any]]:
    valid = {name: values[0] for name, values in pool.items()}
    one_at_a_time = [valid | {name: value} for name, values in pool.items() for value in values]
    mixed = [{name: rng.choice(values) for name, values in pool.items()} for _ in range(600)]
    return one_at_a_time + mixed


@pytest.mark.parametrize("cls", list(_POOLS), ids=lambda cls: cls.__name__)
def test_post_init_shortcut_matches_every_field_check(cls: type) -> None:
    rng = random.Random(cls.__name__)
    shortcut_taken = 0
    for values in _combinations(_POOLS[cls], rng):
        fast = _outcome(cls.__post_init__, _bare(cls, values))  # type: ignore[attr-defined]
        checked = _outcome(cls._check_fields, _bare(cls, values))  # type: ignore[attr-defined]
        assert fast == checked, values
        shortcut_taken += fast[0] == "built"
    assert shortcut_taken  # the valid shapes really were exercised


@pytest.mark.parametrize("cls", list(_POOLS), ids=lambda cls: cls.__name__)
def test_constructor_errors_are_unchanged_at_the_boundaries(cls: type) -> None:
    # The public constructor (not only the bare halves) raises the named error.
    pool = _POOLS[cls]
    valid = {name: values[0] for name, values in pool.items()}
    cls(**valid)
    empty_identifier = next((n for n, v in pool.items() if v is _NAMES), None)
    if empty_identifier is not None and empty_identifier not in {"id", "signature"} | {
            "model_name", "provider_name", "provider_response_id"}:
        with pytest.raises(m.InvalidMessagePart, match="must not be empty"):
            cls(**valid | {empty_identifier: ""})
    if "timestamp" in pool:
        with pytest.raises(m.InvalidMessagePart, match="timezone-aware"):
            cls(**valid | {"timestamp": datetime(2025, 1, 1)})
        shifted = cls(**valid | {"timestamp": _STAMPS[2]})
        assert shifted.timestamp.tzinfo is UTC and shifted.timestamp == _STAMPS[2]


_COUNTS: list[Any] = [0, 1, 2, 3, -1, True, 1.0]


def test_usage_single_expression_check_matches_the_named_checks() -> None:
    rng = random.Random(5)
    names = u._TOKEN_FIELDS
    cases = [dict(zip(names, combo, strict=True))
             for combo in itertools.product([0, 2, 3], repeat=len(names))]
    cases += [{name: rng.choice(_COUNTS) for name in names} for _ in range(3000)]
    accepted = 0
    for counts in cases:
        details = {"n": 1} if counts["input_tokens"] == 2 else None
        values = counts | {"details": details or u.UsageDetails()}
        fast = _outcome(u._validate_tokens, _bare(RequestUsage, values))
        checked = _outcome(u._explain_invalid_tokens, _bare(RequestUsage, values))
        assert fast == checked, counts
        accepted += fast[0] == "built"
    assert accepted


def test_usage_subset_limits_hold_exactly_at_the_total_and_one_past() -> None:
    assert RequestUsage(input_tokens=5, cache_read_tokens=3, cache_write_tokens=2).total_tokens == 5
    with pytest.raises(u.InvalidUsage, match=r"cache_read_tokens \+ cache_write_tokens \(6\)"):
        RequestUsage(input_tokens=5, cache_read_tokens=3, cache_write_tokens=3)
    assert RequestUsage(output_tokens=4, reasoning_tokens=4, output_audio_tokens=4).output_tokens == 4
    with pytest.raises(u.InvalidUsage, match=r"reasoning_tokens \(5\) must be an inclusive subset"):
        RequestUsage(output_tokens=4, reasoning_tokens=5)
    with pytest.raises(u.InvalidUsage, match="must be >= 0, got -1"):
        RequestUsage(output_tokens=4, output_audio_tokens=-1)
    assert RequestUsage(details={}).details == u.UsageDetails()


def _documents() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(history.stringify(every_kind_history()))["messages"]
    return items


def test_fast_decoder_fills_omitted_optional_fields_like_the_constructor() -> None:
    # Every optional field left out of a document, one at a time and all at once, decodes on
    # the fast path (no fallback) to what the checked decoder (the constructor) builds.
    compared = 0
    for item in _documents():
        for part in item["parts"]:
            for variant in _without_optional_fields(part):
                message = item | {"parts": [variant]}
                try:
                    checked = decode._message(message, "messages[0]")
                except history.InvalidHistory:
                    continue  # some parts need one of their optional fields
                assert decode._fast_message(message) == checked
                compared += 1
        for variant in _without_optional_fields(item, keep={"parts", "kind"}):
            assert decode._fast_message(variant) == decode._message(variant, "messages[0]")
            compared += 1
    assert compared > 100


def _without_optional_fields(value: dict[str, Any], keep: set[str] = frozenset({"part_kind"})
                             ) -> list[dict[str, Any]]:
    optional = [name for name in value if name not in keep]
    variants = [{k: v for k, v in value.items() if k != name} for name in optional]
    variants.append({k: v for k, v in value.items() if k in keep or k not in optional})
    return variants


@pytest.mark.parametrize(("field", "value"), [("colour", "red"), ("content", 7)])
def test_fast_decoder_refuses_unknown_or_mistyped_fields_and_the_checked_error_names_them(
        field: str, value: Any) -> None:
    document = {"kind": "request", "parts": [{"part_kind": "system-prompt", "content": "x",
                                              field: value}]}
    with pytest.raises(decode._Mismatch):
        decode._fast_message(document)
    with pytest.raises(history.InvalidHistory) as caught:
        history.parse(json.dumps({"version": 2, "messages": [document]}))
    assert caught.value.path == f"messages[0].parts[0].{field}"


def test_stringify_reads_frozen_mappings_in_place_and_writes_enum_values() -> None:
    message = m.ResponseMessage(
        (m.TextPart("t"),), usage=RequestUsage(input_tokens=1, details={"b": 1, "a": 2}),
        finish_reason="length", provider_details=m.ProviderDetails.from_value({"z": {"y": [1]}}),
        metadata=m.Metadata.from_value({"k": None}))
    written = json.loads(history.stringify([message]))["messages"][0]
    assert written["usage"]["details"] == {"a": 2, "b": 1}
    assert written["finish_reason"] == "length"
    assert written["provider_details"] == {"z": {"y": [1]}}
    assert written["metadata"] == {"k": None}
    assert history.parse(history.stringify([message])).messages == (message,)


def test_stringify_copies_other_mappings_and_names_what_it_cannot_write() -> None:
    class TierDetails(m.ProviderDetails):
        __slots__ = ()

    message = m.ResponseMessage((m.TextPart("t"),),
                                provider_details=TierDetails.from_value({"tier": "flex"}))
    written = json.loads(history.stringify([message]))["messages"][0]
    assert written["provider_details"] == {"tier": "flex"}
    odd = _bare(m.TextPart, {"content": "t", "id": None, "provider": object(), "part_kind": "text"})
    with pytest.raises(history.InvalidHistory, match="cannot serialize a object"):
        history.stringify([m.ResponseMessage((odd,))])


def test_run_usage_updates_keep_every_other_counter() -> None:
    run = u.RunUsage(requests=1, tool_calls=2, input_tokens=30, output_tokens=40,
                     cache_write_tokens=5, cache_read_tokens=6, input_audio_tokens=7,
                     output_audio_tokens=8, reasoning_tokens=9, details={"d": 1}, attempts=11,
                     provider_time_ns=12, run_time_ns=13)
    names = [f for f in u.RunUsage.__dataclass_fields__]
    more_calls = run.with_tool_calls(3)
    assert [getattr(more_calls, n) for n in names] == [
        getattr(run, n) + (3 if n == "tool_calls" else 0) if n != "details" else run.details
        for n in names]
    timed = run.with_timing(attempts=1, provider_time_ns=2, run_time_ns=3)
    bumps = {"attempts": 1, "provider_time_ns": 2, "run_time_ns": 3}
    assert [getattr(timed, n) for n in names] == [
        getattr(run, n) + bumps.get(n, 0) if n != "details" else run.details for n in names]
    with pytest.raises(u.InvalidUsage, match="tool_calls must be >= 0"):
        run.with_tool_calls(-1)


def test_test_models_reuse_token_counts_but_report_the_pure_estimate() -> None:
    from zigai.model import ModelRequest
    from zigai.testing import FunctionModel, estimate_usage

    answer = m.ResponseMessage((m.TextPart("fine"),))
    model = FunctionModel(lambda messages, info: answer)
    first = (m.RequestMessage.user("hello there"), answer)
    other = (m.RequestMessage.user("a different conversation", instructions="Be brief."),)
    histories = [first[:1], first + (m.RequestMessage.user("and more"),), other,
                 first + (m.RequestMessage.user("and more"),), first[:1], ()]
    for messages in histories:
        request = ModelRequest(messages=messages, instructions=("Rule one.",))
        assert model.request(request).usage == estimate_usage(request, answer.parts)


_json_like = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3),
              st.floats(allow_nan=True, allow_infinity=True), st.just(-0.0)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                            st.dictionaries(st.one_of(st.text(max_size=2), st.integers(0, 2)),
                                            inner, max_size=3)),
    max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(_json_like)
def test_fast_freeze_matches_the_path_tracking_freeze(value: Any) -> None:
    from zigai.messages import json_value as jv

    def attempt(freeze: Any) -> tuple[Any, ...]:
        try:
            frozen = freeze(value)
        except m.InvalidMessagePart as exc:
            return ("refused", str(exc))
        return ("frozen", repr(frozen))  # repr: tuples vs lists, -0.0, FrozenDict all show

    error = lambda text: m.InvalidMessagePart(text)  # noqa: E731
    fast = attempt(lambda v: jv.freeze_json(v, error))
    checked = attempt(lambda v: jv._freeze_checked(v, error, "$", 0))
    assert fast == checked


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_floats_are_refused_wherever_they_sit(bad: float) -> None:
    for content, path in (({"a": bad}, r"\$\.a"), ([bad], r"\$\[0\]"), ({"a": [{"b": bad}]}, r"\$\.a\[0\]\.b")):
        with pytest.raises(m.InvalidMessagePart, match=path + ": JSON numbers must be finite"):
            m.ToolReturnPart("f", "c", content)
    kept = m.ToolReturnPart("f", "c", {"big": 1.7976931348623157e308, "zero": -0.0, "l": [0.5]})
    assert kept.content == {"big": 1.7976931348623157e308, "zero": 0.0, "l": (0.5,)}


def test_timestamps_are_written_in_utc_whatever_zone_they_carry() -> None:
    from zigai.history.encode import format_timestamp

    local = datetime(2025, 1, 1, 3, 0, 0, 5, tzinfo=timezone(timedelta(hours=3)))
    assert format_timestamp(local) == "2025-01-01T00:00:00.000005Z"
    assert format_timestamp(local.astimezone(UTC)) == "2025-01-01T00:00:00.000005Z"


def test_parse_pauses_the_cyclic_collector_only_while_it_decodes() -> None:
    import gc

    text = history.stringify(every_kind_history())
    seen: list[bool] = []
    real = decode.decode_message

    def spy(value: Any, path: str) -> Any:
        seen.append(gc.isenabled())
        return real(value, path)

    was = gc.isenabled()
    try:
        gc.enable()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("zigai.history.owned.decode_message", spy)
            history.parse(text).close()
            assert seen and not any(seen) and gc.isenabled()
            with pytest.raises(history.InvalidHistory):
                history.parse('{"version":2,"messages":[{"kind":"request","parts":[]}]}')
            assert gc.isenabled()
            gc.disable()
            history.parse(text).close()
            assert not gc.isenabled()  # a collector the application turned off stays off
    finally:
        (gc.enable if was else gc.disable)()
