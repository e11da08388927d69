#!/usr/bin/env bash
# Intake end to end, two builds in turn: `subdesk ingest` of the same signed bodies into a
# fresh SQLite store, each build once per round, alternating which goes first; prints each
# run's notifications per second and each build's median.
#
#   bench/ingest-alternate.sh BEFORE_SUBDESK AFTER_SUBDESK [ROUNDS] [BODIES]
#   bench/ingest-alternate.sh BEFORE/subdesk .build/release/subdesk 5 3000
#
# The bodies come from AFTER's subdesk-bench (beside it): distinct subscriptions, three
# ES256 signatures each, signed by the test CA in sample-data.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
before=$1 after=$2 rounds=${3:-5} bodies=${4:-3000}
[[ "$rounds" =~ ^[0-9]{1,3}$ && "$bodies" =~ ^[0-9]{1,7}$ ]] || { echo "ROUNDS and BODIES are numbers" >&2; exit 2; }
for b in "$before" "$after"; do [ -x "$b" ] || { echo "not an executable: $b" >&2; exit 2; }; done
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. bench/ingest-rate.sh
ingest_bodies "$after"
declare -a rb=() ra=()
for round in $(seq 1 "$rounds"); do
    if (( round % 2 )); then b=$(rate "$before"); a=$(rate "$after"); else a=$(rate "$after"); b=$(rate "$before"); fi
    rb+=("$b"); ra+=("$a")
    echo "round $round: before $b/s, after $a/s"
done
echo "median: before $(median "${rb[@]}")/s, after $(median "${ra[@]}")/s"
