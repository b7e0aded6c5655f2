#!/bin/sh
# direct.sh: predict replays without SimGrid's engine (--verbose says "direct: without SimGrid's
# engine"), giving each transfer the max-min share of its links SimGrid gives it, and writes the
# CSV of --no-direct to every digit: the 8-GPU rings of one channel of schedules/ on one DGX node,
# and a 128-GPU ring on 16 nodes, folded and not; a ring of four channels (whose channels share
# every link), the 128-GPU ring at 64 MiB (its reduce-scatter and all-gather threadblocks overlap
# across loop iterations on one link), all-pairs and hierarchical schedules (many transfers into
# one GPU's link, two levels of links) and a deadlocking one (the same report). A replay that
# records a timeline (--trace, --stats) stays on SimGrid's engine.
# (Time-independent: no wall clock is looked at.)
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
cs="$CS_BUILDDIR/collsim"
. "$CS_SRCDIR/tests/lib.sh"

dgx="$CS_SRCDIR/platforms/dgx-a100.xml"
"$cs" platform dgx-a100 --nodes 16 -o "$tmp/d128.xml" || exit 1

# check WHAT DIRECT ARGS...: predict ARGS with and without --no-direct gives the same CSV;
# DIRECT (1 or 0) says whether every size must replay direct or none
check() {
    what=$1
    mode=$2
    shift 2
    expect 0 "$cs" predict "$@" --format csv --verbose
    mv "$tmp/out" "$tmp/direct.csv"
    mv "$tmp/err" "$tmp/direct.err"
    expect 0 "$cs" predict "$@" --format csv --no-direct --verbose
    cmp -s "$tmp/out" "$tmp/direct.csv" || {
        fail "$what: CSVs differ with and without --no-direct"
        diff "$tmp/direct.csv" "$tmp/out" >&2
    }
    grep -q "direct: without SimGrid" "$tmp/err" && fail "$what: --no-direct replayed direct"
    sizes=$(grep -c "bytes: .* iterations" "$tmp/direct.err")
    direct=$(grep -c "direct: without SimGrid" "$tmp/direct.err")
    [ "$sizes" -gt 0 ] || fail "$what: no size predicted"
    if [ "$mode" = 1 ]; then
        [ "$direct" -eq "$sizes" ] || fail "$what: $direct of $sizes sizes direct"
    else
        [ "$direct" -eq 0 ] || fail "$what: $direct sizes direct, none expected"
    fi
}

for p in LL LL128 Simple; do
    check "ring 1ch $p" 1 "$CS_SRCDIR/schedules/ring.8gpu.1ch.$p.xml" -p "$dgx" -b 1K -e 1G -f 32
    check "ring 4ch $p" 1 "$CS_SRCDIR/schedules/ring.8gpu.4ch.$p.xml" -p "$dgx" -b 1K -e 1G -f 32
done
# a platform whose links have latency: the replay counts each hop's latency itself
# (cs.link_lat_s), SimGrid's transfers none, and a direct one none either
sed 's/latency="[^"]*"/latency="1e-06s"/g' "$dgx" >"$tmp/lat.xml"
cp "${dgx%.xml}.props" "$tmp/lat.props" 2>/dev/null
check "ring 1ch LL, links of 1 us" 1 "$CS_SRCDIR/schedules/ring.8gpu.1ch.LL.xml" -p "$tmp/lat.xml" \
    -b 1K -e 1G -f 1024
ring="ring:gpus=128,channels=1,instances=1,protocol=LL"
check "128-GPU ring" 1 --gen "$ring" -p "$tmp/d128.xml" -b 1K -e 1M -f 1024
check "128-GPU ring, not folded" 1 --gen "$ring" -p "$tmp/d128.xml" -b 1M -e 1M --no-fold
check "128-GPU ring at 64 MiB" 1 --gen "$ring" -p "$tmp/d128.xml" -b 64M -e 64M
check "128-GPU ring at 64 MiB, not folded" 1 --gen "$ring" -p "$tmp/d128.xml" -b 64M -e 64M --no-fold
hier="$CS_SRCDIR/platforms/a100-hier-4x2.xml"
for p in LL LL128 Simple; do
    check "all-pairs $p" 1 "$CS_SRCDIR/schedules/allpairs.8gpu.1inst.$p.xml" -p "$dgx" -b 1K -e 1G -f 32
    check "hierarchical $p" 1 "$CS_SRCDIR/schedules/hierarchical.8gpu.1inst.$p.xml" -p "$hier" \
        -b 1K -e 1G -f 32
done
check "hierarchical 64 GPUs, 32 x 2" 1 --gen "hierarchical:gpus=64,columns=2,protocol=LL" \
    -p "$CS_SRCDIR/platforms/a100-hier-32x2.xml" -b 1M -e 64M -f 64 --no-extrapolate
# a deadlock: the same exit status and report both ways
seed="$CS_SRCDIR/schedules/hierarchical-seed.8gpu.1inst.LL.xml"
"$cs" predict "$seed" -p "$hier" -b 1G -e 1G --verbose >"$tmp/d.out" 2>"$tmp/d.err"
rd=$?
"$cs" predict "$seed" -p "$hier" -b 1G -e 1G --no-direct >"$tmp/s.out" 2>"$tmp/s.err"
rs=$?
if [ "$rd" != 1 ] || [ "$rs" != 1 ]; then
    fail "deadlock: exit $rd direct, $rs on SimGrid's engine (1 expected)"
fi
cmp -s "$tmp/d.out" "$tmp/s.out" || fail "deadlock: the reports differ"
grep -q "direct: without SimGrid" "$tmp/d.err" || fail "deadlock: not replayed direct"

# a recorded timeline (--trace, --stats) stays on SimGrid's engine: its events at one instant
# come in the engine's order
ring1="$CS_SRCDIR/schedules/ring.8gpu.1ch.LL.xml"
for rec in "--trace $tmp/t.json" --stats; do
    # shellcheck disable=SC2086 # $rec is an option and its argument
    expect 0 "$cs" predict "$ring1" -p "$dgx" -b 1M -e 1M --verbose $rec
    grep -q "direct: without SimGrid" "$tmp/err" && fail "$rec: replayed direct"
done

# the option is documented
expect 0 "$cs" predict --help
grep -q -- "--no-direct" "$tmp/out" || fail "predict --help does not name --no-direct"

[ "$fails" -eq 0 ] || exit 1
echo "direct: the same CSVs with and without SimGrid's engine"
