#!/usr/bin/env bash
# Times subdesk builds that differ only in how they are linked, on what linking changes:
# a process's start. For each binary given (NAME=PATH): one notification through
# `subdesk ingest --cgi` (process start to answer), `subdesk ingest` of a batch of signed
# bodies (bodies per second), and the dashboard's launch to its first full frame on a demo
# store (a 120x40 tmux window). Medians of RUNS (default 30; 5 for the batch and the
# dashboard); the CGI figure also gives the CPU time the process used.
#
#   swift build -c release --product subdesk                       # dynamic
#   deploy/package.sh                                              # -static-stdlib
#   deploy/build.sh                                                # fully static
#   bench/link-modes.sh dynamic=.build/release/subdesk \
#       static-stdlib=.build/package-build/release/subdesk static=.build/deploy/subdesk
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"; tmux -L link-modes kill-server 2>/dev/null || true' EXIT
root=sample-data/test-ca/root.der
bench=.build/debug/subdesk-bench
[ -x "$bench" ] || swift build --product subdesk-bench
"$bench" --bodies 2000 --write-bodies "$work/bodies.ndjson" > /dev/null 2>&1
head -n 1 "$work/bodies.ndjson" | tr -d '\n' > "$work/body.json"
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now() { date +%s%N; }
intake=(--root-ca "$root" --bundle-id com.example.subdesk.demo --app-apple-id 1234567890)

printf '%-16s %20s %18s %20s\n' build "CGI ms (wall / CPU)" "ingest bodies/s" "first frame ms"
for pair in "$@"; do
    name=${pair%%=*}
    binary=$(realpath "${pair#*=}")
    # One notification through CGI: wall-clock, and the CPU time (user + system) the process
    # used, which a busy host disturbs less.
    "$binary" init --db "$work/cgi.db" > /dev/null 2>&1
    python3 - "$binary" "$work" "$runs" "${intake[@]}" > "$work/cgi" <<'PY'
import os, resource, statistics, subprocess, sys, time
binary, work, runs, intake = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
body = open(work + "/body.json", "rb").read()
env = dict(os.environ, REQUEST_METHOD="POST", CONTENT_LENGTH=str(len(body)))
wall, cpu = [], []
for _ in range(runs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    answer = subprocess.run([binary, "ingest", "--cgi", "--db", work + "/cgi.db"] + intake, input=body, env=env,
                            capture_output=True).stdout
    wall.append((time.perf_counter() - start) * 1000)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    if not answer.startswith(b"Status: 200"):
        sys.exit("CGI did not answer 200: " + answer.decode(errors="replace")[:200])
print("%.1f / %.1f" % (statistics.median(wall), statistics.median(cpu)))
PY
    # A batch of signed bodies into a fresh store.
    for _ in $(seq 5); do
        rm -f "$work"/batch.db*
        "$binary" init --db "$work/batch.db" > /dev/null 2>&1
        start=$(now)
        "$binary" ingest --quiet --db "$work/batch.db" "${intake[@]}" "$work/bodies.ndjson" > /dev/null
        echo $(( 2000 * 1000000000 / ($(now) - start) ))
    done | median > "$work/ingest"
    # The dashboard on a demo store, launch to first full frame.
    "$binary" demo --no-dashboard --db "$work/demo.db" --sample-data sample-data > /dev/null 2>&1
    for _ in $(seq 5); do
        rm -f "$work/frame"
        start=$(( $(now) / 1000000 ))
        tmux -L link-modes new-session -d -x 120 -y 40 \
            "env SUBDESK_FIRST_FRAME_FILE='$work/frame' TERM=xterm-256color '$binary' dashboard --db '$work/demo.db'"
        for _ in $(seq 2000); do [ -s "$work/frame" ] && break; sleep 0.005; done
        tmux -L link-modes kill-server 2>/dev/null || true
        echo $(( $(cut -d' ' -f1 "$work/frame" | cut -d. -f1) - start ))
    done | median > "$work/frame-ms"
    printf '%-16s %20s %18s %20s\n' "$name" "$(cat "$work/cgi")" "$(cat "$work/ingest")" "$(cat "$work/frame-ms")"
done
