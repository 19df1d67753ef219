"""Record the project's own cassettes from a running local model server.

Start the server first (``scripts/local_model.sh --serve``), then::

    python scripts/record_local.py                 # every protocol and scenario
    python scripts/record_local.py chat tool_loop  # only these protocols / scenarios

Each run goes through the real HTTP transport wrapped in ``RecordingTransport``; a cassette
is written only when the structural checks of ``tests/support/local_model.py`` pass, so a bad
take never replaces a good recording.  ``ZIGAI_LLAMA_URL`` overrides the server address
(default http://127.0.0.1:8089).  Prints one line per scenario with its wall time.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support import local_model  # noqa: E402
from support.cassettes import RecordingTransport  # noqa: E402

from zigai.security import UrlPolicy  # noqa: E402
from zigai.transport import HttpTransport  # noqa: E402


def main(argv: list[str]) -> int:
    wanted = set(argv)
    unknown = wanted - set(local_model.PROTOCOLS) - set(local_model.SCENARIO_NAMES)
    if unknown:
        print(f"unknown protocol or scenario: {sorted(unknown)}; protocols "
              f"{local_model.PROTOCOLS}, scenarios {local_model.SCENARIO_NAMES}", file=sys.stderr)
        return 2
    protocols = [p for p in local_model.PROTOCOLS if p in wanted] or list(local_model.PROTOCOLS)
    names = [s for s in local_model.SCENARIO_NAMES if s in wanted] or list(local_model.SCENARIO_NAMES)
    url = os.environ.get("ZIGAI_LLAMA_URL", local_model.DEFAULT_URL)
    http = HttpTransport(url_policy=UrlPolicy.local_development(), default_timeout_s=300.0)
    failures = 0
    for protocol in protocols:
        for name in names:
            spec = local_model.scenario(name)
            if protocol not in spec.protocols:
                continue
            recorder = RecordingTransport(http)
            started = time.monotonic()
            try:
                outcome = local_model.run(protocol, spec, local_model.build_model(protocol, url, recorder, spec))
                local_model.check(spec, outcome, protocol)
            except Exception as exc:  # noqa: BLE001 - report and keep the old cassette
                failures += 1
                print(f"FAIL {protocol}/{name} ({time.monotonic() - started:.1f} s): "
                      f"{type(exc).__name__}: {exc}")
                continue
            path = local_model.cassette_path(protocol, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            recorder.save(path)
            print(f"OK   {protocol}/{name} ({time.monotonic() - started:.1f} s) -> "
                  f"{path.relative_to(ROOT)}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
