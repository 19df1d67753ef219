"""Record real error sequences (5xx, 429 and 503 with Retry-After, 400) from a LiteLLM proxy.

    python scripts/record_litellm.py                 # every protocol of tests/support/litellm_proxy.py
    python scripts/record_litellm.py responses       # only these protocols

Why a proxy: neither llama-server nor llm-katan (which does not serve ``/v1/responses``) can be
told to answer 429 or 5xx on the OpenAI Responses route, but LiteLLM's proxy does so from its
own rate limiting, cooldown and admission code, on each route it serves.  The sequence and why
each status happens is in ``tests/support/litellm_proxy.py``; the cassettes go to
``cassettes/litellm/<protocol>/error_sequence.yaml``, beside the other servers' recordings.

Needs, outside zigai's dependencies:

* LiteLLM's proxy in a venv of its own, e.g.
  ``python -m venv /tmp/litellm && /tmp/litellm/bin/pip install 'litellm[proxy]==1.106.12'``
  (1.106.12 is the last release whose ``[proxy]`` extra installs from PyPI alone); point
  ``ZIGAI_LITELLM`` at its ``litellm`` command (default: ``litellm`` on ``PATH``).
* llama-server and the model from ``scripts/local_model.sh`` (``ZIGAI_LOCAL_MODEL_DIR``,
  default ``.local-model``).

For each protocol the script starts the proxy on 127.0.0.1:8095 with a master key drawn for
the run (the recorder keeps request headers out of cassettes and redacts the key from
bodies), starts llama-server on :8096 only when the sequence needs it and a listener on :8097
that accepts and never answers, checks the statuses came out as planned, and only then writes
the cassette.  Every process it starts is stopped, whatever happens.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support import litellm_proxy as P  # noqa: E402
from support.cassettes import RecordingTransport  # noqa: E402

from zigai.security import UrlPolicy  # noqa: E402
from zigai.transport import HttpTransport  # noqa: E402

STARTUP_LIMIT_S = 120.0
STALLED_MODEL = "gemma-stalled"


def _config() -> str:
    """The proxy's configuration (YAML is a superset of JSON)."""
    upstream = {"model": f"openai/{P.MODEL_ID}", "api_key": "none"}
    return json.dumps({
        "model_list": [
            {"model_name": P.MODEL_ID,
             "litellm_params": {**upstream, "api_base": f"http://127.0.0.1:{P.LLAMA_PORT}/v1"}},
            {"model_name": STALLED_MODEL,
             "litellm_params": {**upstream, "api_base": f"http://127.0.0.1:{P.STALL_PORT}/v1"}},
        ],
        "router_settings": {"num_retries": 0, "cooldown_time": P.COOLDOWN_S,
                            "allowed_fails_policy": {"InternalServerErrorAllowedFails": 0}},
        "litellm_settings": {"num_retries": 0, "request_timeout": 60},
        "general_settings": {"max_in_flight_requests_per_worker": 1,
                             "max_queued_requests_per_worker": 0},
    }, indent=1)


def _status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=1.0) as response:  # noqa: S310 - 127.0.0.1 only
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=15)


@contextmanager
def _server(name: str, command: list[str], health: str, workdir: str,
            env: dict[str, str] | None = None) -> Iterator[None]:
    log = open(os.path.join(workdir, f"{name}.log"), "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(command, cwd=workdir, env=env, stdin=subprocess.DEVNULL,  # noqa: S603
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + STARTUP_LIMIT_S
        while _status(health) != 200:
            if process.poll() is not None or time.monotonic() >= deadline:
                tail = Path(log.name).read_text(errors="replace")[-2000:]
                raise SystemExit(f"{name} did not start ({health}); its log ends:\n{tail}")
            time.sleep(0.2)
        yield
    finally:
        _stop(process)
        log.close()


def _litellm(workdir: str, master_key: str) -> AbstractContextManager[None]:
    command = os.environ.get("ZIGAI_LITELLM") or shutil.which("litellm")
    if not command:
        raise SystemExit("no LiteLLM proxy: pip install 'litellm[proxy]==1.106.12' in a venv of its "
                         "own and set ZIGAI_LITELLM=/that/venv/bin/litellm")
    config = Path(workdir, "litellm.yaml")
    config.write_text(_config())
    env = dict(os.environ, HOME=workdir, LITELLM_MASTER_KEY=master_key,
               LITELLM_LOCAL_MODEL_COST_MAP="True", NO_DOCS="True")
    return _server("litellm", [command, "--config", str(config), "--host", "127.0.0.1",
                               "--port", str(P.PORT)],
                   f"{P.BASE_URL}/health/liveliness", workdir, env)


def _llama(workdir: str) -> AbstractContextManager[None]:
    models = Path(os.environ.get("ZIGAI_LOCAL_MODEL_DIR") or ROOT / ".local-model")
    binary, model = models / "llama.cpp/build/bin/llama-server", models / "gemma-3-270m-q4_k_m.gguf"
    if not (binary.is_file() and model.is_file()):
        raise SystemExit(f"no llama-server or model under {models}: run scripts/local_model.sh "
                         "or set ZIGAI_LOCAL_MODEL_DIR")
    command = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(P.LLAMA_PORT),
               "--jinja", "--chat-template-file", str(ROOT / "scripts/local_model_chat.jinja"),
               "--ctx-size", "4096", "--parallel", "1", "--threads", "1", "--no-webui",
               "--seed", "7", "--alias", P.MODEL_ID]
    return _server("llama-server", command, f"http://127.0.0.1:{P.LLAMA_PORT}/health", workdir)


class _Stall:
    """A listener that accepts connections and never answers, so a request the proxy sends
    it stays in flight until :meth:`release`."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", P.STALL_PORT))
        self.accepted = threading.Event()
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        with suppress(OSError):
            while True:
                connection, _ = self.listener.accept()
                self.held.append(connection)
                self.accepted.set()

    def release(self) -> None:
        for connection in self.held:
            connection.close()
        self.listener.close()
        self.thread.join(timeout=5)


def _stalled_request(master_key: str) -> threading.Thread:
    """A request (not recorded) to the stalled deployment, sent from a thread."""
    body = json.dumps({"model": STALLED_MODEL, "messages": [{"role": "user", "content": "hold"}]})
    request = urllib.request.Request(f"{P.BASE_URL}/v1/chat/completions", data=body.encode(),
                                     headers={"Authorization": f"Bearer {master_key}",
                                              "Content-Type": "application/json"})

    def send() -> None:
        with suppress(OSError):
            urllib.request.urlopen(request, timeout=90).close()  # noqa: S310 - 127.0.0.1 only

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


#: What our client must make of each recorded exchange, in order ("ok": a decoded answer).
OUTCOMES = ["ProviderServerError", "RateLimited", "ok", "ProviderServerError", "ok",
            "ProviderBadRequest"]


def _attempt(client: object, label: str, outcomes: list[str]) -> None:
    started = time.monotonic()
    try:
        client.request(P.error_request())  # type: ignore[attr-defined]
        outcome = "ok"
    except Exception as exc:  # noqa: BLE001 - the failure is what is being recorded
        outcome = type(exc).__name__
    outcomes.append(outcome)
    print(f"     {label}: {outcome} ({time.monotonic() - started:.1f} s)")


def record(protocol: str, http: HttpTransport, workdir: str) -> None:
    master_key = "sk-" + secrets.token_hex(24)
    recorder = RecordingTransport(http, safe_response_headers=("retry-after",))
    client = P.build_client(protocol, recorder, api_key=master_key)
    outcomes: list[str] = []
    with _litellm(workdir, master_key):
        _attempt(client, "upstream down", outcomes)
        failed_at = time.monotonic()
        _attempt(client, "deployment cooling down", outcomes)
        with _llama(workdir):
            time.sleep(max(0.0, failed_at + P.COOLDOWN_S + 1.0 - time.monotonic()))
            _attempt(client, "upstream up", outcomes)
            stall = _Stall()
            try:
                held = _stalled_request(master_key)
                if not stall.accepted.wait(30):
                    raise AssertionError("the proxy never forwarded the stalled request")
                _attempt(client, "proxy at capacity", outcomes)
            finally:
                stall.release()
            held.join(timeout=90)
            _attempt(client, "proxy admits again", outcomes)
            _attempt(P.build_client(protocol, recorder, model=P.UNKNOWN_MODEL, api_key=master_key),
                     "unknown model", outcomes)
    statuses = [it.status for it in recorder.interactions]
    if statuses != P.STATUSES:
        raise AssertionError(f"statuses {statuses}, expected {P.STATUSES}")
    if outcomes != OUTCOMES:
        raise AssertionError(f"our client made {outcomes} of them, expected {OUTCOMES}")
    path = P.error_cassette(protocol)
    path.parent.mkdir(parents=True, exist_ok=True)
    recorder.save(path)
    print(f"OK   {protocol}/error_sequence -> {path.relative_to(ROOT)}")


def main(argv: list[str]) -> int:
    unknown = set(argv) - set(P.PROTOCOLS)
    if unknown:
        print(f"unknown protocol {sorted(unknown)}; expected some of {P.PROTOCOLS}", file=sys.stderr)
        return 2
    http = HttpTransport(url_policy=UrlPolicy.local_development(), default_timeout_s=120.0)
    failures = 0
    for protocol in [p for p in P.PROTOCOLS if p in argv] or list(P.PROTOCOLS):
        print(f"---- {protocol}")
        with tempfile.TemporaryDirectory() as workdir:
            try:
                record(protocol, http, workdir)
            except Exception as exc:  # noqa: BLE001 - report and keep the old cassette
                failures += 1
                print(f"FAIL {protocol}/error_sequence: {type(exc).__name__}: {exc}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
