#!/usr/bin/env bash
# serve's group commit, two builds side by side: the CPU its committing thread
# (`subdesk-commit`) spends per request while 16 clients post at once and with one client
# (a group of one each), and requests/s with one client and with 16, each build in turn (alternating which goes first), behind one lighttpd
# (the webhook's lines of deploy/lighttpd-serve.conf), on a new SQLite store each run. Also prints this host's fsync
# time, which the 16-client / sequential ratio depends on as much as on the code.
#
#   bench/serve-committer.sh OLD_SUBDESK NEW_SUBDESK [ROUNDS] [BODIES]
#   bench/serve-committer.sh OLD/.build/release/subdesk .build/release/subdesk 5 3000
#
# The committer's CPU is sampled by perf (997 Hz, while the clients post): the samples of
# the thread that runs GroupCommitter's loop, over the requests serve's stop line reports. The
# bodies come from the subdesk-bench beside NEW_SUBDESK; the load generator is
# bench/http_load.py (Python's http.client, a kept connection per client). Needs lighttpd and
# perf (Debian's linux-perf).
#
# With SERVE_BENCH_POSTGRES=SERVER_URI the store is a new PostgreSQL database each run
# (`subdesk_bench_serve`, on the server the URI names), and each line also gives the CPU the
# server's backends spent per request: the postmaster's reaped children's CPU time, read
# from /proc before and after, for a cluster of scripts/pg-cluster (DIR/data/postmaster.pid
# beside the URI's host=DIR) that nothing else uses meanwhile (every backend that exits
# counts), e.g.
#   d=$(PG_FSYNC=on scripts/pg-cluster start)
#   SERVE_BENCH_POSTGRES="postgresql://postgres@/postgres?host=$d" bench/serve-committer.sh OLD NEW 5 3000
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,24p' "$0" >&2; exit 2; }
old=$1 new=$2 rounds=${3:-5} bodies=${4:-3000}
[[ "$rounds" =~ ^[0-9]{1,3}$ && "$bodies" =~ ^[0-9]{1,6}$ ]] || { echo "ROUNDS and BODIES are numbers" >&2; exit 2; }
for b in "$old" "$new"; do [ -x "$b" ] || { echo "not an executable: $b" >&2; exit 2; }; done
command -v lighttpd >/dev/null || { echo "lighttpd is needed (apt-get install lighttpd)" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf is needed (apt-get install linux-perf)" >&2; exit 2; }
server=${SERVE_BENCH_POSTGRES:-} postmaster=""
if [ -n "$server" ]; then
    command -v psql >/dev/null || { echo "psql is needed (apt-get install postgresql-client)" >&2; exit 2; }
    psql -q "$server" -c "SELECT 1" >/dev/null || { echo "cannot reach the server $server" >&2; exit 2; }
    pidfile="$(echo "$server" | sed -n 's/.*[?&]host=\([^&]*\).*/\1/p')/data/postmaster.pid"
    [ -r "$pidfile" ] && postmaster=$(head -n 1 "$pidfile")
    # The same server, another database: the URI's path names it.
    uri=$(echo "$server" | sed 's|@/[^?]*|@/subdesk_bench_serve|')
fi
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d)
trap 'kill $(cat "$work"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"
      [ -z "$server" ] || psql -q "$server" -c "DROP DATABASE IF EXISTS subdesk_bench_serve" >/dev/null 2>&1 || true' EXIT
mkdir -p "$work/www" "$work/logs"
"$(dirname "$new")/subdesk-bench" --write-bodies "$work/bodies.ndjson" --bodies "$bodies" --only baseline >/dev/null

fsync_ms() { # the median of 200 writes of 4 KB each followed by fsync, in this folder
    python3 - "$work/fsync.probe" <<'EOF'
import os, statistics, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
times = []
for _ in range(200):
    os.write(fd, b"x" * 4096)
    t = time.perf_counter(); os.fsync(fd); times.append((time.perf_counter() - t) * 1000)
os.close(fd)
print(f"{statistics.median(times):.3f}")
EOF
}

# run SUBDESK CLIENTS: prints "REQUESTS_PER_SECOND COMMITTER_US_PER_REQUEST SERVER_US_PER_REQUEST"
# (the last 0 on SQLite)
run() {
    local binary=$1 clients=$2 store=$work/store.db port=$((20000 + RANDOM % 20000)) pid tid cpu line requests rate before after
    rm -f "$store"* "$work/serve.sock"
    if [ -n "$server" ]; then
        psql -q "$server" -c "DROP DATABASE IF EXISTS subdesk_bench_serve" -c "CREATE DATABASE subdesk_bench_serve" >/dev/null
        store=$uri
    fi
    "$binary" init --db "$store" >/dev/null 2>&1
    [ -z "$server" ] || sleep 0.5 # init's backend exits, and is reaped before the count starts
    before=$(reaped_cpu)
    printf 'db = %s\nroot_ca = %s\nbundle_id = com.example.subdesk.demo\napp_apple_id = 1234567890\n' \
        "$store" "$root/sample-data/test-ca/root.der" > "$work/config"
    chmod 600 "$work/config"
    : > "$work/logs/serve.log"
    SUBDESK_CONFIG=$work/config "$binary" serve --listen "unix:$work/serve.sock" 2>>"$work/logs/serve.log" &
    pid=$!
    echo $pid > "$work/serve.pid"
    # The webhook's lines of deploy/lighttpd-serve.conf alone (no TLS metrics listener).
    cat > "$work/lighttpd.conf" <<EOF
server.modules = ( "mod_fastcgi" )
server.bind = "127.0.0.1"
server.port = $port
server.document-root = "$work/www"
server.errorlog = "$work/logs/error.log"
\$HTTP["url"] == "/appstore/notifications" {
    fastcgi.server = ( "/appstore/notifications" => (( "socket" => "$work/serve.sock", "check-local" => "disable" )) )
}
EOF
    lighttpd -D -f "$work/lighttpd.conf" > "$work/logs/lighttpd.out" 2>&1 &
    echo $! > "$work/lighttpd.pid"
    for _ in $(seq 50); do [ -S "$work/serve.sock" ] && break; sleep 0.1; done
    sleep 0.5
    perf record -q -F 997 -g -p "$pid" -o "$work/perf.data" >/dev/null 2>&1 &
    local recorder=$!
    sleep 0.3
    rate=$(python3 bench/http_load.py "http://127.0.0.1:$port/appstore/notifications" "$work/bodies.ndjson" "$clients" \
        | sed -n 's/.*: \([0-9][0-9]*\)\/s,.*/\1/p')
    kill "$(cat "$work/lighttpd.pid")"; wait "$(cat "$work/lighttpd.pid")" 2>/dev/null || true; rm -f "$work/lighttpd.pid"
    kill "$pid"; wait "$pid" 2>/dev/null || true; rm -f "$work/serve.pid"
    kill -INT "$recorder"; wait "$recorder" 2>/dev/null || true
    # The committing thread is the one whose samples run GroupCommitter's loop (the mangled
    # name); all of its samples are its CPU time (it does nothing else), also those whose
    # stack perf could not walk (inside SQLite, built without frame pointers).
    cpu=$(perf script -i "$work/perf.data" -F tid,ip,sym 2>/dev/null | python3 -c '
import collections, sys
samples, committer, tid = collections.Counter(), set(), None
for line in sys.stdin:
    if not line.strip(): tid = None; continue
    if tid is None: tid = line.split()[0]; samples[tid] += 1; continue
    if "GroupCommitterC4loop" in line: committer.add(tid)
print(sum(samples[t] for t in committer) / 997)')
    line=$(grep 'requests were committed' "$work/logs/serve.log" | tail -1)
    requests=$(echo "$line" | sed -n 's/.* \([0-9][0-9]*\) requests were committed.*/\1/p')
    [ -z "$server" ] || sleep 1 # serve's backends exit with it, and the postmaster reaps them
    after=$(reaped_cpu)
    awk -v r="$rate" -v c="$cpu" -v n="${requests:-0}" -v s="$((after - before))" -v hz="$(getconf CLK_TCK)" \
        'BEGIN { printf "%s %.0f %.0f\n", r, (n > 0 ? c / n * 1e6 : 0), (n > 0 ? s / hz / n * 1e6 : 0) }'
}

# The CPU time, in clock ticks, of the PostgreSQL server's children the postmaster has
# reaped (its backends, once their connections close); 0 on SQLite or with no postmaster found.
reaped_cpu() {
    if [ -n "$postmaster" ] && [ -r "/proc/$postmaster/stat" ]; then
        sed 's/.*) //' "/proc/$postmaster/stat" | awk '{ print $14 + $15 }'
    else
        echo 0
    fi
}

median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

declare -a oc=() nc=() oc1=() nc1=() o1=() n1=() o16=() n16=() fs=() os=() ns=()
for round in $(seq 1 "$rounds"); do
    f=$(fsync_ms); fs+=("$f")
    if (( round % 2 )); then order="old new"; else order="new old"; fi
    for which in $order; do
        binary=$old; [ "$which" = new ] && binary=$new
        read -r one cpu1 server1 < <(run "$binary" 1)
        read -r many cpu server16 < <(run "$binary" 16)
        if [ "$which" = old ]; then o1+=("$one"); o16+=("$many"); oc+=("$cpu"); oc1+=("$cpu1"); os+=("$server16")
        else n1+=("$one"); n16+=("$many"); nc+=("$cpu"); nc1+=("$cpu1"); ns+=("$server16"); fi
        backends=""
        [ -z "$server" ] || backends="; server's backends ${server1} / ${server16} us a request"
        echo "round $round $which: 1 client $one/s, 16 clients $many/s, committer ${cpu1} / ${cpu} us of CPU a request at 1 / 16 clients (fsync $f ms)$backends"
    done
done
change() { awk -v a="$2" -v b="$1" 'BEGIN { printf "%+.0f%%", (a / b - 1) * 100 }'; }
mo=$(median "${oc[@]}") mn=$(median "${nc[@]}") mo1=$(median "${oc1[@]}") mn1=$(median "${nc1[@]}")
echo "median committer CPU a request at 16 clients: old $mo us, new $mn us ($(change "$mo" "$mn"))"
echo "median committer CPU a request at 1 client: old $mo1 us, new $mn1 us ($(change "$mo1" "$mn1"))"
echo "median requests/s: old 1 client $(median "${o1[@]}"), 16 clients $(median "${o16[@]}"); new 1 client $(median "${n1[@]}"), 16 clients $(median "${n16[@]}"); fsync $(median "${fs[@]}") ms"
[ -z "$server" ] || echo "median server backends' CPU a request at 16 clients: old $(median "${os[@]}") us, new $(median "${ns[@]}") us"
