#!/usr/bin/env bash
# One pinned PyPI package in a venv of its own, for the tests that drive a Python peer
# (.ci/mcp-python.sh, .ci/schemathesis.sh). Idempotent: an existing venv with the pinned
# version is kept. Prints the venv's directory.
# Usage: .ci/pip-venv.sh PACKAGE VERSION VENV
set -euo pipefail
package=$1 version=$2 venv=$3
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('$package') != '$version')" 2>/dev/null; then
  command -v python3 >/dev/null || { echo "pip-venv.sh: python3 not found" >&2; exit 1; }
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    # Debian's python3 ships venv apart.
    apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  fi
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$package==$version" >&2
fi
echo "$venv"
