#!/usr/bin/env bash
# The official Python MCP client (PyPI `mcp`) in a venv under target/, for the tests
# that drive `oq mcp` and `/mcp` with it (tests/mcp_*.rs). Idempotent: an existing venv
# with the pinned version is kept. Prints the venv's python.
# Usage: .ci/mcp-python.sh [TARGET_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
version=2.3.0
venv="${1:-${CARGO_TARGET_DIR:-target}}/mcp-peer/venv"
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$version')" 2>/dev/null; then
  command -v python3 >/dev/null || { echo "mcp-python.sh: python3 not found" >&2; exit 1; }
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    # Debian's python3 ships venv apart.
    apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  fi
  "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$version" >&2
fi
echo "$venv/bin/python"
