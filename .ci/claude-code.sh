#!/usr/bin/env bash
# Claude Code from npm (`@anthropic-ai/claude-code`, the version the peer notes checked)
# under target/, for the tests that drive a real Claude Code against a scripted model
# (tests/claude_*.rs). Idempotent: an install of the pinned version is kept. npm's cache
# stays under target/ too. Prints the `claude` binary.
# Usage: .ci/claude-code.sh [TARGET_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
version=2.1.328
root="${1:-${CARGO_TARGET_DIR:-target}}/claude-code-peer"
bin="$root/npm/node_modules/.bin/claude"
if [ "$("$bin" --version 2>/dev/null | cut -d' ' -f1)" != "$version" ]; then
  command -v npm >/dev/null || { echo "claude-code.sh: npm not found" >&2; exit 1; }
  # A fresh directory renamed into place: two test binaries installing at once never
  # see half an install.
  tmp="$root/npm-tmp-$$"
  rm -rf "$tmp" && mkdir -p "$tmp"
  echo '{"private": true}' >"$tmp/package.json"
  npm install --prefix "$tmp" --cache "$root/npm-cache" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$version" >&2
  rm -rf "$root/npm" && mv "$tmp" "$root/npm"
fi
echo "$(cd "$(dirname "$bin")" && pwd)/claude"
