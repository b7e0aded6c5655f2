#!/bin/sh
# platform_gpu.sh: the Hopper families and virtual-rank platforms from the command line: they load
# and predict; more bandwidth predicts faster large sizes; ranks on one GPU share its SMs (the
# 112-threadblock all-to-all hangs on an A100's 108 SMs, runs on an H200's 132); bad
# combinations exit 2.
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
cs="$builddir/collsim"
data="$srcdir/tests/data/msccl-xml"
. "$srcdir/tests/lib.sh"
# time_us CSV: the time of the last row of a predict CSV.
time_us() { tail -n 1 "$1" | cut -d, -f4; }

a2a8="$data/alltoall_allpairs.8gpu.1inst.LL128.xml"
ring4="$data/simple_allreduce_ring.4gpu.1inst.xml"
for fam in hgx-h100 hgx-h200 h100-pcie h100-pcie-nvbridge; do
    expect 0 "$cs" platform "$fam" -o "$tmp/$fam.xml"
    grep -q "written by \`collsim platform $fam\`" "$tmp/$fam.xml" ||
        fail "$fam: header does not name the family"
done
grep -q 'id="cs.gpu_sms" value="132"' "$tmp/hgx-h100.xml" || fail "hgx-h100 SMs"
grep -q 'id="cs.gpu_sms" value="114"' "$tmp/h100-pcie.xml" || fail "h100-pcie SMs"
grep -q '8 H200 SXM on NVSwitch' "$tmp/hgx-h200.xml" || fail "hgx-h200 description"

# NVLink4 against NVLink3 on the same NVSwitch node: the 1 GiB all-to-all is faster on H100.
expect 0 "$cs" platform dgx-a100 -o "$tmp/a100.xml"
expect 0 "$cs" predict "$a2a8" --platform "$tmp/a100.xml" -b 256M -e 256M --format csv
cp "$tmp/out" "$tmp/a100.csv"
expect 0 "$cs" predict "$a2a8" --platform "$tmp/hgx-h100.xml" -b 256M -e 256M --format csv
cp "$tmp/out" "$tmp/h100.csv"
a=$(time_us "$tmp/a100.csv") h=$(time_us "$tmp/h100.csv")
awk -v a="$a" -v h="$h" 'BEGIN { exit !(h < a) }' ||
    fail "hgx-h100 ($h us) not faster than dgx-a100 ($a us) at 256 MiB"

# Virtual ranks: the all-to-all's 8 x 14 = 112 threadblocks share one GPU.
expect 0 "$cs" platform virtual --ranks 8 -o "$tmp/va.xml"
expect 1 "$cs" predict "$a2a8" --platform "$tmp/va.xml" -b 64K -e 64K
grep -q "ranks 0-7 share one GPU (cs.ranks_per_gpu 8) and have 112 threadblocks; at most 108" "$tmp/out" ||
    { fail "virtual a100 hang message"; cat "$tmp/out"; }
expect 0 "$cs" platform virtual --gpu h200 --ranks 8 -o "$tmp/vh.xml"
expect 0 "$cs" predict "$a2a8" --platform "$tmp/vh.xml" -b 64K -e 16M -f 16
# On one rank per GPU the same A100 runs it (14 tbs per GPU): residency is per physical GPU.
expect 0 "$cs" predict "$a2a8" --platform "$tmp/a100.xml" -b 64K -e 64K
# A 4-rank ring on one GPU: twice the ranks in the sweep key, and the ring runs.
expect 0 "$cs" platform virtual --ranks 4 -o "$tmp/v4.xml"
expect 0 "$cs" predict "$ring4" --platform "$tmp/v4.xml" -b 1M -e 1M
# No LL128 warning: ranks on one GPU cross no PCIe.
expect 0 "$cs" predict "$data/allgather_a100_pcie.4gpu.1inst.LL128.xml" --platform "$tmp/v4.xml" -b 1M -e 1M
grep -q "LL128 over a path" "$tmp/err" "$tmp/out" && fail "LL128 warning on one GPU"
# More memory bandwidth, faster: the Simple ring at 64 MiB on H200 against A100 (virtual).
expect 0 "$cs" platform virtual --gpu h200 --ranks 4 -o "$tmp/v4h.xml"
expect 0 "$cs" predict "$ring4" --platform "$tmp/v4.xml" -b 64M -e 64M --format csv
cp "$tmp/out" "$tmp/va.csv"
expect 0 "$cs" predict "$ring4" --platform "$tmp/v4h.xml" -b 64M -e 64M --format csv
a=$(time_us "$tmp/va.csv") h=$(time_us "$tmp/out")
awk -v a="$a" -v h="$h" 'BEGIN { exit !(h < a) }' ||
    fail "virtual h200 ($h us) not faster than virtual a100 ($a us)"

# Bad combinations.
expect 2 "$cs" platform dgx-a100 --gpu h100-pcie
grep -q "is not a GPU of the dgx-a100 family" "$tmp/err" || fail "gpu_fits message"
expect 2 "$cs" platform hgx-h100 --gpu h200
expect 2 "$cs" platform dgx-a100 --gpu v100
expect 2 "$cs" platform dgx-a100 --ranks 4
expect 2 "$cs" platform virtual --ranks 0
# --set wins over the GPU's prior, whatever the order.
expect 0 "$cs" platform --set cs.gpu_sms=100 hgx-h100 -o "$tmp/s.xml"
grep -q 'id="cs.gpu_sms" value="100"' "$tmp/s.xml" || fail "--set lost to the GPU prior"

[ "$fails" -eq 0 ] && echo "platform_gpu: all passed"
[ "$fails" -eq 0 ]
