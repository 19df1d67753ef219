"""Import-cost workload: wall time of importing a package in a fresh interpreter."""

from __future__ import annotations

import statistics
import subprocess
import sys

_PROBE = (
    "import time; t = time.perf_counter(); import {module}; "
    "print(time.perf_counter() - t)"
)


def import_seconds(module: str, reps: int) -> float:
    """Median seconds to import ``module`` in ``reps`` fresh interpreters."""
    samples = []
    for _ in range(max(reps, 1)):
        out = subprocess.run(
            [sys.executable, "-c", _PROBE.format(module=module)],
            capture_output=True,
            text=True,
            check=True,
        )
        samples.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(samples)
