#!/usr/bin/env bash
# Builds the venv of the older MCP peers: the `mcp` 1.x SDK (pinned 1.30.0), which speaks the
# 2025-06-18 / 2025-11-25 revisions and cannot share the dev venv with `mcp` 2.x.  The venv lives
# in the git-ignored .mcp-peers/venv (override with MCP_PEERS_DIR); the interop tests in
# tests/test_mcp_interop_legacy.py find it there (or through ZIGAI_MCP_PEERS_PYTHON) and skip,
# saying to run this script, when it is absent.  Reruns are cheap: a stamp file records the pin.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${MCP_PEERS_DIR:-$ROOT/.mcp-peers}"
PYTHON="${PYTHON:-python3}"
PIN="mcp==1.30.0"
STAMP="$DIR/.installed-$PIN"
if [ -f "$STAMP" ] && [ -x "$DIR/venv/bin/python" ]; then
  exit 0
fi
mkdir -p "$DIR"
"$PYTHON" -m venv "$DIR/venv"
"$DIR/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$PIN"
touch "$STAMP"
echo "mcp_peers.sh: $PIN installed in $DIR/venv" >&2
