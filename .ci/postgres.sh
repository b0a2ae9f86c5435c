#!/usr/bin/env bash
# Installs Debian's PostgreSQL server (initdb, postgres, pgbench) when it is missing. The
# tests start their own clusters (initdb in a temporary directory, a port of their own),
# so nothing is configured or started here, and Debian's own cluster is not needed.
set -euo pipefail
# Both the server (initdb) and pgbench, the server benchmark's ceiling: Debian ships
# pgbench in postgresql-NN, other distributions in postgresql-contrib.
has() {
    command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/$1" ] && return 0
    ls /usr/lib/postgresql/*/bin/"$1" >/dev/null 2>&1
}
found() {
    has initdb && has pgbench
}
if found; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo ".ci/postgres.sh: PostgreSQL is missing and only root can install it (apt-get install postgresql)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends postgresql >/dev/null
has pgbench || apt-get install -y -qq --no-install-recommends postgresql-contrib >/dev/null
found
