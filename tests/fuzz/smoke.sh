#!/bin/sh
# smoke.sh: build collsim's libFuzzer targets with clang and run each briefly over its seed corpus.
#
# Usage: tests/fuzz/smoke.sh [SECONDS]   (default 30 per target; or FUZZ_SECONDS)
# Environment: CC (default clang), FUZZ_OUT (build and scratch directory, default a temp dir,
# kept when set), FUZZ_TARGETS (default: all), FUZZ_FLAGS (extra libFuzzer flags).
# Compiles the library sources listed in Makefile.am directly (no autotools build needed), with
# -fsanitize=fuzzer,address,undefined. Prints one line per target; exits 1 when any target
# crashes, leaks, times out or fails to build, 77 when clang cannot build a fuzzer.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
secs=${1:-${FUZZ_SECONDS:-30}}
cc=${CC:-clang}
targets=${FUZZ_TARGETS:-"sched platform csv table sweep topoxml smitopo ncclinfo meas trace props cases"}
keep=${FUZZ_OUT:+yes}
out=${FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/collsim-fuzz.XXXXXX")}
mkdir -p "$out/obj" "$out/bin" || exit 1
[ -n "$keep" ] || trap 'rm -rf "$out"' EXIT

case $secs in '' | *[!0-9]*) echo "smoke.sh: bad duration '$secs'" >&2; exit 2 ;; esac

# The fuzzer runtime must link: otherwise skip, as a test that cannot run here.
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' >"$out/probe.c"
if ! "$cc" -fsanitize=fuzzer -o "$out/probe" "$out/probe.c" >"$out/probe.log" 2>&1; then
    echo "smoke.sh: SKIP: $cc cannot build a libFuzzer target (see $out/probe.log)"
    exit 77
fi

pkgs="libxml-2.0 simgrid"
pkg_cflags=$(pkg-config --cflags $pkgs) || exit 1
pkg_libs=$(pkg-config --libs $pkgs) || exit 1
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cflags="-std=gnu11 -g -O1 $san -I$top/src $pkg_cflags"

# The library sources: every .c in the src_libcollsim_a_SOURCES blocks of Makefile.am.
srcs=$(awk '/^src_libcollsim_a_SOURCES/ { on = 1 }
            on { for (i = 1; i <= NF; i++) if ($i ~ /\.c$/) print $i
                 if ($NF != "\\") on = 0 }' "$top/Makefile.am")
[ -n "$srcs" ] || { echo "smoke.sh: no library sources found in Makefile.am" >&2; exit 1; }

objs=""
for s in $srcs; do
    o="$out/obj/$(echo "$s" | tr / _).o"
    if ! "$cc" $cflags -fsanitize=fuzzer-no-link -c "$top/$s" -o "$o" 2>"$o.log"; then
        echo "smoke.sh: cannot compile $s:" >&2
        cat "$o.log" >&2
        exit 1
    fi
    objs="$objs $o"
done
# SimGrid's rate callbacks (src/libsgrate.a: C++), for targets that reach the replay
# (fuzz_cases: a case file's readers link the predictor); no -I src, as in Makefile.am: src/sched.h
# would shadow the C library's <sched.h>
cxx=${CXX:-clang++}
for s in $(awk '/^src_libsgrate_a_SOURCES/ { for (i = 3; i <= NF; i++) if ($i ~ /\.cc$/) print $i }' \
    "$top/Makefile.am"); do
    o="$out/obj/$(echo "$s" | tr / _).o"
    if ! "$cxx" -std=c++17 -g -O1 $san -fno-sanitize=vptr,function -fsanitize=fuzzer-no-link $pkg_cflags \
        -c "$top/$s" -o "$o" 2>"$o.log"; then
        echo "smoke.sh: cannot compile $s:" >&2
        cat "$o.log" >&2
        exit 1
    fi
    objs="$objs $o"
done
rm -f "$out/libcollsim-fuzz.a"
ar cr "$out/libcollsim-fuzz.a" $objs || exit 1

status=0
for t in $targets; do
    bin="$out/bin/fuzz_$t"
    if ! "$cc" $cflags -fsanitize=fuzzer "$here/fuzz_$t.c" "$out/libcollsim-fuzz.a" $pkg_libs -lstdc++ -lm \
        -o "$bin" 2>"$out/build_$t.log"; then
        echo "fuzz_$t: BUILD FAILED"
        cat "$out/build_$t.log" >&2
        status=1
        continue
    fi
    dict=""
    [ -f "$here/$t.dict" ] && dict="-dict=$here/$t.dict"
    # A fresh working corpus: new inputs go there, the committed seeds stay as they are.
    rm -rf "$out/corpus_$t" "$out/art_$t"
    mkdir -p "$out/corpus_$t" "$out/art_$t/"
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$out/art_$t/" $dict ${FUZZ_FLAGS:-} "$out/corpus_$t" "$here/corpus/$t" \
        >"$out/run_$t.log" 2>&1
    rc=$?
    stats=$(awk '/^stat::number_of_executed_units:/ { e = $2 }
                 /^stat::peak_rss_mb:/ { r = $2 }
                 /(DONE|INITED) +cov: / { for (i = 1; i < NF; i++) {
                       if ($i == "cov:") c = $(i + 1); if ($i == "ft:") f = $(i + 1)
                       if ($i == "corp:") n = $(i + 1) } }
                 END { printf "execs=%s cov=%s ft=%s corpus=%s rss_mb=%s", e, c, f, n, r }' \
        "$out/run_$t.log")
    if [ "$rc" -eq 0 ]; then
        echo "fuzz_$t: OK ${secs}s $stats"
    else
        echo "fuzz_$t: FAILED (exit $rc) $stats; artifacts: $(ls "$out/art_$t" | tr '\n' ' ')"
        grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$out/run_$t.log" | head -5
        tail -n 40 "$out/run_$t.log" >&2
        status=1
        keep=yes
        trap - EXIT
    fi
done
[ "$status" -eq 0 ] || echo "smoke.sh: failures; logs and reproducers kept in $out"
exit $status
