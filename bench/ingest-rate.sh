# Sourced by the ingest benchmarks (ingest-alternate.sh, ingest-workers.sh): the signed bodies
# they take in and one timed `subdesk ingest`. The caller sets `work` (a scratch folder) and
# `bodies` (how many) and runs from the repository's root.

# ingest_bodies SUBDESK: BODIES signed bodies of distinct subscriptions into $work/bodies, from
# the subdesk-bench beside SUBDESK (three ES256 signatures each, the test CA in sample-data).
ingest_bodies() {
    "$(dirname "$1")/subdesk-bench" --bodies "$bodies" --write-bodies "$work/bodies" --only baseline >/dev/null
}

# rate SUBDESK [ARG...]: notifications per second of one `ingest` of $work/bodies into a new
# SQLite store, ARG given to ingest.
rate() {
    local binary=$1 start end
    shift
    rm -f "$work/store.db"*
    start=$(date +%s.%N)
    "$binary" ingest --db "$work/store.db" --quiet "$@" --root-ca sample-data/test-ca/root.der \
        --bundle-id com.example.subdesk.demo --app-apple-id 1234567890 "$work/bodies" >/dev/null
    end=$(date +%s.%N)
    awk -v n="$bodies" -v s="$start" -v e="$end" 'BEGIN { printf "%.0f", n / (e - s) }'
}

# median VALUE...: the middle value, or the mean of the two middle ones.
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
