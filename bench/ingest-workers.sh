#!/usr/bin/env bash
# Intake end to end with its signatures verified on one thread and on several: `subdesk
# ingest --workers 1` and `--workers N` of the same signed bodies into a fresh SQLite store,
# in turn (alternating which goes first), beside OpenSSL's ceiling on one core taken in the
# same round (`openssl speed ecdsap256` verifies per second / 3, a body carrying three
# ES256 signatures). Prints each run's notifications per second and the medians.
#
#   bench/ingest-workers.sh SUBDESK [ROUNDS] [BODIES] [WORKERS]
#   bench/ingest-workers.sh .build/release/subdesk 5 3000 2
#
# The bodies come from subdesk-bench (beside SUBDESK): distinct subscriptions, three ES256
# signatures each, signed by the test CA in sample-data. WORKERS defaults to the cores.
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
subdesk=$1 rounds=${2:-5} bodies=${3:-3000} workers=${4:-$(nproc)}
[[ "$rounds" =~ ^[0-9]{1,3}$ && "$bodies" =~ ^[0-9]{1,7}$ && "$workers" =~ ^[0-9]{1,2}$ ]] \
    || { echo "ROUNDS, BODIES and WORKERS are numbers" >&2; exit 2; }
[ -x "$subdesk" ] || { echo "not an executable: $subdesk" >&2; exit 2; }
command -v openssl >/dev/null || { echo "openssl is needed for the ceiling" >&2; exit 2; }
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. bench/ingest-rate.sh
ingest_bodies "$subdesk"
ceiling() { # OpenSSL's P-256 verifications per second on one core, over 3
    openssl speed -seconds 2 ecdsap256 2>/dev/null | awk '/nistp256/ { printf "%.0f", $NF / 3 }'
}
declare -a r1=() rn=() rc=()
for round in $(seq 1 "$rounds"); do
    c=$(ceiling)
    if (( round % 2 )); then one=$(rate "$subdesk" --workers 1); many=$(rate "$subdesk" --workers "$workers"); else many=$(rate "$subdesk" --workers "$workers"); one=$(rate "$subdesk" --workers 1); fi
    r1+=("$one"); rn+=("$many"); rc+=("$c")
    echo "round $round: --workers 1 $one/s, --workers $workers $many/s, one core's ceiling $c/s ($(awk -v a="$many" -v c="$c" 'BEGIN { printf "%.2f", a / c }')x)"
done
m1=$(median "${r1[@]}") mn=$(median "${rn[@]}") mc=$(median "${rc[@]}")
echo "median: --workers 1 $m1/s, --workers $workers $mn/s ($(awk -v a="$mn" -v b="$m1" 'BEGIN { printf "%+.0f%%", (a / b - 1) * 100 }')), ceiling $mc/s: $(awk -v a="$mn" -v c="$mc" 'BEGIN { printf "%.2f", a / c }')x one core's"
