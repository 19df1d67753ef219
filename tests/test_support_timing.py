"""The stall meter that load-aware deadline bounds rely on (``support/timing.py``)."""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from support.timing import EXCUSE_CAP_S, StallMeter, assert_ended_within


def test_a_stopped_process_is_measured_as_stalled_and_a_late_call_still_fails() -> None:
    # A helper stops this whole process for 0.5 s (SIGSTOP, then SIGCONT), as an overloaded
    # machine does when it leaves the test process unscheduled.
    with StallMeter() as meter:
        began = time.monotonic()
        helper = subprocess.Popen(["sh", "-c", f"sleep 0.2; kill -STOP {os.getpid()}; sleep 0.5; "
                                               f"kill -CONT {os.getpid()}"])
        assert helper.wait(10) == 0
        time.sleep(0.05)  # let the meter's own late wake-up be recorded
        stalled = meter.stalled(began)
        assert 0.45 <= stalled <= time.monotonic() - began  # the 0.5 s stop (longer only under load)
        assert meter.stalled(began, began + 0.1) < 0.05  # the stop came later
        assert time.monotonic() - began > 0.7
        assert_ended_within(began, 0.6, meter)  # more than 0.6 s: allowed only thanks to the stall
        after = time.monotonic()
        time.sleep(0.3)
        with pytest.raises(AssertionError, match="not scheduled"):
            assert_ended_within(after, 0.1, meter)  # plain lateness is not excused

def test_a_quiet_process_gets_exactly_the_slack() -> None:
    with StallMeter() as meter:
        began = time.monotonic()
        time.sleep(0.2)
        with pytest.raises(AssertionError, match="after the event"):
            assert_ended_within(began, 0.1, meter)
        with pytest.raises(AssertionError, match="before the event"):
            assert_ended_within(None, 1.0, meter)


def test_the_excuse_is_capped() -> None:
    with StallMeter() as meter:
        began = time.monotonic()
        meter._stalls.append((began - 100.0, began + 100.0))  # as if frozen throughout
        assert meter.stalled(began - 100.0, began + 100.0) > EXCUSE_CAP_S
        time.sleep(0.2)
        assert_ended_within(began, 0.1, meter)  # 0.2 s elapsed: within slack + cap
        with pytest.raises(AssertionError, match=f"allowed 0.1 s \\+ {EXCUSE_CAP_S:.3f} s"):
            assert_ended_within(began - EXCUSE_CAP_S, 0.1, meter)  # more than slack + cap
