#!/bin/sh
# platform_cli.sh: every `collsim platform` family writes a file that SimGrid loads and predict
# runs on; --set reaches the file and the prediction; bad options exit 2.
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
cs="$builddir/collsim"
data="$srcdir/tests/data/msccl-xml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

expect() { # WANT_RC DESCRIPTION CMD...
    want=$1 what=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: $what: exit $rc, want $want"
        cat "$tmp/err"
        fail=$((fail + 1))
    fi
}

ring4="$data/simple_allreduce_ring.4gpu.1inst.xml"
a2a8="$data/alltoall_allpairs.8gpu.1inst.LL128.xml"
expect 0 "a100-pcie-4gpu" "$cs" platform a100-pcie-4gpu -o "$tmp/p4.xml"
expect 0 "predict on a100-pcie-4gpu" "$cs" predict "$ring4" --platform "$tmp/p4.xml" -b 1M -e 1M
expect 0 "a100-pcie-nvbridge" "$cs" platform a100-pcie-nvbridge -o "$tmp/nvb.xml"
expect 0 "predict on nvbridge" "$cs" predict "$ring4" --platform "$tmp/nvb.xml" -b 1M -e 1M
expect 0 "a100-hier 4x2 over net" "$cs" platform a100-hier --rows 4 --columns 2 --between net -o "$tmp/h.xml"
expect 0 "predict on a100-hier net" "$cs" predict "$a2a8" --platform "$tmp/h.xml" -b 1M -e 1M
expect 0 "ndv4 2 nodes" "$cs" platform ndv4 --nodes 2 -o "$tmp/dgx2.xml"
expect 0 "predict on dgx 2 nodes" "$cs" predict "$a2a8" --platform "$tmp/dgx2.xml" -b 1M -e 1M
grep -q 'cs.class" value="net"' "$tmp/dgx2.xml" || { echo "FAIL: dgx 2 nodes has no net link"; fail=$((fail + 1)); }
expect 0 "predict on committed dgx-a100" "$cs" predict "$a2a8" --platform "$srcdir/platforms/dgx-a100.xml" -b 1M -e 1M

# --set reaches the file and slows the prediction down.
expect 0 "--set" "$cs" platform a100-pcie-4gpu --set cs.link_Bps.pcie=1e9 -o "$tmp/slow.xml"
grep -q 'bandwidth="1e+09Bps"' "$tmp/slow.xml" || { echo "FAIL: --set did not change the link"; fail=$((fail + 1)); }
grep -q 'id="cs.link_Bps.pcie" value="1e+09"' "$tmp/slow.xml" || { echo "FAIL: --set did not change the prop"; fail=$((fail + 1)); }
fast=$("$cs" predict "$ring4" --platform "$tmp/p4.xml" -b 4M -e 4M --format csv | sed -n 2p | cut -d, -f4)
slow=$("$cs" predict "$ring4" --platform "$tmp/slow.xml" -b 4M -e 4M --format csv | sed -n 2p | cut -d, -f4)
awk -v f="$fast" -v s="$slow" 'BEGIN { exit !(s > 2 * f) }' || { echo "FAIL: slower PCIe did not slow the ring ($fast vs $slow us)"; fail=$((fail + 1)); }
# predict --set does the same without a new file.
slow2=$("$cs" predict "$ring4" --platform "$tmp/p4.xml" -b 4M -e 4M --format csv --set cs.tb_Bps.Simple=1e9 | sed -n 2p | cut -d, -f4)
awk -v f="$fast" -v s="$slow2" 'BEGIN { exit !(s > 2 * f) }' || { echo "FAIL: predict --set had no effect ($fast vs $slow2 us)"; fail=$((fail + 1)); }

expect 2 "unknown family" "$cs" platform a100-nope
expect 2 "--nodes overflow" "$cs" platform ndv4 --nodes 99999999999
grep -q "out of range" "$tmp/err" || { echo "FAIL: --nodes overflow: $(cat "$tmp/err")"; fail=$((fail + 1)); }
expect 2 "--set without a value" "$cs" platform ndv4 --set
grep -q "option '--set' needs a value" "$tmp/err" || { echo "FAIL: --set message: $(cat "$tmp/err")"; fail=$((fail + 1)); }
# attached values and options before the family write the same file
expect 0 "attached values" "$cs" platform --nodes=2 ndv4 -o"$tmp/dgx2b.xml"
cmp -s "$tmp/dgx2.xml" "$tmp/dgx2b.xml" || { echo "FAIL: --nodes=2 -oFILE differs"; fail=$((fail + 1)); }
expect 2 "unknown --set key" "$cs" platform a100-hier --set cs.nope=1
expect 2 "negative --set value" "$cs" platform a100-hier --set cs.launch_s=-1
expect 2 "--rows on dgx" "$cs" platform dgx-a100 --rows 2
expect 2 "odd nvbridge" "$cs" platform a100-pcie-nvbridge --gpus-per-node 3
expect 2 "too few GPUs" "$cs" predict "$a2a8" --platform "$tmp/p4.xml"
expect 2 "no platform" "$cs" predict "$ring4"
expect 2 "bad size" "$cs" predict "$ring4" --platform "$tmp/p4.xml" -b 1X
expect 2 "bad datatype" "$cs" predict "$ring4" --platform "$tmp/p4.xml" -d int7
expect 2 "platform not XML" "$cs" predict "$ring4" --platform "$ring4"
expect 1 "deadlock exits 1" "$cs" predict "$data/allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml" --platform "$tmp/p4.xml" --protocol Simple -b 16M -e 16M
grep -q "wait-for cycle" "$tmp/out" || { echo "FAIL: no deadlock report"; fail=$((fail + 1)); }
# Platforms are checked before SimGrid sees them: FILE:LINE and the value for a zero bandwidth,
# a negative latency, a bad host speed; the GPU pair for a missing route (no abort, no silently
# unchanged prediction).
pcie4="$srcdir/platforms/a100-pcie-4gpu.xml"
badplat() { # DESCRIPTION MESSAGE SED-EXPRESSION
    sed "$3" "$pcie4" >"$tmp/bad.xml"
    expect 2 "$1" "$cs" predict --gen ring:gpus=4,channels=1 --platform "$tmp/bad.xml" -b 1M -e 1M
    grep -qF -- "$2" "$tmp/err" || { echo "FAIL: $1: $(cat "$tmp/err")"; fail=$((fail + 1)); }
}
badplat "zero bandwidth" "bad.xml:64: link 'gpu0_pcie': bandwidth=\"0Bps\" must be a positive" \
    's/id="gpu0_pcie" bandwidth="[^"]*"/id="gpu0_pcie" bandwidth="0Bps"/'
badplat "negative latency" "link 'gpu1_pcie': latency=\"-1us\" must be a non-negative" \
    's/id="gpu1_pcie" bandwidth="\([^"]*\)" latency="[^"]*"/id="gpu1_pcie" bandwidth="\1" latency="-1us"/'
badplat "host speed" "bad.xml:61: host 'gpu1': speed=\"abc\" must be a positive" \
    's/<host id="gpu1" speed="[^"]*"/<host id="gpu1" speed="abc"/'
badplat "no route" "bad.xml: no route from gpu2 to gpu3" \
    '/<route src="gpu2" dst="gpu3">/,/<\/route>/d'
head -n 1 "$srcdir/platforms/a100-hier-4x2.xml" | grep -q '<?xml' || { echo "FAIL: committed platform"; fail=$((fail + 1)); }
echo "$fail failed"
[ "$fail" -eq 0 ]
