#!/usr/bin/env bash
# Intake end to end into PostgreSQL, two builds in turn: `subdesk ingest` of the same signed
# bodies into a new database each run (made with `subdesk init`, not timed), with `--workers
# 1` and `--workers N`, alternating which build goes first. Prints each run's notifications
# per second and the medians.
#
#   bench/ingest-postgres.sh SERVER_URI BEFORE_SUBDESK AFTER_SUBDESK [ROUNDS] [BODIES] [WORKERS]
#   d=$(PG_FSYNC=on scripts/pg-cluster start)
#   bench/ingest-postgres.sh "postgresql://postgres@/postgres?host=$d" OLD/subdesk .build/release/subdesk 5 3000 2
#
# SERVER_URI names a database the benchmark connects to to create and drop its own
# (`subdesk_bench_N`); the bodies come from AFTER's subdesk-bench (beside it).
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
server=$1 before=$2 after=$3 rounds=${4:-5} bodies=${5:-3000} workers=${6:-$(nproc)}
[[ "$rounds" =~ ^[0-9]{1,3}$ && "$bodies" =~ ^[0-9]{1,7}$ && "$workers" =~ ^[0-9]{1,2}$ ]] \
    || { echo "ROUNDS, BODIES and WORKERS are numbers" >&2; exit 2; }
for b in "$before" "$after"; do [ -x "$b" ] || { echo "not an executable: $b" >&2; exit 2; }; done
command -v psql >/dev/null || { echo "psql is needed (apt-get install postgresql-client)" >&2; exit 2; }
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'psql -q "$server" -c "DROP DATABASE IF EXISTS subdesk_bench_run" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
. bench/ingest-rate.sh
ingest_bodies "$after"
# The same server, another database: the URI's path names it.
uri=$(echo "$server" | sed 's|@/[^?]*|@/subdesk_bench_run|')

rate_pg() { # rate_pg SUBDESK WORKERS: notifications per second into a new database
    local binary=$1 start end
    psql -q "$server" -c "DROP DATABASE IF EXISTS subdesk_bench_run" -c "CREATE DATABASE subdesk_bench_run" >/dev/null
    "$binary" init --db "$uri" >/dev/null 2>&1
    start=$(date +%s.%N)
    "$binary" ingest --db "$uri" --quiet --workers "$2" --root-ca sample-data/test-ca/root.der \
        --bundle-id com.example.subdesk.demo --app-apple-id 1234567890 "$work/bodies" >/dev/null
    end=$(date +%s.%N)
    awk -v n="$bodies" -v s="$start" -v e="$end" 'BEGIN { printf "%.0f", n / (e - s) }'
}

declare -a b1=() bn=() a1=() an=()
for round in $(seq 1 "$rounds"); do
    if (( round % 2 )); then order="before after"; else order="after before"; fi
    for which in $order; do
        binary=$before; [ "$which" = after ] && binary=$after
        one=$(rate_pg "$binary" 1); many=$(rate_pg "$binary" "$workers")
        if [ "$which" = before ]; then b1+=("$one"); bn+=("$many"); else a1+=("$one"); an+=("$many"); fi
        echo "round $round $which: --workers 1 $one/s, --workers $workers $many/s"
    done
done
echo "median before: --workers 1 $(median "${b1[@]}")/s, --workers $workers $(median "${bn[@]}")/s"
echo "median after: --workers 1 $(median "${a1[@]}")/s, --workers $workers $(median "${an[@]}")/s"
