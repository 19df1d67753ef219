#!/usr/bin/env bash
# Installs the official JavaScript peers of the UI adapter tests (@ag-ui/client, ai) into the
# git-ignored tests/node/node_modules, exactly as pinned by tests/node/package-lock.json, the
# Mermaid parser of the graph renderer tests into tests/node_mermaid/node_modules, and the npm
# reference MCP server (@modelcontextprotocol/server-everything) into tests/node_mcp/node_modules.
# Run it once after cloning (CI's .ci/run does); the Node interop tests skip without Node.
set -euo pipefail
cd "$(dirname "$0")/../tests/node"
if ! command -v npm >/dev/null 2>&1; then
  echo "node_peers.sh: npm is not installed; the Node interop tests will be skipped" >&2
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
(cd ../node_mermaid && npm ci --no-audit --no-fund --loglevel=error)
(cd ../node_mcp && npm ci --no-audit --no-fund --loglevel=error)
