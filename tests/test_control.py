"""RunControl: absolute deadlines, cancellation precedence, interruptible sleeps."""

from __future__ import annotations

import pickle
import threading
import time

import pytest
from support.timing import StallMeter, assert_ended_within

from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut, deadline_after_ms


def test_start_takes_the_tightest_timeout() -> None:
    before = time.monotonic()
    control = RunControl.start(5000, None, 200)
    assert control.deadline is not None
    assert before + 0.2 <= control.deadline <= time.monotonic() + 0.2


def test_no_timeouts_means_unbounded() -> None:
    control = RunControl.start(None)
    assert control.deadline is None and control.remaining() is None
    control.check()


def test_remaining_never_negative_and_check_raises_after_deadline() -> None:
    control = RunControl(deadline=time.monotonic() - 1)
    assert control.remaining() == 0.0
    with pytest.raises(RunTimedOut):
        control.check()


def test_cancellation_wins_over_timeout() -> None:
    token = CancellationToken()
    token.cancel("user pressed stop")
    control = RunControl(deadline=time.monotonic() - 1, token=token)
    with pytest.raises(Cancelled, match="user pressed stop"):
        control.check()


def test_attempt_deadline_is_the_smaller_of_attempt_and_run() -> None:
    control = RunControl(deadline=time.monotonic() + 10)
    assert control.attempt_deadline(None) == control.deadline
    assert control.attempt_deadline(100) < control.deadline  # type: ignore[operator]
    tight = RunControl(deadline=time.monotonic() + 0.05)
    assert tight.attempt_deadline(60_000) == tight.deadline
    unbounded = RunControl()
    assert unbounded.attempt_deadline(100) is not None


def test_sleep_is_interrupted_by_cancellation() -> None:
    control = RunControl()
    with StallMeter() as meter:
        threading.Timer(0.05, control.token.cancel).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            control.sleep(5)
        assert_ended_within(started, 2, meter)  # the cancel, not the 5 s sleep


def test_sleep_past_the_deadline_raises_timeout_without_oversleeping() -> None:
    with StallMeter() as meter:
        control = RunControl(deadline=time.monotonic() + 0.05)
        with pytest.raises(RunTimedOut):
            control.sleep(5)
        assert control.deadline is not None
        assert_ended_within(control.deadline, 1.5, meter)  # the deadline, not the 5 s sleep


def test_sleep_within_budget_returns() -> None:
    RunControl(deadline=time.monotonic() + 5).sleep(0.001)


def test_negative_values_are_rejected() -> None:
    with pytest.raises(ValueError):
        deadline_after_ms(-1)
    with pytest.raises(ValueError):
        RunControl().sleep(-1)


def test_control_errors_pickle() -> None:
    for error in (RunTimedOut("late"), Cancelled("stop")):
        assert str(pickle.loads(pickle.dumps(error))) == str(error)
