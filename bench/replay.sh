#!/bin/sh
# bench/replay.sh: replay speed (simulated primitive calls per wall-clock second, with and without
# the steady-state extrapolation) and peak memory of `collsim predict` on the hierarchical
# AllReduce and a ring at 1 MiB and 1 GiB, and the wall time of sweeps over sizes beside their
# largest size alone, written to results/perf.md. Not a test: figures depend on the machine and its load.
# Usage: bench/replay.sh [COLLSIM] [SHARED_DATA_DIR]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cs=${1:-$top/_build/collsim}
shared=${2:-${CS_SHARED_DATA:-$top/../shared/data}}/msccl-xml
out="$top/results/perf.md"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# name|gpus|schedule source (a file, or --gen SPEC)|protocol
cases=""
have_gen=0
if "$cs" help gen >/dev/null 2>&1; then
    have_gen=1
    for g in 8 16 64; do
        for p in LL Simple; do
            cases="$cases
hierarchical $g GPUs (gen)|$g|--gen hierarchical:gpus=$g,instances=1,columns=2,protocol=$p|$p"
        done
    done
else
    for g in 8 16; do
        for p in LL Simple; do
            f="$shared/fixed-example/allreduce_a100_pcie_hierarchical_fixed.${g}gpu.1inst.$p.xml"
            [ -f "$f" ] && cases="$cases
hierarchical_fixed $g GPUs (msccl-tools)|$g|$f|$p"
        done
    done
fi
f="$shared/simple_allreduce_ring.8gpu.1inst.xml"
[ -f "$f" ] && cases="$cases
ring 8 GPUs (msccl-tools, never deadlocks)|8|$f|LL"

{
    echo "# Replay speed"
    echo
    echo "Written by \`bench/replay.sh\` with $("$cs" --version | head -1) on $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs ($(uname -m)), load average $(cut -d' ' -f1-3 /proc/loadavg)."
    echo "Each row is one \`collsim predict ... -b SIZE -e SIZE --verbose\` on an a100-hier platform"
    echo "with the schedule's GPU count (2 columns). *calls* are primitive calls (and local ops)"
    echo "simulated, *transfers* the flows put on SimGrid's network model; *calls/s* divides calls by"
    echo "the wall time of \`simgrid_run\` in the simulating child; *child RSS* is that child's peak"
    echo "resident memory (getrusage), *max RSS* the peak of the whole command (\`/usr/bin/time -v\`)."
    echo "A deadlocked size stops at the deadlock, so its calls are those simulated until then"
    echo "(the generated hierarchical schedules are the default layout, which completes at every"
    echo "size; msccl-tools' corrected schedules, used without the generators, deadlock at 1 GiB)."
    echo "*replay* is \`full\` (every loop iteration, \`--no-extrapolate\` or a size whose short"
    echo "replays do not settle) or \`extrap N\`: the longest short replay N iterations (5: the first"
    echo "recorded replay settled; 19 to 26: the second; 8: the medium one that replaces the second"
    echo "when that one would keep too many events; 18: the fallback's replays of 2 to 18), the"
    echo "rest extrapolated; then *calls* are the extrapolated calls and *calls/s* effective calls per"
    echo "second of all the short replays' simgrid_run wall. \`, direct\` after it: the replay did"
    echo "without SimGrid's engine (its own clock and events and SimGrid's max-min shares of the"
    echo "links, the same times), and the wall is that replay's."
    echo
    if [ "$have_gen" -eq 0 ]; then
        echo "The generators were not available: the 8- and 16-GPU schedules come from the shared"
        echo "corpus (\`fixed-example/\`); there is no 64-GPU hierarchical schedule there, so no 64-GPU row."
        echo
    fi
    echo "| schedule | protocol | size | replay | status | calls | transfers | simgrid_run wall (s) | calls/s | child RSS (MiB) | max RSS (MiB) | command wall (s) |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$out"

# measure PREDICT-ARGS...: one `collsim predict ... --verbose` under /usr/bin/time (stopped after
# $lim seconds when lim is set); sets calls, xfers, wall (simgrid_run), rss (child), status, mode
# (extrap N or full), maxrss, cwall, rate.
measure() {
    # shellcheck disable=SC2086
    /usr/bin/time -v -o "$tmp/time" ${lim:+timeout $lim} "$cs" predict "$@" --verbose >/dev/null 2>"$tmp/err"
    line=$(grep '^collsim: [0-9]* bytes: .* calls, ' "$tmp/err" | tail -n 1)
    # refused (an error exit, not the time limit's): its first message, shortened, is the status
    ex=$(sed -n 's/.*Exit status: //p' "$tmp/time")
    why=$(grep '^collsim: ' "$tmp/err" | grep -v '^collsim: [0-9]* bytes: \|^collsim: warning: ' | head -n 1 | sed 's/^collsim: //' | tr '|' '/' | cut -c1-90)
    case "${ex:-0}" in 0 | 124 | 137) why="" ;; esac
    [ -n "$line" ] || [ -z "$why" ] || line="collsim: - bytes: - calls, - transfers, - s wall, - KiB peak RSS, refused"
    [ -n "$line" ] || line="collsim: - bytes: - calls, - transfers, - s wall, - KiB peak RSS, not finished in ${lim:-?} s"
    calls=$(echo "$line" | sed -n 's/.* \([0-9]*\) calls.*/\1/p')
    xfers=$(echo "$line" | sed -n 's/.* \([0-9]*\) transfers.*/\1/p')
    wall=$(echo "$line" | sed -n 's/.* \([0-9.]*\) s wall.*/\1/p')
    rss=$(echo "$line" | sed -n 's/.* \([0-9]*\) KiB peak RSS.*/\1/p')
    status=$(echo "$line" | sed -n 's/.*RSS, \(not finished in [0-9?]* s\).*/\1/p;t;s/.*RSS, \([a-z]*\).*/\1/p')
    [ "$status" != refused ] || status="refused: $why"
    mode=$(echo "$line" | sed -n 's/.*extrapolated from \([0-9]*\) iterations.*/extrap \1/p')
    mode=${mode:-full}
    case "$line" in *"(direct: "*) mode="$mode, direct" ;; esac
    fold=$(grep '^collsim: [0-9]* bytes: folded: ' "$tmp/err" | tail -n 1 | sed -n 's/.*ranks shifted by \([0-9]*\) .*a group of \([0-9]*\).*/by \1 (x\2)/p')
    fold=${fold:-no}
    case "$status" in refused:*) fold=- mode=- ;; esac
    maxrss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time" | awk '{ printf "%.1f", $1 / 1024 }')
    cwall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time")
    rate=$(awk -v c="$calls" -v w="$wall" 'BEGIN { if (w > 0) printf "%.0f", c / w; else print "-" }')
    calls=${calls:--} xfers=${xfers:--} wall=${wall:--} rss=${rss:-0}
}

printf '%s\n' "$cases" | while IFS='|' read -r name g src proto; do
    [ -n "$name" ] || continue
    plat="$tmp/plat$g.xml"
    [ -f "$plat" ] || "$cs" platform a100-hier --rows $((g / 2)) --columns 2 -o "$plat"
    for run in "1M" "1G" "1G --no-extrapolate"; do
        size=${run%% *}
        # shellcheck disable=SC2086
        measure $src --platform "$plat" --protocol "$proto" -b $run -e "$size"
        echo "| $name | $proto | $size | $mode | $status | $calls | $xfers | $wall | $rate | $(awk -v r="$rss" 'BEGIN{printf "%.1f", r/1024}') | $maxrss | $cwall |" >>"$out"
        echo "$name $proto $size: $status, $calls calls in $wall s" >&2
    done
done

# Many sizes: an 8-GPU ring in LL on dgx-a100 from 1 KiB to 512 MiB by factors of 2 (20 sizes),
# with and without extrapolation, and the 64-GPU hierarchical LL from 1 MiB to 1 GiB (11 sizes),
# each beside its largest size alone.
{
    echo
    echo "| sweep | sizes | replay | command wall (s) | largest size alone (s) |"
    echo "|---|---|---|---|---|"
} >>"$out"
# sweep NAME FIRST LAST [PREDICT-ARGS...]
sweep() {
    name=$1
    first=$2
    last=$3
    shift 3
    /usr/bin/time -f %e -o "$tmp/time" "$cs" predict "$@" -b "$first" -e "$last" --format csv \
        >"$tmp/rows" 2>/dev/null
    /usr/bin/time -f %e -o "$tmp/time1" "$cs" predict "$@" -b "$last" -e "$last" --format csv \
        >/dev/null 2>&1
    x=extrapolated
    case " $* " in *" --no-extrapolate "*) x=--no-extrapolate ;; esac
    echo "| $name | $(($(wc -l <"$tmp/rows") - 1)) ($first to $last) | $x | $(cat "$tmp/time") | $(cat "$tmp/time1") |" >>"$out"
}
ring="--gen ring:gpus=8,channels=1,protocol=LL --platform $top/platforms/dgx-a100.xml"
# shellcheck disable=SC2086
sweep "8-GPU ring LL, dgx-a100" 1K 512M $ring
# shellcheck disable=SC2086
sweep "8-GPU ring LL, dgx-a100" 1K 512M $ring --no-extrapolate
if [ "$have_gen" -eq 1 ]; then
    sweep "64-GPU hierarchical LL, a100-hier-32x2" 1M 1G --gen hierarchical:gpus=64,protocol=LL \
        --platform "$top/platforms/a100-hier-32x2.xml"
fi

# Large scale (BENCH_LARGE=1, minutes): the 512-GPU ring on 64 DGX nodes, and the 256- and 1024-GPU
# hierarchical grids (Hopper's 132 SMs: 124 threadblocks per GPU at 32 x 32 do not fit an A100's
# 108).
if [ "${BENCH_LARGE:-0}" = 1 ] && [ "$have_gen" -eq 1 ]; then
    "$cs" platform dgx-a100 --nodes 64 -o "$tmp/d512.xml"
    "$cs" platform a100-hier --rows 32 --columns 32 --gpu h100 -o "$tmp/h1024.xml"
    "$cs" platform a100-hier --rows 16 --columns 16 --gpu h100 -o "$tmp/h256.xml"
    {
        echo
        echo "*fold*: the rank shift the replay was folded by (and the group's order: ranks replayed"
        echo "are 1/order of all), \`no\` when no symmetry was proven or with \`--no-fold\`; calls are"
        echo "those of every rank either way."
        echo
        echo "| large case | size | fold | replay | status | calls | simgrid_run wall (s) | calls/s | max RSS (MiB) | command wall (s) |"
        echo "|---|---|---|---|---|---|---|---|---|---|"
    } >>"$out"
    lim=${BENCH_LIMIT:-1200} # seconds a large case may take
    "$cs" platform dgx-a100 --nodes 128 -o "$tmp/d1024.xml"
    # 4096 GPUs: the platform routed by zones, the ring written by its representatives (a
    # collsim without them refuses, and its row says why)
    "$cs" platform dgx-a100 --nodes 512 -o "$tmp/d4096.xml" 2>/dev/null || :
    for c in "512-GPU ring LL, 64 DGX nodes|ring:gpus=512,channels=1,instances=1,protocol=LL|$tmp/d512.xml" \
        "512-GPU ring LL, 64 DGX nodes, --no-fold|ring:gpus=512,channels=1,instances=1,protocol=LL|$tmp/d512.xml|--no-fold" \
        "512-GPU ring LL, 64 DGX nodes, --no-fold --no-direct|ring:gpus=512,channels=1,instances=1,protocol=LL|$tmp/d512.xml|--no-fold --no-direct" \
        "1024-GPU ring Simple, 128 DGX nodes|ring:gpus=1024,protocol=Simple|$tmp/d1024.xml" \
        "512-GPU ring Simple, 64 DGX nodes|ring:gpus=512,protocol=Simple|$tmp/d512.xml" \
        "256-GPU hierarchical LL, 16 x 16 (H100)|hierarchical:gpus=256,columns=16,sms=132,protocol=LL|$tmp/h256.xml" \
        "1024-GPU hierarchical LL, 32 x 32 (H100)|hierarchical:gpus=1024,columns=32,sms=132,protocol=LL|$tmp/h1024.xml" \
        "1024-GPU hierarchical LL, 32 x 32 (H100), --no-fold|hierarchical:gpus=1024,columns=32,sms=132,protocol=LL|$tmp/h1024.xml|--no-fold" \
        "4096-GPU ring Simple, 512 DGX nodes|ring:gpus=4096,protocol=Simple|$tmp/d4096.xml"; do
        name=${c%%|*}
        rest=${c#*|}
        spec=${rest%%|*}
        rest=${rest#*|}
        plat=${rest%%|*}
        opt=""
        [ "$plat" = "$rest" ] || opt=${rest#*|}
        for size in 1M 1G; do
            # unfolded, the 512-GPU ring at 1 GiB replays 33M calls in full (about 30 s direct);
            # on SimGrid's engine minutes: 1 MiB only unless BENCH_UNFOLDED_1G=1
            case "$opt" in
            *--no-direct*) [ "$size" = 1G ] && [ "${BENCH_UNFOLDED_1G:-0}" != 1 ] && continue ;;
            esac
            # shellcheck disable=SC2086
            measure --gen "$spec" --platform "$plat" -b $size -e $size $opt
            echo "| $name | $size | $fold | $mode | $status | $calls | $wall | $rate | $maxrss | $cwall |" >>"$out"
            echo "$name $size: $status, $calls calls in $wall s" >&2
        done
    done
fi

# Reading large schedules (BENCH_LARGE=1): the 1024-GPU ring and 32 x 32 hierarchical AllReduce
# written by gen, read by `collsim fmt` (the reader alone: the schedule is printed back) and by
# `collsim verify` (the reader, then every check), each under /usr/bin/time.
if [ "${BENCH_LARGE:-0}" = 1 ] && [ "$have_gen" -eq 1 ]; then
    "$cs" gen ring --gpus 1024 --protocol LL -o "$tmp/r1024.xml" 2>/dev/null
    "$cs" gen hierarchical --gpus 1024 --columns 32 --sms 132 --protocol LL -o "$tmp/h1024.xml" 2>/dev/null
    {
        echo
        echo "| schedule read | file (MB) | steps | command | wall (s) | max RSS (MiB) | over fmt (B a step) |"
        echo "|---|---|---|---|---|---|---|"
    } >>"$out"
    for c in "1024-GPU ring LL|$tmp/r1024.xml" "1024-GPU hierarchical LL, 32 x 32|$tmp/h1024.xml"; do
        name=${c%%|*}
        f=${c#*|}
        mb=$(awk -v b="$(wc -c <"$f")" 'BEGIN { printf "%.0f", b / 1e6 }')
        steps=$(grep -c '<step ' "$f")
        for cmd in fmt verify; do
            /usr/bin/time -v -o "$tmp/time" "$cs" $cmd "$f" >/dev/null 2>&1
            kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time")
            maxrss=$(awk -v k="$kb" 'BEGIN { printf "%.1f", k / 1024 }')
            cwall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time")
            # verify's checks (the structure's index and orders, then the symbolic execution)
            # beside the reader alone: the peak over fmt's, per step
            over=-
            [ "$cmd" = fmt ] && fmtkb=$kb
            [ "$cmd" = verify ] && over=$(awk -v a="$kb" -v b="$fmtkb" -v n="$steps" 'BEGIN { printf "%.1f", (a - b) * 1024 / n }')
            echo "| $name | $mb | $steps | $cmd | $cwall | $maxrss | $over |" >>"$out"
            echo "$name $cmd: $cwall, $maxrss MiB" >&2
        done
    done
fi

{
    echo
    echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg). The machine is shared: other jobs"
    echo "running at the same time slow the figures down (wall times vary by 2x or more)."
    echo
    echo "Reproduce: build (\`./quickstart test\` or \`_build\`), then \`bench/replay.sh [_build/collsim] [../shared/data]\`"
    echo "(\`BENCH_LARGE=1\` adds the 256-, 512- and 1024-GPU cases, minutes each)."
    echo "For scale, the SimGrid prototype of \`reference/simgrid.md\` ran about 250k transfers/s with 64"
    echo "actors and 35k/s with 4096 on a similar 2-core machine; collsim drives every threadblock"
    echo "from one actor and does more per call (credits per slot, flags, clock reads, cost timers)."
} >>"$out"
echo "wrote $out" >&2
