#!/usr/bin/env bash
# The official Python MCP client (PyPI `mcp`) in a venv under target/, for the tests
# that drive `oq mcp` and `/mcp` with it (tests/mcp_*.rs). Idempotent: an existing venv
# with the pinned version is kept. Prints the venv's python.
# Usage: .ci/mcp-python.sh [TARGET_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(bash .ci/pip-venv.sh mcp 2.3.0 "${1:-${CARGO_TARGET_DIR:-target}}/mcp-peer/venv")
echo "$venv/bin/python"
