#!/usr/bin/env bash
# The suite leaves no process behind (issue 11): after the tests, nothing may still run
# from this clone's target/ (the built oq, a test binary, the npm-installed opencode),
# nor a test's PostgreSQL (a cluster in a temporary directory). Waits a little for
# supervisors that stop their child once our pipes close, then lists the survivors,
# kills them (their process groups) and fails. Usage: .ci/leftovers.sh [ROOT]
set -uo pipefail
root=$(cd "${1:-$(dirname "$0")/..}" && pwd -P)
tmp=$(cd "${TMPDIR:-/tmp}" && pwd -P)

survivors() {
    local p pid exe cmd
    for p in /proc/[0-9]*; do
        pid=${p#/proc/}
        [ "$pid" = "$$" ] && continue
        exe=$(readlink "$p/exe" 2>/dev/null) || continue
        cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
        case "$exe" in
        "$root"/target/*) ;;
        */postgres) [[ "$cmd" == *" -D $tmp/"* ]] || continue ;;
        *) continue ;;
        esac
        echo "$pid $cmd"
    done
}

left=""
for _ in $(seq 1 40); do
    left=$(survivors)
    [ -z "$left" ] && exit 0
    sleep 0.25
done
echo ".ci/leftovers.sh: the suite left these processes running:" >&2
echo "$left" >&2
while read -r pid _; do
    pgid=$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ')
    [ -n "$pgid" ] && [ "$pgid" != "$(ps -o pgid= -p $$ | tr -d ' ')" ] && kill -KILL -- "-$pgid" 2>/dev/null
    kill -KILL "$pid" 2>/dev/null
done <<<"$left"
exit 1
