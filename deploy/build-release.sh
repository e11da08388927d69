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
# The commit (with -dirty; SUBDESK_BUILD_COMMIT when the caller names it), SOURCE_DATE_EPOCH
# (the commit's time unless set) and the linking reach the binary through .build/build-info.h,
# written for the build and removed after it, so the tree stays clean. Written for every
# build, the first one included: the compiler records the header as a dependency only once
# it exists, so a build made without it is not rebuilt when it appears.
commit=${SUBDESK_BUILD_COMMIT:-unknown}
if [ -z "${SUBDESK_BUILD_COMMIT:-}" ] && git rev-parse --git-dir >/dev/null 2>&1; then
    commit=$(git rev-parse --short=12 HEAD)
    [ -z "$(git status --porcelain --untracked-files=no)" ] || commit="$commit-dirty"
fi
if [ -z "${SOURCE_DATE_EPOCH:-}" ] && git rev-parse --git-dir >/dev/null 2>&1; then
    SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
fi
: "${SOURCE_DATE_EPOCH:=$(date +%s)}"
# The last one written is kept in the release build's folder with its time, so the same
# commit built again is not recompiled (the package after the builds beside the tests).
kept=.build/package-build/build-info.h
mkdir -p .build/package-build
printf '#define SUBDESK_BUILD_COMMIT "%s"\n#define SUBDESK_BUILD_EPOCH %sLL\n#define SUBDESK_BUILD_LINKING "static-stdlib"\n' \
    "$commit" "$SOURCE_DATE_EPOCH" > "$kept.new"
if cmp -s "$kept.new" "$kept"; then rm -f "$kept.new"; else mv "$kept.new" "$kept"; fi
cp -p "$kept" .build/build-info.h
trap 'rm -f .build/build-info.h' EXIT
for product in "$@"; do
    swift build -c release --scratch-path .build/package-build --product "$product" -Xswiftc -static-stdlib --disable-local-rpath
done
