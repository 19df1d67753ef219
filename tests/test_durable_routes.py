"""Durable execution across processes: every tool route is a step (SQLite and PostgreSQL), two
queue workers on PostgreSQL with one SIGKILLed mid-run, and the run operations (API and CLI).

Worker processes are real children (``tests/support/durable_*_worker.py``) killed with SIGKILL;
every model request and tool execution is counted in a SQLite file the children commit to
before going on.  PostgreSQL runs as a throwaway cluster (``tests/support/pg_cluster.py``), one
per test session.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="durable tests need DBOS: pip install -e '.[dev]' (pins dbos)")

from support.pg_cluster import Cluster, start_cluster  # noqa: E402

from zigai.durable import DurableRunNotFound, DurableRuns, DurableRunWaitTimedOut  # noqa: E402

SUPPORT = Path(__file__).parent / "support"
REPO = Path(__file__).resolve().parent.parent
CEILING_S = 180.0  # only bounds a hang: a child under load and coverage is slow to import DBOS

ROUTES = {
    "direct": ("direct: direct charged 1", ["zigai.model_request#0", "zigai.tool_call#1:charge",
                                            "zigai.model_request#2"]),
    "toolset": ("toolset: toolset charged 2", ["zigai.model_request#0", "zigai.tool_call#1:ts__charge",
                                               "zigai.model_request#2"]),
    "prepared": ("prepared: prepared charged 3", ["zigai.model_request#0", "zigai.tool_call#1:charge",
                                                  "zigai.model_request#2"]),
    "policy": ("policy: policy charged 4", ["zigai.model_request#0", "zigai.tool_call#1:charge",
                                            "zigai.model_request#2"]),
    "eager": ("eager: eager charged 5", ["zigai.model_request#0", "zigai.tool_call#1:charge",
                                         "zigai.model_request#2"]),
    "on_demand": ("on_demand: on_demand charged 6", ["zigai.model_request#0", "zigai.model_request#2",
                                                     "zigai.tool_call#3:charge", "zigai.model_request#4"]),
    "mcp": ("mcp: mcp charged 7", ["zigai.model_request#0", "zigai.tool_call#1:mcp__charge",
                                   "zigai.model_request#2"]),
    "output": ({"total": 42}, ["zigai.model_request#0", "zigai.output_function#1:final_result"]),
    "output_type": ({"total": 42}, ["zigai.model_request#0", "zigai.output_function#1:final_total"]),
    "streamed": ("streamed: streamed charged 9", ["zigai.model_request#0", "zigai.tool_call#1:charge",
                                                  "zigai.model_request#2", "DBOS.writeStream", "DBOS.closeStream"]),
    "approved": ("approved: approved charged 8", ["zigai.model_request#0", "zigai.tool_call#1:charge",
                                                  "DBOS.setEvent", "DBOS.recv", "DBOS.sleep", "DBOS.setEvent",
                                                  "zigai.model_request#2"]),
}
# model turns that ran to completion per route (the crash point blocks the last one in the
# first process, so it runs once, in the second)
TURNS = {"on_demand": 3, "output": 1, "output_type": 1}


@pytest.fixture(scope="session")
def pg_cluster():
    cluster, why = start_cluster()
    if cluster is None:
        pytest.skip(f"PostgreSQL tests need a server: {why}")
    yield cluster
    cluster.stop()


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{SUPPORT}"}


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, *args], env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _executed(directory: Path) -> Counter[str]:
    with sqlite3.connect(directory / "counts.sqlite") as db:
        return Counter(row[0] for row in db.execute("SELECT what FROM executed"))


def _wait_for(child: subprocess.Popen[str], ready) -> None:
    deadline = time.monotonic() + CEILING_S
    while not ready():
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            out, err = child.communicate()
            pytest.fail(f"worker never got ready (exit {child.returncode}):\n{out}\n{err[-3000:]}")
        time.sleep(0.05)


def _kill(child: subprocess.Popen[str]) -> None:
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL


# -- every tool route is a step -------------------------------------------------------------------


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def crashed_routes(request, tmp_path_factory):
    """Every route's workflow run in one worker, SIGKILLed at its crash points, then recovered."""
    directory = tmp_path_factory.mktemp(f"routes-{request.param}")
    if request.param == "sqlite":
        url = f"sqlite:///{directory / 'dbos.sqlite'}"
    else:
        url = request.getfixturevalue("pg_cluster").url("zigai_routes")
    worker = str(SUPPORT / "durable_routes_worker.py")
    first = _spawn(worker, str(directory), url, "first")
    _wait_for(first, lambda: all((directory / f"ready-{route}").exists() for route in [*ROUTES, "inflight"]))
    _kill(first)
    before = _executed(directory)
    second = _spawn(worker, str(directory), url, "second")
    out, err = second.communicate(timeout=CEILING_S)
    assert second.returncode == 0, err[-3000:]
    return before, _executed(directory), json.loads(out.strip().splitlines()[-1]), url


@pytest.mark.parametrize("route", list(ROUTES))
def test_no_completed_call_of_any_tool_route_runs_twice_after_sigkill(crashed_routes, route: str) -> None:
    before, after, report, _ = crashed_routes
    output, steps = ROUTES[route]
    tools = {k: v for k, v in after.items() if k.startswith(f"tool:{route}:")}
    # the route's tool ran before the kill, exactly once, and never again in the recovering process
    assert sum(v for k, v in before.items() if k.startswith(f"tool:{route}:")) == 1
    assert list(tools.values()) == [1], tools
    if route != "mcp":  # the MCP server runs the call on its own thread; the rest see their step id
        ordinal = next(s.split("#")[1].split(":")[0] for s in steps if "_call#" in s or "_function#" in s)
        assert list(tools) == [f"tool:{route}:route-{route}/{ordinal}"]
    turns = TURNS.get(route, 2)
    assert {k: v for k, v in after.items() if k.startswith(f"model:{route}:")} == {
        f"model:{route}:{turn}": 1 for turn in range(turns)
    }
    assert report[route] == {"output": output, "steps": steps}


def test_a_call_killed_while_it_runs_runs_again_under_the_same_step_id(crashed_routes) -> None:
    before, after, report, _ = crashed_routes
    # not completed, so not recorded: it runs again, and its idempotency key is the same
    assert before["tool:inflight:route-inflight/1"] == 1
    assert after["tool:inflight:route-inflight/1"] == 2
    assert after["model:inflight:0"] == after["model:inflight:1"] == 1
    assert report["inflight"]["output"] == "inflight: inflight charged 10"


def test_operations_list_inspect_and_read_the_recovered_runs(crashed_routes) -> None:
    _, _, _, url = crashed_routes
    with DurableRuns(url) as runs:
        listed = runs.list()
        assert {r.workflow_id for r in listed} == {f"route-{r}" for r in [*ROUTES, "inflight"]}
        assert {r.status for r in listed} == {"SUCCESS"}
        assert [r.agent for r in runs.list(agent="routes-mcp")] == ["routes-mcp"]
        assert runs.list(status="ERROR") == ()
        details = runs.inspect("route-direct")
        assert [(s.number, s.name, s.outcome) for s in details.steps] == [
            (1, "zigai.model_request#0", "ok"), (2, "zigai.tool_call#1:charge", "ok"),
            (3, "zigai.model_request#2", "ok"),
        ]
        assert details.error is None and details.summary.agent == "routes-direct"
        with runs.result("route-output", timeout_s=5) as result:
            assert result.output == {"total": 42}
        with pytest.raises(DurableRunNotFound):
            runs.inspect("no-such-run")


def test_a_streamed_run_recovered_after_sigkill_repeats_only_the_interrupted_steps_start(crashed_routes) -> None:
    _, _, _, url = crashed_routes
    with DurableRuns(url) as runs:
        records = list(runs.events("route-streamed", timeout_s=10))
        assert list(runs.events("route-streamed", offset=len(records) - 1, timeout_s=10)) == records[-1:]
    call = {"tool": "charge", "tool_call_id": "streamed-0"}
    assert records == [
        {"kind": "model_request", "step": 0},
        {"kind": "model_response", "step": 0, "text": "", "tool_calls": [{**call, "args": '{"n": 9}'}]},
        {"kind": "tool_call", "step": 1, **call, "args": {"n": 9}},
        {"kind": "tool_result", "step": 1, **call, "content": "streamed charged 9"},
        # the request the kill interrupted started in the first process and ran again in the second
        {"kind": "model_request", "step": 2},
        {"kind": "model_request", "step": 2},
        {"kind": "text_delta", "step": 2, "index": 0, "text": "streamed: stre"},
        {"kind": "text_delta", "step": 2, "index": 0, "text": "amed charged 9"},
        {"kind": "model_response", "step": 2, "text": "streamed: streamed charged 9", "tool_calls": []},
        {"kind": "final", "output": "streamed: streamed charged 9"},
    ]


# -- two workers on PostgreSQL ---------------------------------------------------------------------


def test_two_queue_workers_on_postgresql_recover_a_killed_run_exactly_once(pg_cluster: Cluster, tmp_path: Path) -> None:
    url = pg_cluster.url("zigai_queue")
    worker = str(SUPPORT / "durable_queue_worker.py")
    workers = {name: _spawn(worker, str(tmp_path), url, name) for name in ("worker-a", "worker-b")}
    try:
        for name, child in workers.items():
            _wait_for(child, lambda name=name: (tmp_path / f"started-{name}").exists())
        with DurableRuns(url) as runs:  # this process runs no agents: it only enqueues
            assert runs.enqueue("queued", "count twice", workflow_id="pg-run", queue="zigai-runs") == "pg-run"
            ready = lambda: any((tmp_path / f"ready-{n}").exists() for n in workers)  # noqa: E731
            _wait_for(workers["worker-a"], ready)
            victim = next(n for n in workers if (tmp_path / f"ready-{n}").exists())
            pending = runs.inspect("pg-run")
            assert pending.summary.status == "PENDING" and pending.summary.executor_id == victim
            assert [s.outcome for s in pending.steps] == ["ok", "ok", "ok", "ok"]
            _kill(workers[victim])
            assert _executed(tmp_path) == Counter({"model:0": 1, "tool:A:pg-run/1": 1, "model:1": 1,
                                                   "tool:B:pg-run/3": 1})
            # DBOS's documented recovery: the executor restarts under its id and re-enqueues its work
            workers[victim] = _spawn(worker, str(tmp_path), url, victim)
            # a third process reads the result by workflow id through the CLI
            reader = subprocess.run(
                [sys.executable, "-m", "zigai", "durable", "show", "pg-run", "--db", url, "--wait", str(CEILING_S),
                 "--json"], env=_env(), capture_output=True, text=True, timeout=CEILING_S + 30,
            )
            assert reader.returncode == 0, reader.stderr
            shown = json.loads(reader.stdout)
            assert shown["output"] == "done after A,B" and shown["status"] == "SUCCESS"
            assert [s["name"] for s in shown["steps"]] == [
                "zigai.model_request#0", "zigai.tool_call#1:tally", "zigai.model_request#2",
                "zigai.tool_call#3:tally", "zigai.model_request#4",
            ]
            assert _executed(tmp_path) == Counter({"model:0": 1, "tool:A:pg-run/1": 1, "model:1": 1,
                                                   "tool:B:pg-run/3": 1, "model:2": 1})
            with pytest.raises(DurableRunWaitTimedOut):
                runs.enqueue("queued", "never served", workflow_id="pg-unserved", queue="nobody-serves-this")
                runs.result("pg-unserved", timeout_s=0.2)
    finally:
        (tmp_path / "stop").touch()
        for child in workers.values():
            try:
                child.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                child.communicate()


def test_the_docs_multi_worker_example_runs_on_postgresql(pg_cluster: Cluster, tmp_path: Path) -> None:
    page = (REPO / "docs" / "durable.md").read_text(encoding="utf-8")
    section = page[page.index("## PostgreSQL and several workers"):]
    block = section[section.index("```python\n") + len("```python\n"):section.index("\n```\n")]
    assert "ZIGAI_DBOS_URL" in block
    done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True,
                          timeout=CEILING_S, env={**_env(), "ZIGAI_DBOS_URL": pg_cluster.url("zigai_docs")})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "invoiced 9"
    with DurableRuns(pg_cluster.url("zigai_docs")) as runs:
        assert runs.inspect("invoice-9").summary.executor_id == "worker-1"
