"""zigai.retry: classification, backoff, Retry-After, budgets, run control, hook, idempotency."""

from __future__ import annotations

import random
import time

import pytest
from support.timing import CANCEL_SLACK_S, CancelLater

from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut
from zigai.errors import JsonError
from zigai.provider import (
    ProviderAuthError,
    ProviderBadRequest,
    ProviderClientError,
    ProviderConnectionError,
    ProviderNotFound,
    ProviderResponseDecodeError,
    ProviderServerError,
    RateLimited,
    UnexpectedRedirect,
)
from zigai.retry import (
    RETRY_CATEGORIES,
    RetryAttempt,
    RetryPolicy,
    StreamRetryGuard,
    backoff_delay_ms,
    classify,
    run_with_retries,
)
from zigai.transport import (
    RedirectRejected,
    ResponseTooLarge,
    StreamLineTooLarge,
    TransportConnectionFailed,
    TransportDecodeFailed,
    TransportTimedOut,
)

FAST = RetryPolicy(max_attempts=3, initial_delay_ms=0, max_delay_ms=0, jitter=False)


class Script:
    """fn for run_with_retries: raises the scripted errors in order, then returns 'ok'."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls: list[tuple[int, str | None]] = []

    def __call__(self, attempt: int, key: str | None) -> str:
        self.calls.append((attempt, key))
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


CATEGORY_EXAMPLES = [
    (RateLimited("slow down", status=429), "rate_limit"),
    (ProviderServerError("boom", status=500), "server_error"),
    (ProviderServerError("overloaded", status=529), "server_error"),
    (TransportTimedOut("late"), "timeout"),
    (TransportConnectionFailed("refused"), "connection"),
    (ProviderConnectionError("reset"), "connection"),
    (TransportDecodeFailed("bad gzip"), "decode"),
    (ProviderResponseDecodeError("bad json", status=200), "decode"),
]

NEVER_RETRIED = [
    Cancelled("stop"),
    RunTimedOut("late"),
    ResponseTooLarge("big", limit=1),
    StreamLineTooLarge("long", limit=1),
    ProviderBadRequest("bad", status=400),
    ProviderAuthError("who", status=401),
    ProviderNotFound("where", status=404),
    ProviderClientError("teapot", status=418),
    UnexpectedRedirect("moved", status=302),
    RedirectRejected("moved", status=301),
    JsonError("too deep"),
    ValueError("application bug"),
]


@pytest.mark.parametrize(("error", "category"), CATEGORY_EXAMPLES)
def test_classify_puts_each_failure_in_its_own_category(
    error: BaseException, category: str
) -> None:
    assert classify(error) == category


@pytest.mark.parametrize("error", NEVER_RETRIED, ids=lambda e: type(e).__name__)
def test_classify_refuses_control_size_and_client_errors(error: BaseException) -> None:
    assert classify(error) is None


@pytest.mark.parametrize(("error", "category"), CATEGORY_EXAMPLES)
def test_each_category_is_retried_when_the_policy_names_it(
    error: BaseException, category: str
) -> None:
    script = Script(error)
    result = run_with_retries(
        script, policy=RetryPolicy(
            retry_on=frozenset({category}), initial_delay_ms=0, max_delay_ms=0, jitter=False
        ), control=RunControl()
    )
    assert result == "ok"
    assert [a for a, _ in script.calls] == [1, 2]


@pytest.mark.parametrize(("error", "category"), CATEGORY_EXAMPLES)
def test_a_category_left_out_of_retry_on_is_raised_at_once(
    error: BaseException, category: str
) -> None:
    others = RETRY_CATEGORIES - {category}
    script = Script(error)
    with pytest.raises(type(error)):
        run_with_retries(
            script, policy=RetryPolicy(retry_on=others, initial_delay_ms=0, jitter=False),
            control=RunControl(),
        )
    assert len(script.calls) == 1


@pytest.mark.parametrize("error", NEVER_RETRIED, ids=lambda e: type(e).__name__)
def test_unclassified_errors_are_never_retried(error: BaseException) -> None:
    script = Script(error)
    with pytest.raises(type(error)) as raised:
        run_with_retries(script, policy=FAST, control=RunControl())
    assert raised.value is error
    assert len(script.calls) == 1


def test_max_attempts_bounds_the_attempts_and_the_last_error_surfaces() -> None:
    errors = [ProviderServerError(f"e{i}", status=503) for i in range(5)]
    script = Script(*errors)
    with pytest.raises(ProviderServerError) as raised:
        run_with_retries(script, policy=FAST, control=RunControl())
    assert raised.value is errors[2]
    assert [a for a, _ in script.calls] == [1, 2, 3]


def test_max_attempts_one_means_no_retry() -> None:
    script = Script(ProviderServerError("e", status=500))
    with pytest.raises(ProviderServerError):
        run_with_retries(script, policy=RetryPolicy.no_retry(), control=RunControl())
    assert len(script.calls) == 1


def test_exponential_backoff_without_jitter_is_exact_and_capped() -> None:
    policy = RetryPolicy(initial_delay_ms=100, multiplier=2.0, max_delay_ms=300, jitter=False)
    rng = random.Random(0)
    assert [backoff_delay_ms(policy, k, rng) for k in range(1, 6)] == [
        100.0, 200.0, 300.0, 300.0, 300.0
    ]
    assert backoff_delay_ms(policy, 10_000, rng) == 300.0  # no float overflow


def test_full_jitter_draws_uniformly_below_the_exponential_cap_with_a_seeded_rng() -> None:
    policy = RetryPolicy(initial_delay_ms=100, multiplier=3.0, max_delay_ms=1000, jitter=True)
    caps = [100.0, 300.0, 900.0, 1000.0, 1000.0]
    drawn = [backoff_delay_ms(policy, k, random.Random(42 + k)) for k in range(1, 6)]
    expected = [random.Random(42 + k).uniform(0.0, cap) for k, cap in zip(range(1, 6), caps, strict=True)]
    assert drawn == expected
    for value, cap in zip(drawn, caps, strict=True):
        assert 0.0 <= value <= cap


def test_jittered_waits_reach_the_hook_from_the_injected_rng() -> None:
    seen: list[RetryAttempt] = []
    policy = RetryPolicy(
        max_attempts=3, initial_delay_ms=4, max_delay_ms=8, jitter=True,
        before_retry=seen.append,
    )
    script = Script(ProviderServerError("a", status=500), ProviderServerError("b", status=500))
    run_with_retries(script, policy=policy, control=RunControl(), rng=random.Random(5))
    reference = random.Random(5)
    first, second = reference.uniform(0, 4.0), reference.uniform(0, 8.0)
    assert [a.planned_delay_s for a in seen] == [first / 1000.0, second / 1000.0]
    assert seen[1].cumulative_delay_s == pytest.approx((first + second) / 1000.0)


def test_retry_after_replaces_backoff_when_honoured() -> None:
    seen: list[RetryAttempt] = []
    policy = RetryPolicy(initial_delay_ms=5000, max_delay_ms=5000, jitter=False,
                         before_retry=seen.append)
    script = Script(RateLimited("429", status=429, retry_after_s=0.003))
    assert run_with_retries(script, policy=policy, control=RunControl()) == "ok"
    assert seen[0].planned_delay_s == 0.003
    assert seen[0].retry_after_s == 0.003


def test_retry_after_is_ignored_when_not_honoured() -> None:
    seen: list[RetryAttempt] = []
    policy = RetryPolicy(initial_delay_ms=2, max_delay_ms=2, jitter=False,
                         honor_retry_after=False, before_retry=seen.append)
    script = Script(RateLimited("429", status=429, retry_after_s=30.0))
    run_with_retries(script, policy=policy, control=RunControl())
    assert seen[0].planned_delay_s == 0.002


def test_retry_after_beyond_the_total_budget_ends_retrying_with_the_provider_error() -> None:
    error = RateLimited("429", status=429, retry_after_s=5.0)
    script = Script(error)
    with pytest.raises(RateLimited) as raised:
        run_with_retries(script, policy=RetryPolicy(max_total_delay_ms=4999), control=RunControl())
    assert raised.value is error
    assert len(script.calls) == 1


def _budget_run(max_total_delay_ms: int) -> tuple[Script, list[RetryAttempt]]:
    seen: list[RetryAttempt] = []
    policy = RetryPolicy(
        max_attempts=10, initial_delay_ms=2, multiplier=1.0, max_delay_ms=2, jitter=False,
        max_total_delay_ms=max_total_delay_ms, before_retry=seen.append,
    )
    script = Script(*[ProviderServerError(f"e{i}", status=500) for i in range(10)])
    with pytest.raises(ProviderServerError):
        run_with_retries(script, policy=policy, control=RunControl())
    return script, seen


def test_total_delay_budget_exactly_reached_is_allowed() -> None:
    script, seen = _budget_run(6)
    assert len(script.calls) == 4  # three 2 ms waits = 6 ms, exactly the budget
    assert [a.cumulative_delay_s for a in seen] == [0.002, 0.004, 0.006]


def test_total_delay_budget_one_ms_short_stops_one_wait_earlier() -> None:
    script, seen = _budget_run(5)
    assert len(script.calls) == 3
    assert [a.cumulative_delay_s for a in seen] == [0.002, 0.004]


def test_a_wait_past_the_run_deadline_raises_run_timed_out_without_sleeping() -> None:
    hook_calls: list[RetryAttempt] = []
    control = RunControl(deadline=time.monotonic() + 5.0)
    error = RateLimited("429", status=429, retry_after_s=60.0)
    script = Script(error)
    with pytest.raises(RunTimedOut) as raised:
        run_with_retries(
            script, policy=RetryPolicy(max_total_delay_ms=120_000, before_retry=hook_calls.append),
            control=control,
        )
    assert raised.value.__cause__ is error
    assert hook_calls == []
    assert len(script.calls) == 1


def test_the_deadline_interrupts_a_wait_that_started_in_time() -> None:
    control = RunControl(deadline=time.monotonic() + 0.2)

    def expire_during_wait(_: RetryAttempt) -> None:
        # make the deadline pass while the 50 ms wait is in progress
        object.__setattr__(control, "deadline", time.monotonic() + 0.005)

    policy = RetryPolicy(initial_delay_ms=50, max_delay_ms=50, jitter=False,
                         before_retry=expire_during_wait)
    script = Script(ProviderServerError("e", status=500))
    with pytest.raises(RunTimedOut):
        run_with_retries(script, policy=policy, control=control)
    assert len(script.calls) == 1


def test_cancellation_interrupts_a_wait() -> None:
    token = CancellationToken()
    cancels: list[CancelLater] = []

    def cancel_during_the_wait(attempt: RetryAttempt) -> None:
        # the hook runs just before the 10 s wait: the cancel lands while it is in progress
        cancels.append(CancelLater(token, 0.05).start())

    policy = RetryPolicy(initial_delay_ms=10_000, max_delay_ms=10_000, jitter=False,
                         max_total_delay_ms=10_000, before_retry=cancel_during_the_wait)
    script = Script(ProviderServerError("e", status=500))
    try:
        with pytest.raises(Cancelled):
            run_with_retries(script, policy=policy, control=RunControl(token=token))
        assert len(cancels) == 1 and cancels[0].latency() < CANCEL_SLACK_S  # not the 10 s
    finally:
        for cancel in cancels:
            cancel.stop()
    assert len(script.calls) == 1


def test_cancellation_before_an_attempt_stops_the_request() -> None:
    token = CancellationToken()
    token.cancel("user stop")
    script = Script()
    with pytest.raises(Cancelled):
        run_with_retries(script, policy=FAST, control=RunControl(token=token))
    assert script.calls == []


def test_the_hook_sees_attempt_category_planned_and_cumulative_delay_and_request_id() -> None:
    seen: list[RetryAttempt] = []
    first = RateLimited("429", status=429, request_id="req_abc")
    second = TransportConnectionFailed("reset")
    policy = RetryPolicy(initial_delay_ms=1, multiplier=2.0, max_delay_ms=100, jitter=False,
                         before_retry=seen.append)
    assert run_with_retries(Script(first, second), policy=policy, control=RunControl()) == "ok"
    assert seen == [
        RetryAttempt(1, "rate_limit", first, 0.001, 0.001, "req_abc", None),
        RetryAttempt(2, "connection", second, 0.002, 0.003, None, None),
    ]


def test_a_failing_hook_propagates_and_stops_retrying() -> None:
    class HookRefused(Exception):
        pass

    def refuse(_: RetryAttempt) -> None:
        raise HookRefused("no more")

    script = Script(ProviderServerError("e", status=500))
    with pytest.raises(HookRefused):
        run_with_retries(script, policy=RetryPolicy(before_retry=refuse), control=RunControl())
    assert len(script.calls) == 1


def test_idempotency_key_is_reused_across_retries_and_fresh_per_logical_request() -> None:
    first = Script(ProviderServerError("a", status=500), TransportTimedOut("b"))
    second = Script(ProviderServerError("c", status=502))
    run_with_retries(first, policy=FAST, control=RunControl(), idempotency_header="Idempotency-Key")
    run_with_retries(second, policy=FAST, control=RunControl(), idempotency_header="Idempotency-Key")
    keys_first = {key for _, key in first.calls}
    keys_second = {key for _, key in second.calls}
    assert len(first.calls) == 3 and len(keys_first) == 1
    assert len(second.calls) == 2 and len(keys_second) == 1
    (key_a,), (key_b,) = keys_first, keys_second
    assert key_a != key_b
    assert isinstance(key_a, str) and len(key_a) == 36


def test_no_idempotency_key_without_a_header() -> None:
    script = Script(ProviderServerError("a", status=500))
    run_with_retries(script, policy=FAST, control=RunControl())
    assert [key for _, key in script.calls] == [None, None]


def test_no_retry_after_a_stream_event_was_delivered() -> None:
    guard = StreamRetryGuard()
    error = ProviderConnectionError("stream broke")

    def stream_once(attempt: int, key: str | None) -> str:
        guard.mark_delivered()
        raise error

    with pytest.raises(ProviderConnectionError) as raised:
        run_with_retries(stream_once, policy=FAST, control=RunControl(), stream_guard=guard)
    assert raised.value is error
    assert guard.delivered


def test_a_stream_that_failed_before_delivering_is_retried() -> None:
    guard = StreamRetryGuard()
    script = Script(TransportConnectionFailed("refused"))
    assert run_with_retries(script, policy=FAST, control=RunControl(), stream_guard=guard) == "ok"
    assert len(script.calls) == 2


@pytest.mark.parametrize(
    "changes",
    [
        {"retry_on": frozenset({"everything"})},
        {"max_attempts": 0},
        {"initial_delay_ms": -1},
        {"max_total_delay_ms": True},
        {"multiplier": 0.5},
    ],
)
def test_nonsense_policies_are_refused(changes: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**changes)  # type: ignore[arg-type]


def test_default_policy_values() -> None:
    policy = RetryPolicy()
    assert (policy.max_attempts, policy.initial_delay_ms, policy.max_delay_ms) == (3, 500, 30_000)
    assert policy.retry_on == RETRY_CATEGORIES
    assert policy.jitter and policy.honor_retry_after
    assert policy.max_total_delay_ms == 60_000
