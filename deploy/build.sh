#!/usr/bin/env bash
# Builds what to install into .build/deploy/: `subdesk` linked fully statically (Swift
# runtime, Foundation, libcrypto, SQLite and ncurses inside), and `subdesk-http`, the
# URLSession helper that revalidation starts, with the Swift runtime linked in and the system
# libraries shared: the package's release build (deploy/build-release.sh), not built again
# when deploy/package.sh built it.
#
# A web server starts one subdesk process per notification (`subdesk ingest --cgi`). A
# dynamically linked subdesk spends ~13 ms of each request loading and relocating its
# libraries; the static one starts in ~3 ms. It needs the static libraries that
# libssl-dev, libsqlite3-dev and libncurses-dev install, and the toolchain's own.
#
# deploy/build.sh --check links the same static subdesk unoptimized, into .build/static-check/,
# and runs it: what CI proves of the static link (the libraries, the static Swift runtime and
# Foundation, starting without a shared library) in less than half the compiling. The
# optimizer's own proof is the package's release build, made from the same sources.
set -euo pipefail
cd "$(dirname "$0")/.."

configuration=release
scratch=.build/static
case "${1:-}" in
"") ;;
--check) configuration=debug; scratch=.build/static-check ;;
*) echo "usage: deploy/build.sh [--check]" >&2; exit 2 ;;
esac

[ "$configuration" = debug ] || deploy/build-release.sh subdesk-http
# The linker warns that glibc's name-service functions (getpwuid, getaddrinfo, dlopen)
# need the shared glibc at run time; subdesk itself resolves no names (HTTP is the
# helper's), so those warnings are filtered out of the log.
log=$(mktemp)
# libpq has no static form with its own dependencies (Kerberos, LDAP) on Debian, so the
# static subdesk is built without PostgreSQL support (SUBDESK_NO_POSTGRES): it refuses a
# postgres:// store with a message saying so. Receivers writing to PostgreSQL run the
# dynamically linked subdesk (.build/release/subdesk).
if ! swift build -c "$configuration" --scratch-path "$scratch" --product subdesk \
        -Xswiftc -static-executable -Xswiftc -DSUBDESK_NO_POSTGRES -Xlinker -ltinfo > "$log" 2>&1; then
    grep -v "in statically linked applications requires at runtime" "$log" | tail -n 40
    echo "build.sh: the static subdesk did not build" >&2
    exit 1
fi
rm -f "$log"

if [ "$configuration" = debug ]; then
    built=$scratch/debug/subdesk
    if ldd "$built" >/dev/null 2>&1; then
        echo "build.sh: $built is not a static executable" >&2
        ldd "$built" >&2
        exit 1
    fi
    "$built" --version >/dev/null || { echo "build.sh: $built does not start" >&2; exit 1; }
    echo "linked $built (static, unoptimized) and it starts"
    exit 0
fi

mkdir -p .build/deploy
install -m 0755 .build/static/release/subdesk .build/deploy/subdesk
install -m 0755 .build/package-build/release/subdesk-http .build/deploy/subdesk-http
echo "built .build/deploy/subdesk (static) and .build/deploy/subdesk-http"
