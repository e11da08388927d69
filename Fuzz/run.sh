#!/usr/bin/env bash
# Fuzz/run.sh TARGET SECONDS [LIBFUZZER_OPTION...]
# Fuzz/run.sh TARGET replay FILE...      runs the target on these inputs only
# Fuzz/run.sh TARGET build               builds the target's binary and stops
#
# Builds the libFuzzer binary (the SubscriptionCore sources and Fuzz/Targets, compiled
# by swiftc with -sanitize=fuzzer,address) into .build/fuzz/, then runs TARGET for at
# most SECONDS, seeded from Fuzz/corpus/TARGET. Targets: intake, payload, jws,
# certificate, response, fastcgi (each file in Fuzz/Targets says what it feeds where), and
# options, the command line's parse, built from the subdesk sources into a binary of its
# own (.build/fuzz/subdesk-fuzz-options: Fuzz/Options says how).
# FUZZ_OPTIMIZE=-Onone builds the core's binary unoptimized (.build/fuzz/subdesk-fuzz-onone):
# it compiles in about a quarter of the time and runs fewer inputs a second, the better trade
# for a short run (CI's 15 s); the default, -O, is for a long one.
# New inputs go to .build/fuzz/corpus-TARGET, crashes to .build/fuzz/artifacts-TARGET/,
# so the committed seeds only change by hand. Exits 1 when a crash was found, 3 when this
# toolchain cannot build libFuzzer binaries at all, 4 when the sources do not compile.
set -euo pipefail

usage() {
    echo "usage: Fuzz/run.sh intake|payload|jws|certificate|response|options|fastcgi SECONDS [LIBFUZZER_OPTION...]" >&2
    echo "       Fuzz/run.sh intake|payload|jws|certificate|response|options|fastcgi replay FILE..." >&2
    echo "       Fuzz/run.sh intake|payload|jws|certificate|response|options|fastcgi build" >&2
    exit 2
}
[ $# -ge 2 ] || usage
target=$1
seconds=$2
shift 2
case "$target" in intake|payload|jws|certificate|response|options|fastcgi) ;; *) usage ;; esac
[[ "$seconds" =~ ^[0-9]+$ || "$seconds" == replay || "$seconds" == build ]] || usage
[[ "$seconds" != replay || $# -gt 0 ]] || usage

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=.build/fuzz
optimize=${FUZZ_OPTIMIZE:--O}
case "$optimize" in -O) binary=$build/subdesk-fuzz ;; -Onone) binary=$build/subdesk-fuzz-onone ;;
    *) echo "Fuzz/run.sh: FUZZ_OPTIMIZE is -O or -Onone, not $optimize" >&2; exit 2 ;; esac
mkdir -p "$build"

sources=(Sources/SubscriptionCore Sources/HelperWire Sources/FastCGI Sources/CBuildInfo Fuzz/Targets Sources/CSQLite Sources/COpenSSL sample-data/test-ca)
if [ "$target" = options ]; then
    binary=$build/subdesk-fuzz-options
    sources=(Sources/SubscriptionCore Sources/HelperWire Sources/TerminalUI Sources/Dashboard Sources/SubdeskScenarios
             Sources/subdesk Sources/FastCGI Sources/CBuildInfo Fuzz/Options Sources/CSQLite Sources/COpenSSL Sources/CNCurses)
fi
stale=no
if [ ! -x "$binary" ] || [ -n "$(find "${sources[@]}" -newer "$binary" -print -quit)" ] || [ Fuzz/run.sh -nt "$binary" ]; then
    stale=yes
fi
if [ "$stale" = yes ]; then
    probe=$build/probe
    printf '@_cdecl("LLVMFuzzerTestOneInput")\npublic func f(_ p: UnsafePointer<UInt8>?, _ n: Int) -> Int32 { 0 }\n' > "$probe.swift"
    if ! swiftc -parse-as-library -sanitize=fuzzer,address "$probe.swift" -o "$probe" > "$probe.log" 2>&1; then
        echo "fuzz: this Swift toolchain cannot link -sanitize=fuzzer binaries:" >&2
        tail -n 5 "$probe.log" >&2
        exit 3
    fi
fi
if [ "$stale" = yes ]; then
    # The core reads what the build knew about itself from the C target CBuildInfo: compile
    # it and give it a module map, as SwiftPM does (a fuzz build is "unknown" throughout).
    mkdir -p "$build/modules/CBuildInfo"
    printf 'module CBuildInfo {\n    header "%s"\n    export *\n}\n' "$PWD/Sources/CBuildInfo/include/CBuildInfo.h" \
        > "$build/modules/CBuildInfo/module.modulemap"
    cc -c -O1 -I Sources/CBuildInfo/include Sources/CBuildInfo/build_info.c -o "$build/build_info.o" \
        2> "$build/compile.log" || { cat "$build/compile.log" >&2; exit 4; }
fi
if [ "$stale" = yes ] && [ "$target" = options ]; then
    # SubscriptionCore imports HelperWire: compile that module first, as its own module.
    mkdir -p "$build/modules" "$build/stubs"
    mapfile -t wire < <(find Sources/HelperWire -name '*.swift' | sort)
    swiftc -module-name HelperWire -parse-as-library -swift-version 5 -O -g -wmo \
        -emit-module -emit-module-path "$build/modules/HelperWire.swiftmodule" \
        -c "${wire[@]}" -o "$build/HelperWire.o" 2> "$build/compile.log" || { cat "$build/compile.log" >&2; exit 4; }
    # The parse is internal to the subdesk executable: its sources (all but main.swift)
    # and the modules they import are compiled as one module with the target, each
    # `import` answered by an empty module of that name.
    for module in SubscriptionCore TerminalUI Dashboard SubdeskScenarios FastCGI; do
        : > "$build/stubs/$module.swift"
        swiftc -parse-as-library -module-name "$module" -emit-module -emit-module-path "$build/stubs/$module.swiftmodule" \
            "$build/stubs/$module.swift" 2> "$build/compile.log" || { cat "$build/compile.log" >&2; exit 4; }
    done
    mapfile -t cli < <(find Sources/SubscriptionCore Sources/FastCGI Sources/TerminalUI Sources/Dashboard Sources/SubdeskScenarios Sources/subdesk \
        -name '*.swift' ! -path Sources/subdesk/main.swift | sort)
    echo "fuzz: compiling ${#cli[@]} sources and the options target into $binary" >&2
    started=$(date +%s)
    # -Onone: this binary compiles four modules' worth of sources; the parse it runs is short.
    swiftc -module-name SubdeskFuzzOptions -package-name subdesk -parse-as-library -swift-version 5 \
        -sanitize=fuzzer,address -Onone -g -D SUBDESK_NO_POSTGRES \
        -I Sources/CSQLite -I Sources/COpenSSL -I Sources/CNCurses -I "$build/modules" -I "$build/modules/CBuildInfo" -I "$build/stubs" \
        "${cli[@]}" Fuzz/Options/*.swift "$build/HelperWire.o" "$build/build_info.o" \
        -lsqlite3 -lcrypto -lncursesw -ltinfo -o "$binary" 2> "$build/compile.log" || { cat "$build/compile.log" >&2; exit 4; }
    echo "fuzz: built in $(( $(date +%s) - started )) s" >&2
elif [ "$stale" = yes ]; then
    # Embedded, not read at run time: a crash input then replays with the binary alone.
    {
        echo "// Generated by Fuzz/run.sh from sample-data/test-ca (TEST ONLY CA)."
        echo "enum EmbeddedTestCA {"
        for name in root intermediate leaf; do
            echo "    static let $name = \"$(base64 -w0 "sample-data/test-ca/$name.der")\""
        done
        echo "    static let leafKeyPEM = \"$(base64 -w0 sample-data/test-ca/leaf-key.pem)\""
        echo "}"
    } > "$build/EmbeddedTestCA.swift"
    # SubscriptionCore imports HelperWire: compile that module first, as its own module.
    mkdir -p "$build/modules"
    mapfile -t wire < <(find Sources/HelperWire -name '*.swift' | sort)
    swiftc -module-name HelperWire -parse-as-library -swift-version 5 -O -g -wmo \
        -emit-module -emit-module-path "$build/modules/HelperWire.swiftmodule" \
        -c "${wire[@]}" -o "$build/HelperWire.o" 2> "$build/compile.log" || { cat "$build/compile.log" >&2; exit 4; }
    # The FastCGI record parser is compiled into the same module as the core.
    mapfile -t core < <(find Sources/SubscriptionCore Sources/FastCGI -name '*.swift' | sort)
    echo "fuzz: compiling ${#core[@]} core sources and the targets into $binary" >&2
    started=$(date +%s)
    # -O (the default): the fuzzer needs executions per second; ASan and coverage still
    # instrument it. -Onone for a short run, where the build would take most of the time.
    # The fuzz targets never reach PostgreSQL: built without libpq (SUBDESK_NO_POSTGRES).
    # -package-name: the core declares package-wide API, as SwiftPM builds it.
    swiftc -module-name SubdeskFuzz -package-name subdesk -parse-as-library -swift-version 5 \
        -sanitize=fuzzer,address "$optimize" -g -D SUBDESK_NO_POSTGRES \
        -I Sources/CSQLite -I Sources/COpenSSL -I "$build/modules" -I "$build/modules/CBuildInfo" \
        "${core[@]}" Fuzz/Targets/*.swift "$build/EmbeddedTestCA.swift" "$build/HelperWire.o" "$build/build_info.o" \
        -lsqlite3 -lcrypto -o "$binary" 2> "$build/compile.log" || { cat "$build/compile.log" >&2; exit 4; }
    echo "fuzz: built in $(( $(date +%s) - started )) s" >&2
fi

[ "$seconds" = build ] && exit 0

# The Swift runtime's own crash reporter stalls under the sanitizers; libFuzzer reports.
# Leak checking is off: LeakSanitizer cannot follow the tagged pointer inside a Data
# that a long-lived object keeps (the trust roots' DER bytes) and calls it leaked.
export SWIFT_BACKTRACE=enable=no SUBDESK_FUZZ_TARGET=$target
export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
if [ "$seconds" = replay ]; then
    exec "$binary" "$@"
fi

work=$build/corpus-$target
artifacts=$build/artifacts-$target/
mkdir -p "$work" "$artifacts"
"$binary" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 -detect_leaks=0 -print_final_stats=1 \
    -artifact_prefix="$artifacts" "$@" "$work" "Fuzz/corpus/$target"
