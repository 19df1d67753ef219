"""Opt-in live suite: the local-recording scenarios against a running llama-server.

Run ``scripts/local_model.sh --serve`` in one terminal, then
``ZIGAI_LIVE_LLAMA=1 python -m pytest tests/live``.  ``ZIGAI_LLAMA_URL`` overrides the
address (default http://127.0.0.1:8089).  With ``ZIGAI_LIVE_RECORD=1`` each passing run
also rewrites its cassette under ``cassettes/local/`` (as ``scripts/record_local.py`` does).
"""

from __future__ import annotations

import os

import pytest
from support import local_model
from support.cassettes import RecordingTransport

from zigai.security import UrlPolicy
from zigai.transport import HttpTransport

pytestmark = pytest.mark.skipif(
    os.environ.get("ZIGAI_LIVE_LLAMA") != "1",
    reason="live local-model suite: start scripts/local_model.sh --serve and set ZIGAI_LIVE_LLAMA=1",
)

CASES = local_model.CASES


@pytest.fixture(scope="module")
def http() -> HttpTransport:
    return HttpTransport(url_policy=UrlPolicy.local_development(), default_timeout_s=300.0)


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("protocol", "name"), CASES, ids=[f"{p}-{s}" for p, s in CASES])
def test_live_scenario(http: HttpTransport, protocol: str, name: str) -> None:
    url = os.environ.get("ZIGAI_LLAMA_URL", local_model.DEFAULT_URL)
    spec = local_model.scenario(name)
    recorder = RecordingTransport(http)
    outcome = local_model.run(protocol, spec, local_model.build_model(protocol, url, recorder, spec))
    local_model.check(spec, outcome, protocol)
    if os.environ.get("ZIGAI_LIVE_RECORD") == "1":
        path = local_model.cassette_path(protocol, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        recorder.save(path)
