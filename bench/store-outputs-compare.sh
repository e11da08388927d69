#!/usr/bin/env bash
# Holds two builds of subdesk to the same answers: a demo store built by each (from
# sample-data, through intake; its dates follow the clock, so the two differ) and a generated
# store are each read by both builds' commands, `--json`; every output of BEFORE must equal
# AFTER's byte for byte, but for what the read's clock says (`"asOf"`, `"secondsLeft"`).
# For a change that should change nothing a user reads (the Store's redesign).
#
#   bench/store-outputs-compare.sh BEFORE_SUBDESK AFTER_SUBDESK [SUBSCRIBERS]
#   bench/store-outputs-compare.sh BEFORE/subdesk .build/release/subdesk 10000
#
# Prints one line per output ("same" or "DIFFERENT", with the diff's first lines), and exits
# 1 when any differs.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
before=$1 after=$2 subscribers=${3:-10000}
[[ "$subscribers" =~ ^[0-9]{1,8}$ ]] || { echo "SUBSCRIBERS is a number, not '$subscribers'" >&2; exit 2; }
for b in "$before" "$after"; do [ -x "$b" ] || { echo "not an executable: $b" >&2; exit 2; }; done
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME=$work XDG_DATA_HOME=$work/data XDG_CONFIG_HOME=$work/config TZ=UTC

# The stores: a demo store built by each side (its intake path), and one generated store
# (written by AFTER directly through the store); both sides read all three.
"$before" demo --db "$work/demo-before.db" --no-dashboard --sample-data sample-data >/dev/null
"$after" demo --db "$work/demo-after.db" --no-dashboard --sample-data sample-data >/dev/null
"$after" generate --subscribers "$subscribers" --db "$work/generated.db" >/dev/null
# An audited operation in each demo store (a purge of nothing: every entry is newer).
for side in before after; do
    "$after" --db "$work/demo-$side.db" quarantine purge --before 2001-01-01 --reason "compare" --operator bench >/dev/null
done

reads=(
    "notifications --limit 100000"
    "quarantine"
    "audit"
    "counts"
    "cohorts"
    "gaps"
    "refunds"
    "forward status"
)
different=0
compare() { # NAME FILE_BEFORE FILE_AFTER
    # What the read's own clock says may differ: when it ran ("asOf"), and a refund
    # request's time left to answer counted from then ("secondsLeft", which crosses a
    # second between the two reads now and then).
    sed -i -e '/^  "asOf" : /d' -e '/^ *"secondsLeft" : /d' "$2" "$3"
    if cmp -s "$2" "$3"; then
        echo "same       $1 ($(wc -c <"$2") bytes)"
    else
        echo "DIFFERENT  $1"
        diff "$2" "$3" | head -5 | sed 's/^/    /' || true
        different=1
    fi
}
for read in "${reads[@]}"; do
    name=${read// /-}
    for store in demo-before demo-after generated; do
        # shellcheck disable=SC2086
        "$before" --db "$work/$store.db" --json $read >"$work/$name.$store.before" 2>&1 || true
        # shellcheck disable=SC2086
        "$after" --db "$work/$store.db" --json $read >"$work/$name.$store.after" 2>&1 || true
        compare "$read, $store store read by each" "$work/$name.$store.before" "$work/$name.$store.after"
    done
done
exit "$different"
