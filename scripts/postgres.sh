#!/usr/bin/env bash
# Installs Debian's PostgreSQL server binaries for the durable-execution tests, which start a
# throwaway cluster of their own (initdb in a temp dir, a free loopback port, stopped at the
# end of the session; tests/support/pg_cluster.py).  No cluster is created or started here.
# Run it once after cloning (CI's .ci/run does); without a server those tests skip, saying why.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "postgres.sh: no apt-get; install PostgreSQL yourself or the PostgreSQL tests will skip" >&2
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "postgres.sh: not root and no sudo; the PostgreSQL tests will skip" >&2
    exit 0
  fi
  sudo="sudo"
fi
# the package's post-install creates and starts a default cluster; the tests never use it
$sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends postgresql
