"""Record the project's own llm-katan cassettes (the protocols llama-server does not speak).

    python scripts/record_katan.py                # every case of tests/support/katan_model.py
    python scripts/record_katan.py google         # only these protocols / scenarios

Starts llm-katan (dev extra, echo backend) on 127.0.0.1:8093 — the port the recordings name —
runs each case through our provider client over the real HTTP transport wrapped in
``RecordingTransport``, checks its structure, and only then writes
``cassettes/katan/<protocol>/<scenario>.yaml``.  The server is always stopped.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support import katan_model, katan_server  # noqa: E402
from support.cassettes import RecordingTransport  # noqa: E402
from support.replays import assert_structured_answer, assert_text_answer, assert_tool_loop  # noqa: E402

from zigai.security import UrlPolicy  # noqa: E402
from zigai.transport import HttpTransport  # noqa: E402

# katan's own endpoints this script records (the interop test serves azure_openai too)
PROVIDERS = "openai,anthropic,vertexai"


def _start(workdir: str, *flags: str) -> subprocess.Popen[bytes]:
    try:
        return katan_server.start(Path(workdir), katan_model.PORT, katan_model.SERVED_MODEL, PROVIDERS, *flags)
    except katan_server.KatanDidNotStart as exc:
        raise SystemExit(str(exc)) from None


def _check(case: katan_model.KatanCase, responses: tuple) -> None:
    if case.tool:
        assert_tool_loop(responses, "weather")
    elif case.structured:
        assert_structured_answer(responses)
    else:
        assert_text_answer(responses)


def _record_errors(protocol: str, http: HttpTransport, workdir: str) -> None:
    """One cassette over katan's failure phases (``katan_model.ERROR_PHASES``), each phase a
    fresh server on the same port; the statuses must come out as planned."""
    recorder = RecordingTransport(http)
    client = katan_model.build_client(protocol, recorder)
    for flags, count in katan_model.ERROR_PHASES:
        process = _start(workdir, *flags)
        try:
            for _ in range(count):
                try:
                    client.request(katan_model.error_request())
                except Exception:  # noqa: BLE001, S110 - the failure is what is being recorded
                    pass
        finally:
            katan_server.stop(process)
    statuses = [it.status for it in recorder.interactions]
    if statuses != [200, 429, 500, 200]:
        raise AssertionError(f"statuses {statuses}, expected [200, 429, 500, 200]")
    path = katan_model.error_cassette(protocol)
    path.parent.mkdir(parents=True, exist_ok=True)
    recorder.save(path)
    print(f"OK   {protocol}/error_sequence -> {path.relative_to(ROOT)}")


def main(argv: list[str]) -> int:
    wanted = set(argv)
    cases = [c for c in katan_model.CASES if not wanted or {c.protocol, c.name} & wanted]
    http = HttpTransport(url_policy=UrlPolicy.local_development(), default_timeout_s=30.0)
    failures = 0
    with tempfile.TemporaryDirectory() as workdir:
        process = _start(workdir)
        try:
            for case in cases:
                recorder = RecordingTransport(http)
                try:
                    _check(case, katan_model.replay_for(case).run(recorder))
                except Exception as exc:  # noqa: BLE001 - report and keep the old cassette
                    failures += 1
                    print(f"FAIL {case.protocol}/{case.name}: {type(exc).__name__}: {exc}")
                    continue
                path = katan_model.cassette_path(case.protocol, case.name)
                path.parent.mkdir(parents=True, exist_ok=True)
                recorder.save(path)
                print(f"OK   {case.protocol}/{case.name} -> {path.relative_to(ROOT)}")
        finally:
            katan_server.stop(process)
        for protocol in katan_model.ERROR_PROTOCOLS:
            if wanted and not {protocol, "error_sequence"} & wanted:
                continue
            try:
                _record_errors(protocol, http, workdir)
            except Exception as exc:  # noqa: BLE001 - report and keep the old cassette
                failures += 1
                print(f"FAIL {protocol}/error_sequence: {type(exc).__name__}: {exc}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
