#!/bin/sh
# gen_hier_scan.sh: the default hierarchical AllReduce finishes (status ok) at every size from
# 1 KiB to 4 GiB in x4 steps for LL, LL128 and Simple on the a100-hier platforms, at 8 and 16 GPUs,
# verify accepts it, and v1 (the previous corrected layout, variant=v1) still deadlocks above 1 MiB.
# At 64 GPUs too, to 4 GiB: the sizes of 10 loop iterations and more extrapolate from a recorded
# replay of 5 iterations, one for all whose iterations match (predict.c). About 30 s of CPU (80 s on a
# 2-core machine loaded 7 deep).
set -u
cs=${CS_BUILDDIR:-.}/collsim
src=${CS_SRCDIR:-..}
. "${CS_SRCDIR:-..}/tests/lib.sh"

# scan GPUS PLATFORM PROTOCOL MIN MAX: predict MIN..MAX x4; every size must be ok
scan() {
    "$cs" predict --gen "hierarchical:gpus=$1,protocol=$3" --platform "$src/platforms/$2" \
        -b "$4" -e "$5" -f 4 >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 0 ] || fail "$1 GPUs $3 $4 to $5: predict exited $rc: $(head -c 300 "$tmp/err")"
    want=$(awk -v a="$4" -v b="$5" 'function bytes(m, u) { u = substr(m, length(m));
        return substr(m, 1, length(m) - 1) * (u == "G" ? 1073741824 : u == "M" ? 1048576 : 1024) }
        BEGIN { n = 0; for (s = bytes(a); s <= bytes(b); s *= 4) n++; print n }')
    got=$(awk '/^ *[0-9]/ && $NF == "ok" { n++ } END { print n + 0 }' "$tmp/out")
    [ "$got" -eq "$want" ] || fail "$1 GPUs $3 $4 to $5: $got of $want sizes ok: $(grep -v ' ok$' "$tmp/out" | grep '^ *[0-9]' | head -3)"
}

for proto in LL LL128 Simple; do
    scan 8 a100-hier-4x2.xml $proto 1K 4G
    scan 16 a100-hier-8x2.xml $proto 1K 4G
done
# A sanitized build (CS_SCAN_MAX set) spends some 6 s starting each 64-GPU replay: there only the
# first size of two iterations past maxAllowedCount 1.
if [ -n "${CS_SCAN_MAX:-}" ]; then
    scan 64 a100-hier-32x2.xml LL 4M 4M
    scan 64 a100-hier-32x2.xml LL128 64M 64M
    scan 64 a100-hier-32x2.xml Simple 256M 256M
else
    scan 64 a100-hier-32x2.xml LL 1K 4G
    scan 64 a100-hier-32x2.xml LL128 1K 4G
    scan 64 a100-hier-32x2.xml Simple 1K 4G
fi

for g in 8 16 64; do
    "$cs" gen hierarchical --gpus $g --protocol LL -o "$tmp/h.xml" 2>"$tmp/err" ||
        fail "gen $g GPUs: $(cat "$tmp/err")"
    "$cs" verify "$tmp/h.xml" >"$tmp/out" 2>&1 || fail "verify $g GPUs: $(head -c 300 "$tmp/out")"
done

# v1 deadlocks on the credits at 4 MiB (runtime-audit.md 2.4): the scan can fail
"$cs" predict --gen "hierarchical:gpus=8,protocol=LL,variant=v1" \
    --platform "$src/platforms/a100-hier-4x2.xml" -b 4M -e 4M >"$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q 'deadlock$' "$tmp/out" ||
    fail "v1 at 4 MiB: exit $rc, expected 1 and deadlock: $(tail -3 "$tmp/out")"

[ "$fails" -eq 0 ] || exit 1
exit 0
