#!/usr/bin/env bash
# schemathesis (PyPI) in a venv under target/, for tests/schemathesis.rs: property-based
# requests generated from `oq serve`'s /openapi.json. Idempotent: an existing venv with
# the pinned version is kept. Prints the venv's `st`.
# Usage: .ci/schemathesis.sh [TARGET_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(bash .ci/pip-venv.sh schemathesis 4.32.5 "${1:-${CARGO_TARGET_DIR:-target}}/schemathesis/venv")
echo "$venv/bin/st"
