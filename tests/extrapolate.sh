#!/bin/sh
# extrapolate.sh: steady-state extrapolation against the full replay over the schedule corpus
# (schedules/, and the shared reference XML when present) and generated schedules that settle late:
# the same verdict at every size and times within 1e-6 relative; and sizes must really be
# extrapolated, some from the first recorded replay of a few iterations.
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
cs="$CS_BUILDDIR/collsim"
shared=${CS_SHARED_DATA:-$CS_SRCDIR/../shared/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
nx=0
nshort=0
nrows=0

# compare NAME GPUS|PLATFORM.xml PREDICT-ARGS...: predict with and without extrapolation on an
# a100-hier platform of GPUS GPUs (2 columns when even), or on the platform file given
compare() {
    name=$1
    g=$2
    shift 2
    p="$tmp/plat$g.xml"
    case $g in *.xml) p=$g ;; esac
    if [ ! -f "$p" ]; then
        if [ $((g % 2)) -eq 0 ]; then
            "$cs" platform a100-hier --rows $((g / 2)) --columns 2 -o "$p"
        else
            "$cs" platform a100-hier --rows "$g" --columns 1 -o "$p"
        fi
    fi
    "$cs" predict "$@" --platform "$p" --format csv --verbose >"$tmp/x.csv" 2>"$tmp/x.err"
    a=$?
    "$cs" predict "$@" --platform "$p" --format csv --no-extrapolate >"$tmp/f.csv" 2>"$tmp/f.err"
    b=$?
    if [ $a -gt 1 ] || [ $a -ne $b ]; then
        echo "FAIL $name: exit $a extrapolated, $b in full" >&2
        cat "$tmp/x.err" "$tmp/f.err" >&2
        rc=1
        return
    fi
    nx=$((nx + $(grep -c 'extrapolated from' "$tmp/x.err")))
    nshort=$((nshort + $(grep -c 'extrapolated from 5 iterations' "$tmp/x.err")))
    paste -d, "$tmp/x.csv" "$tmp/f.csv" | awk -F, -v f="$name" '
        NR == 1 { h = NF / 2; next } # two CSVs side by side: the full one from field h + 1
        { n++ }
        $1 != $(h + 1) || $7 != $(h + 7) { print "FAIL " f ": " $1 " B: " $7 " extrapolated, " $(h + 7) " in full"; bad = 1 }
        $7 == "ok" && ($4 - $(h + 4) > 1e-6 * $(h + 4) || $(h + 4) - $4 > 1e-6 * $(h + 4)) {
            print "FAIL " f ": " $1 " B: " $4 " us extrapolated, " $(h + 4) " us in full"; bad = 1 }
        END { print n > "/dev/stderr"; exit bad }' >&2 2>"$tmp/n" || rc=1
    nrows=$((nrows + $(cat "$tmp/n")))
}

for f in "$CS_SRCDIR"/schedules/*.xml "$shared"/msccl-xml/*.xml; do
    [ -f "$f" ] || continue
    g=$(sed -n 's/.*<algo [^>]*ngpus="\([0-9]*\)".*/\1/p' "$f" | head -n 1)
    # The repository's schedules up to 512 MiB, the shared corpus to 128 MiB (suite time).
    case $f in "$CS_SRCDIR"/*) max=512M ;; *) max=128M ;; esac
    compare "$(basename "$f")" "$g" "$f" -b 32M -e $max -f 4
done
# A ring whose credit stalls take 7 iterations to settle (the second recorded replay).
compare "gen ring allgather 16 Simple" 16 --gen ring:gpus=16,coll=allgather,protocol=Simple \
    -b 4G -e 4G
# A ring over 8 DGX nodes: threadblocks that resume at one instant run in an order that varies
# from one iteration to the next, so a wait of no duration is recorded in some and not in others;
# the comparison of iterations leaves those out (nothing else in the replay depends on that order).
# With the MSCCL executor's dependency wait (cs.dep_s) these rings do not settle within the short
# replays (README Known limits: the full replay runs, the same numbers); without it they must.
"$cs" platform dgx-a100 --nodes 8 -o "$tmp/dgx8.xml"
compare "gen ring 64 LL over 8 nodes" "$tmp/dgx8.xml" --gen ring:gpus=64,protocol=LL -b 256M -e 256M
# It never settles: the short replays give way to the full replay.
grep -q 'extrapolated from' "$tmp/x.err" &&
    { echo "FAIL: the 64-GPU ring over 8 nodes with its dependency wait was extrapolated" >&2; rc=1; }
compare "gen ring 64 LL over 8 nodes, no dependency wait" "$tmp/dgx8.xml" \
    --gen ring:gpus=64,protocol=LL -b 256M -e 256M --set cs.dep_s=0
grep -q 'extrapolated from' "$tmp/x.err" ||
    { echo "FAIL: the 64-GPU ring over 8 nodes was not extrapolated" >&2; rc=1; }
# A ring over 16 DGX nodes: too many events per iteration to compare 8 iterations back.
"$cs" platform dgx-a100 --nodes 16 -o "$tmp/dgx16.xml"
compare "gen ring 128 LL over 16 nodes" "$tmp/dgx16.xml" --gen ring:gpus=128,protocol=LL \
    -b 128M -e 128M --set cs.dep_s=0
grep -q 'extrapolated from [0-9]* iterations' "$tmp/x.err" ||
    { echo "FAIL: the 128-GPU ring over 16 nodes was not extrapolated" >&2; rc=1; }
# With its dependency wait it does not settle: its first and medium replays have enough events to
# stop as soon as a pair they need differs, and the full replay gives the same numbers.
compare "gen ring 128 LL over 16 nodes, dependency wait" "$tmp/dgx16.xml" \
    --gen ring:gpus=128,protocol=LL -b 128M -e 128M
grep -q 'extrapolated from' "$tmp/x.err" &&
    { echo "FAIL: the 128-GPU ring over 16 nodes with its dependency wait was extrapolated" >&2; rc=1; }
# At 1 GiB (8M calls, a long replay) the full replay starts beside the short ones when the
# process may use two CPUs: stopped where they settle, taken where they do not; the same
# numbers as without it (on one CPU, taskset).
if [ "$(nproc)" -ge 2 ]; then
    for dep in "--set cs.dep_s=0" ""; do
        # shellcheck disable=SC2086 # $dep is an option and its argument, or nothing
        compare "gen ring 128 LL over 16 nodes, 1 GiB $dep" "$tmp/dgx16.xml" \
            --gen ring:gpus=128,protocol=LL -b 1G -e 1G $dep
        grep -q 'beside' "$tmp/x.err" ||
            { echo "FAIL: 1 GiB $dep: no full replay beside the short ones" >&2; rc=1; }
        cp "$tmp/x.csv" "$tmp/two.csv"
        # shellcheck disable=SC2086
        taskset -c 0 "$cs" predict --gen ring:gpus=128,protocol=LL -b 1G -e 1G $dep \
            --platform "$tmp/dgx16.xml" --format csv --verbose >"$tmp/one.csv" 2>"$tmp/one.err"
        grep -q 'beside' "$tmp/one.err" &&
            { echo "FAIL: 1 GiB $dep on one CPU: a full replay beside the short ones" >&2; rc=1; }
        cmp -s "$tmp/two.csv" "$tmp/one.csv" ||
            { echo "FAIL: 1 GiB $dep: another CSV on one CPU" >&2; rc=1; }
    done
    grep -q 'extrapolated from' "$tmp/one.err" &&
        { echo "FAIL: the 128-GPU ring at 1 GiB with its dependency wait was extrapolated" >&2; rc=1; }
else
    echo "extrapolate.sh: one CPU, the full replay beside the short ones not tried"
fi
echo "extrapolate.sh: $nrows sizes compared, $nx extrapolated, $nshort from 5 iterations"
[ "$nx" -gt 0 ] || { echo "FAIL: no size was extrapolated" >&2; rc=1; }
[ "$nshort" -gt 0 ] || { echo "FAIL: no size was extrapolated from the first replay" >&2; rc=1; }
exit $rc
