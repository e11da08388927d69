#!/usr/bin/env bash
# deploy/build-release.sh PRODUCT...
# The one release build of subdesk's programs, into .build/package-build/release/: the Swift
# runtime and Foundation linked in (-static-stdlib: no Debian package has them, and no RUNPATH
# into the toolchain), the system libraries shared. deploy/package.sh packages subdesk and
# subdesk-http from it, and deploy/build.sh takes its subdesk-http, so a run that does both
# compiles each program once.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: deploy/build-release.sh PRODUCT..." >&2; exit 2; }
for product in "$@"; do
    swift build -c release --scratch-path .build/package-build --product "$product" -Xswiftc -static-stdlib --disable-local-rpath
done
