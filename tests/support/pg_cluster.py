"""A throwaway PostgreSQL cluster for tests: initdb in a temp dir, a free loopback port, stopped after.

Debian's ``postgresql`` package (``.ci/run`` installs it) puts the server binaries under
``/usr/lib/postgresql/<major>/bin``.  PostgreSQL refuses to run as root, so as root the
cluster directory is given to the ``postgres`` system user and every server command runs
through ``runuser -u postgres``.  Trust authentication on loopback only; fsync off (the data
are thrown away).  :func:`start_cluster` returns None with a reason when no server can be
started, so tests skip saying exactly why.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass

__all__ = ["Cluster", "start_cluster"]


@dataclass
class Cluster:
    directory: str
    port: int
    bin_dir: str
    run_as: list[str]

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        subprocess.run([*self.run_as, os.path.join(self.bin_dir, "pg_ctl"), "-D", self.data, "-m", "immediate",
                        "-w", "stop"], capture_output=True, timeout=60, check=False)
        shutil.rmtree(self.directory, ignore_errors=True)

    @property
    def data(self) -> str:
        return os.path.join(self.directory, "data")


def _bin_dir() -> str | None:
    found = shutil.which("initdb")
    if found and os.path.exists(os.path.join(os.path.dirname(os.path.realpath(found)), "pg_ctl")):
        return os.path.dirname(os.path.realpath(found))
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    return os.path.dirname(candidates[0]) if candidates else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_cluster() -> tuple[Cluster | None, str]:
    """A running cluster, or (None, why not)."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        return None, "no PostgreSQL server binaries (apt-get install postgresql; .ci/run does)"
    directory = tempfile.mkdtemp(prefix="zigai-pg-")
    run_as: list[str] = []
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(directory, ignore_errors=True)
            return None, "running as root and there is no 'postgres' user to run the server as"
        os.chown(directory, user.pw_uid, user.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    cluster = Cluster(directory, _free_port(), bin_dir, run_as)
    init = subprocess.run([*run_as, os.path.join(bin_dir, "initdb"), "-D", cluster.data, "-A", "trust",
                           "-U", "postgres", "--no-sync", "-E", "UTF8"], capture_output=True, text=True,
                          timeout=120, check=False)
    if init.returncode != 0:
        shutil.rmtree(directory, ignore_errors=True)
        return None, f"initdb failed: {init.stderr.strip()[-500:]}"
    options = f"-h 127.0.0.1 -p {cluster.port} -k {directory} -F -c max_connections=200"
    start = subprocess.run([*run_as, os.path.join(bin_dir, "pg_ctl"), "-D", cluster.data, "-o", options,
                            "-l", os.path.join(directory, "server.log"), "-w", "-t", "120", "start"],
                           capture_output=True, text=True, timeout=180, check=False)
    if start.returncode != 0:
        log = ""
        try:
            with open(os.path.join(directory, "server.log")) as handle:
                log = handle.read()[-500:]
        except OSError:
            pass
        cluster.stop()
        return None, f"the PostgreSQL server did not start: {start.stderr.strip()[-300:]} {log}"
    return cluster, ""
