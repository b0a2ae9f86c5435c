#!/usr/bin/env bash
# The suite leaves no process behind (issue 11): after the tests, nothing may still run
# from this clone's target/ (the built oq, a test binary, the npm-installed opencode or
# claude), nor an orphaned PostgreSQL of a test (a cluster in a temporary directory whose
# test is gone: its parent is init). Waits a little for supervisors that stop their
# child once our pipes close, then lists the survivors, kills their process groups and
# fails. Another checkout's running tests are not ours and are left alone.
# Usage: .ci/leftovers.sh [ROOT]
set -uo pipefail
root=$(cd "${1:-$(dirname "$0")/..}" && pwd -P)
tmp=$(cd "${TMPDIR:-/tmp}" && pwd -P)

survivors() {
    local p pid exe cmd ppid
    for p in /proc/[0-9]*; do
        pid=${p#/proc/}
        [ "$pid" = "$$" ] && continue
        exe=$(readlink "$p/exe" 2>/dev/null) || continue
        cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
        case "$exe" in
        "$root"/target/*) ;;
        */postgres)
            [[ "$cmd" == *" -D $tmp/"* ]] || continue
            ppid=$(awk '{print $4}' "$p/stat" 2>/dev/null)
            [ "$ppid" = 1 ] || continue
            ;;
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
own_pgid=$(ps -o pgid= -p $$ | tr -d ' ')
while read -r pid _; do
    pgid=$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ')
    [ -n "$pgid" ] && [ "$pgid" != "$own_pgid" ] && kill -KILL -- "-$pgid" 2>/dev/null
    kill -KILL "$pid" 2>/dev/null
done <<<"$left"
exit 1
