#!/usr/bin/env bash
# bench/serve-through-lighttpd.sh [BODIES]
#
# The same fresh signed bodies POSTed through one lighttpd to the CGI (deploy/lighttpd.conf,
# a process per request) and to subdesk serve (deploy/lighttpd-serve.conf, FastCGI), on a
# new SQLite store each, sequential and from 16 clients; the load generator is
# bench/http_load.py (Python's http.client, one kept connection per client). Needs the
# release build (swift build -c release) and lighttpd.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
count=${1:-400}
subdesk=$root/.build/release/subdesk
work=$(mktemp -d)
trap 'kill $(cat "$work"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/www" "$work/logs"
.build/release/subdesk-bench --write-bodies "$work/bodies.ndjson" --bodies "$count" --data "$work/bench" 2>/dev/null
sed "s|/usr/local/bin/subdesk|$subdesk|" deploy/subdesk-cgi > "$work/subdesk-cgi"
chmod 755 "$work/subdesk-cgi"

site() {  # site CONFIG_FILE PORT SHIPPED_FILE
    sed -e "s|^var.subdesk_port .*|var.subdesk_port = $2|" \
        -e "s|^var.subdesk_cgi .*|var.subdesk_cgi = \"$work/subdesk-cgi\"|" \
        -e "s|^var.subdesk_serve_socket .*|var.subdesk_serve_socket = \"$work/serve.sock\"|" \
        -e "s|^var.subdesk_config .*|var.subdesk_config = \"$work/config\"|" \
        -e "s|^var.subdesk_docroot .*|var.subdesk_docroot = \"$work/www\"|" \
        -e "s|^var.subdesk_logs .*|var.subdesk_logs = \"$work/logs\"|" \
        -e "s|^var.subdesk_metrics_socket .*|var.subdesk_metrics_socket = \"127.0.0.1:$(($2 + 1))\"|" \
        -e '/^server.username/d; /^server.groupname/d' "$3" > "$1"
}

run() {  # run cgi|serve CLIENTS
    local store=$work/$1-$2.db port=$((20000 + RANDOM % 20000))
    "$subdesk" init --db "$store" >/dev/null 2>&1
    printf 'db = %s\nroot_ca = %s\nbundle_id = com.example.subdesk.demo\napp_apple_id = 1234567890\n' \
        "$store" "$root/sample-data/test-ca/root.der" > "$work/config"
    chmod 600 "$work/config"
    if [ "$1" = serve ]; then
        SUBDESK_CONFIG=$work/config "$subdesk" serve --listen "unix:$work/serve.sock" 2>>"$work/logs/serve.log" &
        echo $! > "$work/serve.pid"
        site "$work/lighttpd.conf" "$port" deploy/lighttpd-serve.conf
    else
        site "$work/lighttpd.conf" "$port" deploy/lighttpd.conf
    fi
    lighttpd -D -f "$work/lighttpd.conf" > "$work/logs/lighttpd.out" 2>&1 &
    echo $! > "$work/lighttpd.pid"
    sleep 1
    printf '%-6s %2s client(s): ' "$1" "$2"
    python3 bench/http_load.py "http://127.0.0.1:$port/appstore/notifications" "$work/bodies.ndjson" "$2"
    kill "$(cat "$work/lighttpd.pid")"; wait "$(cat "$work/lighttpd.pid")" 2>/dev/null || true; rm -f "$work/lighttpd.pid"
    if [ -f "$work/serve.pid" ]; then kill "$(cat "$work/serve.pid")"; wait "$(cat "$work/serve.pid")" 2>/dev/null || true; rm -f "$work/serve.pid"; fi
}

for clients in 1 16; do
    run cgi "$clients"
    run serve "$clients"
done
