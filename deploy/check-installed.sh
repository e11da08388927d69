#!/usr/bin/env bash
# Checks an installed subdesk package (dpkg -i done, run as root on a machine the check may
# change: deploy/check-package.sh installs it and undoes the install after) as its README
# says to set it up, and that every part of it uses the one store the shipped config names:
#   - deploy/README.md's package steps, as written (the block after <!-- package-steps -->;
#     `sudo -u USER` runs through runuser; installing, editing and systemctl are left out:
#     dpkg -i was done, the edit is made below, and a CI machine runs no systemd);
#   - `subdesk doctor` by hand (as subdesk and as root) names /etc/subdesk/config and the
#     services' store; a user outside the group is told once that the config is skipped;
#   - the CGI wrapper, run as the web server's user with the environment the server
#     configurations give it, quarantines a bad body into that store;
#   - each unit (serve, sweep, metrics) run as its ExecStart= with its User= and
#     Environment= (runuser, not systemctl) uses that store;
#   - `subdesk demo` and the test suite's binary never read /etc/subdesk/config.
# Exits non-zero on the first failure, saying which.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

fail() { echo "check-installed: FAILED: $*" >&2; exit 1; }
ok() { echo "check-installed: $*"; }
[ "$(id -u)" -eq 0 ] || fail "run as root (it adds a user to a group and runs commands as others)"
[ -x /usr/bin/subdesk ] || fail "subdesk is not installed"
store=/var/lib/subdesk/subdesk.db
[ ! -e "$store" ] || fail "$store exists already: this check sets up a fresh install"
tmp=$(mktemp -d)
chmod 0755 "$tmp"
trap 'rm -rf "$tmp"' EXIT

grep -qx "db = $store" /etc/subdesk/config || fail "/etc/subdesk/config does not name $store"

# `sudo -u USER CMD...` as the README writes it, through runuser with USER's home.
sudo() {
    [ "$1" = -u ] || { "$@"; return; }
    local user=$2
    shift 2
    runuser -u "$user" -- env HOME="$(getent passwd "$user" | cut -d: -f6)" PATH=/usr/bin:/bin "$@"
}
as() { local user=$1; shift; (cd / && sudo -u "$user" "$@"); }

# The administrator's edit (sudoedit in the README): the app, and an API key for the sweep
# (a key of this test's own: nothing here calls Apple).
openssl ecparam -genkey -name prime256v1 -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out /etc/subdesk/SubscriptionKey.p8
chown subdesk:subdesk /etc/subdesk/SubscriptionKey.p8
chmod 0600 /etc/subdesk/SubscriptionKey.p8
cat >> /etc/subdesk/config <<'EOF'
bundle_id = com.example.installed
api_key_file = /etc/subdesk/SubscriptionKey.p8
api_key_id = ABCDE12345
api_issuer_id = 00000000-0000-0000-0000-000000000000
EOF

# The README's steps.
steps=$(sed -n '/^<!-- package-steps -->$/,/^```$/p' deploy/README.md | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d')
[ -n "$steps" ] || fail "deploy/README.md has no package steps"
ran=0
while IFS= read -r line; do
    command=${line%%#*}
    command=$(echo "$command" | sed 's/[[:space:]]*$//')
    [ -n "$command" ] || continue
    case $command in
    *apt-get\ install*|sudoedit*|*systemctl*) echo "check-installed: (left out) $command"; continue ;;
    esac
    echo "check-installed: \$ $command"
    (cd / && eval "$command") > "$tmp/step.log" 2>&1 || { cat "$tmp/step.log"; fail "the README's step '$command'"; }
    cat "$tmp/step.log"
    ran=$((ran + 1))
done <<< "$steps"
[ "$ran" -ge 3 ] || fail "only $ran of the README's steps ran"
got=$(stat -c %U:%G:%a "$store")
[ "$got" = subdesk:subdesk:660 ] || fail "the store is $got after the README's steps, not subdesk:subdesk:660"
ok "the README's package steps: the store $store is subdesk:subdesk:660"

# doctor by hand: as subdesk (the last step's output) and as root, the same store.
for user in subdesk root; do
    as "$user" subdesk doctor > "$tmp/doctor.$user" 2>&1 || true
    grep -q "config file   /etc/subdesk/config" "$tmp/doctor.$user" || { cat "$tmp/doctor.$user"; fail "doctor as $user does not name /etc/subdesk/config"; }
    grep -q "^OK    services .*use this store too ($store" "$tmp/doctor.$user" \
        || { cat "$tmp/doctor.$user"; fail "doctor as $user does not say the services use its store $store"; }
    grep -q "^OK    store         $store" "$tmp/doctor.$user" || { cat "$tmp/doctor.$user"; fail "doctor as $user checked another store"; }
done
as nobody subdesk doctor > "$tmp/doctor.nobody" 2>&1 || true
[ "$(grep -c "skipped /etc/subdesk/config: this user cannot read it" "$tmp/doctor.nobody")" = 1 ] \
    || { cat "$tmp/doctor.nobody"; fail "a user outside the subdesk group is not told once that /etc/subdesk/config is skipped"; }
if grep -q "$store" "$tmp/doctor.nobody"; then cat "$tmp/doctor.nobody"; fail "doctor as nobody reached the services' store"; fi
ok "doctor as subdesk and as root checks $store; as nobody, one notice and its own defaults"

# The CGI wrapper as the web server's user, with what the server configurations set.
body='{"signedPayload":"not.a.jws"}'
answer=$(printf '%s' "$body" | as www-data env -i PATH=/usr/bin:/bin SUBDESK_CONFIG=/etc/subdesk/config REQUEST_METHOD=POST \
    CONTENT_TYPE=application/json CONTENT_LENGTH=${#body} /usr/lib/subdesk/subdesk-cgi 2> "$tmp/cgi.err") || true   # a refused body exits 1
echo "$answer" | grep -q "^Status: 4" || { echo "$answer"; cat "$tmp/cgi.err"; fail "the CGI wrapper did not refuse a bad body with a 4xx"; }
as subdesk subdesk quarantine --json > "$tmp/quarantine.json" || fail "subdesk quarantine as subdesk"
grep -q '"reason"' "$tmp/quarantine.json" || { cat "$tmp/quarantine.json"; fail "the CGI's refused body is not quarantined in $store"; }
ok "the CGI wrapper, as www-data, quarantined its refused body in $store"

# A unit's line KEY= (every one, for Environment=), systemd's $$ read as $.
unit_lines() { sed -n "s/^$2=//p" "/usr/lib/systemd/system/$1"; }
unit_env() { local e; while IFS= read -r e; do printf '%s\n' "$e"; done < <(unit_lines "$1" Environment); }
# run_unit UNIT [WORDS]: the unit's ExecStart= (with WORDS after it), as its User=, with
# only its Environment= (a KEY=VALUE given as WORDS' first words replaces the unit's KEY).
run_unit() {
    local unit=$1 extra=${2:-}
    local user exec
    user=$(unit_lines "$unit" User)
    exec=$(unit_lines "$unit" ExecStart | sed 's/\$\$/$/g')
    [ -n "$user" ] && [ -n "$exec" ] || fail "$unit has no User= or ExecStart="
    local envs=()
    mapfile -t envs < <(unit_env "$unit")
    (cd / && runuser -u "$user" -- env -i PATH=/usr/bin:/bin "${envs[@]}" ${RUN_UNIT_ENV:-} /bin/sh -c "exec $exec $extra")
}

# serve: its start line names the store it opened (on a socket of its own here: systemd's
# socket is not there to pass).
sockets=$(mktemp -d)
chown subdesk "$sockets"
run_unit subdesk-serve.service "--listen unix:$sockets/serve.sock" > "$tmp/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 1 300); do
    grep -q "answering FastCGI on" "$tmp/serve.log" && break
    kill -0 "$serve_pid" 2>/dev/null || break
    sleep 0.1
done
pkill -TERM -u subdesk -f "subdesk serve" 2>/dev/null || true
wait "$serve_pid" 2>/dev/null || true
rm -rf "$sockets"
grep -q "answering FastCGI on .*, store $store\$" "$tmp/serve.log" || { cat "$tmp/serve.log"; fail "subdesk-serve.service's ExecStart did not serve $store"; }
ok "subdesk-serve.service's ExecStart, as its User=, serves $store"

# sweep: its audit entry lands in the store.
run_unit subdesk-sweep.service > "$tmp/sweep.log" 2>&1 || { cat "$tmp/sweep.log"; fail "subdesk-sweep.service's ExecStart"; }
grep -q "audit #" "$tmp/sweep.log" || { cat "$tmp/sweep.log"; fail "the sweep names no audit entry"; }
as subdesk subdesk audit --json > "$tmp/audit.json" || fail "subdesk audit as subdesk"
grep -q '"sweep' "$tmp/audit.json" || { cat "$tmp/audit.json"; fail "the sweep unit's run is not in $store's audit log"; }
ok "subdesk-sweep.service's ExecStart, as its User=, swept $store (audit log)"

# forward: the relay's unit reads the package config as its User=, and says it names no target.
set +e
run_unit subdesk-forward.service "--once" > "$tmp/forward.log" 2>&1
status=$?
set -e
[ "$status" = 2 ] && grep -q "no \[forward NAME\] target is configured" "$tmp/forward.log" \
    || { cat "$tmp/forward.log"; fail "subdesk-forward.service's ExecStart (exit $status)"; }
ok "subdesk-forward.service's ExecStart, as its User=, read the package config (no [forward] target: exit 2)"

# metrics: the quarantined body above is counted, so it read the same store. Its
# TEXTFILE_DIR (node_exporter's) need not exist here: one of the check's own stands in.
textfiles=$(mktemp -d)
chown subdesk "$textfiles"
RUN_UNIT_ENV="TEXTFILE_DIR=$textfiles" run_unit subdesk-metrics.service > "$tmp/metrics.log" 2>&1 \
    || { cat "$tmp/metrics.log"; rm -rf "$textfiles"; fail "subdesk-metrics.service's ExecStart"; }
prom=$textfiles/subdesk.prom
[ -f "$prom" ] || { cat "$tmp/metrics.log"; rm -rf "$textfiles"; fail "subdesk-metrics.service's ExecStart wrote no subdesk.prom"; }
grep -Eq '^subdesk_quarantine[a-z_]* 1$' "$prom" || { grep quarantine "$prom"; rm -rf "$textfiles"; fail "the metrics unit did not count $store's quarantined body"; }
rm -rf "$textfiles"
ok "subdesk-metrics.service's ExecStart, as its User=, read $store"

# subdesk demo, as root (who can read the package config), never reads it: its store and
# the dashboard's settings are its own. The suite's binary (a build folder's) never does.
mkdir -p "$tmp/home"
(cd "$tmp" && env -i PATH=/usr/bin:/bin HOME="$tmp/home" /usr/bin/subdesk demo --no-dashboard > "$tmp/demo.log" 2>&1) \
    || { cat "$tmp/demo.log"; fail "subdesk demo with the package installed"; }
[ -f "$tmp/home/.local/share/subdesk/demo.db" ] || fail "subdesk demo did not build its store in the user's data folder"
if grep -q "/etc/subdesk\|$store" "$tmp/demo.log"; then cat "$tmp/demo.log"; fail "subdesk demo spoke of the package's config or store"; fi
if [ -x "$repo/.build/debug/subdesk" ]; then
    (cd "$tmp" && env -i PATH=/usr/bin:/bin HOME="$tmp/home" "$repo/.build/debug/subdesk" doctor > "$tmp/built.log" 2>&1) || true
    grep -q "config file   none: looked at $tmp/home/.config/subdesk/config (the defaults apply)" "$tmp/built.log" \
        || { cat "$tmp/built.log"; fail "the build folder's subdesk read a config besides the user's"; }
    ok "the build folder's subdesk (the test suite's) looks only at the user's config"
fi
ok "subdesk demo, with the package installed, keeps to its own store"
ok "the installed package passes"
