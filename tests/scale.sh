#!/bin/sh
# scale.sh: 512 GPUs. A 512-GPU ring AllReduce (tbs of 512 steps, over both runtimes' limits) is
# written with a warning, verify under the executor refuses it naming the tb, the count and the
# limit, and predict simulates it at one small size as a what-if, status ok, with the warning, on a
# 64-node dgx-a100 (routed by zones, a zone per node: more than 256 GPUs). The 1024-GPU platforms are
# written. About 20 s on a loaded 2-core machine.
set -u
cs=${CS_BUILDDIR:-.}/collsim
. "${CS_SRCDIR:-..}/tests/lib.sh"

"$cs" gen ring --gpus 512 --protocol LL -o "$tmp/ring.xml" 2>"$tmp/err" || fail "gen: $(cat "$tmp/err")"
grep -q "warning: gpu 0 tb 0 has 512 steps, over the runtimes' limits of 64 per threadblock" \
    "$tmp/err" || fail "gen's warning: $(cat "$tmp/err")"
"$cs" verify --runtime executor -q "$tmp/ring.xml" >"$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "verify --runtime executor exited $rc, expected 2 (structurally invalid)"
grep -q "rank 0 tb 0 has 512 steps; the runtimes allow at most 64" "$tmp/out" ||
    fail "verify's message: $(head -c 300 "$tmp/out")"

"$cs" platform dgx-a100 --nodes 64 -o "$tmp/dgx.xml" || fail "platform dgx-a100 --nodes 64"
grep -q '<zone id="node63" routing="Full">' "$tmp/dgx.xml" || fail "512 GPUs not routed by zones"
grep -q 'routing="Floyd"' "$tmp/dgx.xml" && fail "512 GPUs routed with Floyd"
"$cs" predict "$tmp/ring.xml" --platform "$tmp/dgx.xml" -b 4K -e 4K >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] || fail "predict exited $rc: $(head -c 300 "$tmp/err")"
grep -q '^ *4096 .* ok$' "$tmp/out" || fail "predict: $(grep -v '^#' "$tmp/out")"
for f in err out; do
    grep -q "warning: gpu 0 tb 0 has 512 steps.*simulated as a what-if" "$tmp/$f" ||
        fail "predict's warning ($f): $(grep warning "$tmp/$f")"
done

for fam in "dgx-a100 --nodes 128" "hgx-h100 --nodes 128" "a100-hier --rows 32 --columns 32" \
    "a100-pcie-net --nodes 1024"; do
    # shellcheck disable=SC2086
    "$cs" platform $fam -o "$tmp/p.xml" 2>"$tmp/err" || fail "platform $fam: $(cat "$tmp/err")"
    [ "$(grep -c '<host id="gpu' "$tmp/p.xml")" -eq 1024 ] || fail "platform $fam: not 1024 GPUs"
done

[ "$fails" -eq 0 ] || exit 1
exit 0
