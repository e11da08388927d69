#!/usr/bin/env bash
# Alternates the relay bench between two builds, round by round, so that both see the same
# host: BEFORE is a folder holding the earlier build's subdesk, subdesk-http and
# subdesk-bench (copied from its .build/release), the later build is this checkout's.
#
#   bench/relay-alternate.sh BEFORE PARTS ROUNDS TARGET [more subdesk-bench options]
#   bench/relay-alternate.sh BEFORE cost 5 http://127.0.0.1:8089
#
# Prints each round's figures (the bench's own lines) under "## round N before|after".
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
before=$1 parts=$2 rounds=$3 target=$4
shift 4
[[ "$rounds" =~ ^[0-9]{1,3}$ ]] || { echo "ROUNDS is a number, not '$rounds'" >&2; exit 2; }
cd "$(dirname "$0")/.."
for side in before after; do mkdir -p ".build/bench-alternate/$side"; done
for round in $(seq 1 "$rounds"); do
    for side in before after; do
        if [ "$side" = before ]; then bench=$before/subdesk-bench; else bench=.build/release/subdesk-bench; fi
        echo "## round $round $side ($(cut -d' ' -f1-3 /proc/loadavg))"
        SUBDESK_SAMPLE_DATA=$PWD/sample-data "$bench" --data ".build/bench-alternate/$side" --only relay \
            --relay-parts "$parts" --relay-target "$target" "$@" 2>&1 | grep -E '^  '
    done
done
