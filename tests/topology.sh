#!/bin/sh
# topology.sh: `collsim platform from` on what machines say about themselves (tests/data/topology,
# copies of the shared files): each becomes a platform SimGrid loads, on which an 8-GPU ring
# predicts, with --nodes 2 16 GPU hosts (8 for the 4-GPU NC A100 v4); the NDv4 file with --gpu
# a100 predicts as `platform dgx-a100` does, 1 and 2 nodes; the p4d file shares each EFA NIC
# between 2 GPUs; the bad catalogue (topology/bad/EXPECTED) exits with its error at its line;
# `collsim nccl-log`, `gen nccl --log` and predict on a log (--platform, --nccl-log, --compare).
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
cs="$builddir/collsim"
top="$srcdir/tests/data/topology"
. "$srcdir/tests/lib.sh"

p4d="$top/aws-p4d-a100-topo.xml"
p4dlog="$top/awsp4d-efa-2node-ncclinfo-nccl2.9.9.log"
h100log="$top/hgxh100-supermicro-2node-ncclinfo-nccl2.26.2-excerpt.log"
ring8=ring:gpus=8,channels=4,protocol=Simple

hosts() { grep -c '<host id="gpu' "$1"; }

# Every file (or file set) of an A100 or Hopper machine: one node (the logs: their two),
# --nodes 2, and an 8-GPU ring on each.
i=0
while read -r files gpu want1 want2; do
    i=$((i + 1))
    set -- $(echo "$files" | tr + ' ')
    args=""
    for f in "$@"; do args="$args $top/$f"; done
    opt=""
    [ "$gpu" = - ] || opt="--gpu $gpu"
    # shellcheck disable=SC2086
    expect 0 "$cs" platform from $args $opt -o "$tmp/p$i.xml"
    [ "$(hosts "$tmp/p$i.xml")" = "$want1" ] || fail "$files: $(hosts "$tmp/p$i.xml") GPU hosts, not $want1"
    # shellcheck disable=SC2086
    expect 0 "$cs" platform from $args $opt --nodes 2 -o "$tmp/q$i.xml"
    [ "$(hosts "$tmp/q$i.xml")" = "$want2" ] || fail "$files --nodes 2: $(hosts "$tmp/q$i.xml") GPU hosts, not $want2"
    expect 0 "$cs" predict --gen "$ring8" --platform "$tmp/q$i.xml" -b 64M -e 64M --quiet
    grep -q ' ok$' "$tmp/out" || fail "$files: the 8-GPU ring did not predict: $(tail -n 3 "$tmp/out")"
    grep -q '<!-- written by `collsim platform from`' "$tmp/p$i.xml" || fail "$files: no header"
done <<LIST
aws-p4d-a100-topo.xml - 8 16
awsp4d-efa-2node-ncclinfo-nccl2.9.9.log - 16 16
aws-p4d-a100-topo.xml+awsp4d-efa-2node-ncclinfo-nccl2.9.9.log - 16 16
azure-ncv4-a100pcie-topo.xml - 4 8
azure-ncv4-a100pcie-topo.xml+azure-ncv4-a100pcie-graph.xml - 4 8
azure-ndv4-a100-topo.xml a100 8 16
dgxa100-oci-nvidia-smi-topo.txt - 8 16
hgxh100-supermicro-2node-ncclinfo-nccl2.26.2-excerpt.log - 16 16
oci-bmgpuh100-topo.xml - 8 16
LIST

# The copies are the shared files, when those are here.
shared=${CS_SHARED_DATA:-$srcdir/../shared/data}/topology
if [ -d "$shared" ]; then
    for f in "$shared"/*; do
        case $f in */README.md) continue ;; esac
        cmp -s "$f" "$top/$(basename "$f")" || fail "tests/data/topology/$(basename "$f") is not the shared file"
    done
fi

# NDv4's file with --gpu a100 against the dgx-a100 family: the same predictions, 1 node (an
# 8-GPU ring) and 2 (NCCL's 16-GPU schedule, rings and trees across the nodes).
expect 0 "$cs" platform from "$top/azure-ndv4-a100-topo.xml" --gpu a100 -o "$tmp/ndv4.xml"
expect 0 "$cs" platform from "$top/azure-ndv4-a100-topo.xml" --gpu a100 --nodes 2 -o "$tmp/ndv4-2.xml"
expect 0 "$cs" platform dgx-a100 -o "$tmp/dgx.xml"
expect 0 "$cs" platform dgx-a100 --nodes 2 -o "$tmp/dgx-2.xml"
for p in ndv4 dgx; do
    "$cs" predict --gen ring:gpus=8,channels=8,protocol=LL128 -p "$tmp/$p.xml" -b 1K -e 1G -f 32 \
        --quiet --format csv >"$tmp/$p.csv" 2>/dev/null || fail "predict on $p"
    "$cs" predict --gen nccl:gpus=16,nodes=2,size=64M -p "$tmp/$p-2.xml" -b 1K -e 1G -f 32 \
        --quiet --format csv >"$tmp/$p-2.csv" 2>/dev/null || fail "predict on $p-2"
done
[ "$(wc -l <"$tmp/dgx.csv")" -ge 5 ] || fail "dgx-a100: no predictions"
cmp -s "$tmp/ndv4.csv" "$tmp/dgx.csv" || fail "NDv4's file and dgx-a100 predict differently (1 node)"
cmp -s "$tmp/ndv4-2.csv" "$tmp/dgx-2.csv" || fail "NDv4's file and dgx-a100 predict differently (2 nodes)"

# p4d: GPUs 0 and 1 reach the network through the same EFA NIC of their switch.
for g in 0 1; do
    grep -q "GPU $g (0000:10:1$(printf %x $((12 + g))).0) -> NIC 0000:10:1b.0 (PIX, GPUDirect RDMA): gpu${g}_pcie n0_nic0_pcie" "$tmp/p1.xml" ||
        fail "p4d: GPU $g does not use EFA NIC 0000:10:1b.0"
done
awk '/<route src="gpu1" dst="gpu9">/ { on = 1 } on && /n0_nic0_net/ { ok = 1 } /<\/route>/ { on = 0 }
     END { exit !ok }' "$tmp/q1.xml" || fail "p4d: gpu1 -> gpu9 does not cross n0_nic0_net"

# The bad catalogue.
n=0
while read -r files rc where msg; do
    case $files in '#'* | '') continue ;; esac
    n=$((n + 1))
    # shellcheck disable=SC2046
    (cd "$top" && "$cs" platform from $(echo "$files" | tr + ' ') -o "$tmp/bad.xml") >/dev/null 2>"$tmp/err"
    got=$?
    [ "$got" -eq "$rc" ] || fail "$files: exit $got, expected $rc"
    grep -qF "collsim: $where: " "$tmp/err" || fail "$files: error not at $where: $(cat "$tmp/err")"
    grep -qF -- "$msg" "$tmp/err" || fail "$files: error is not '$msg': $(cat "$tmp/err")"
    [ ! -e "$tmp/bad.xml" ] || fail "$files: a platform was written"
done <"$top/bad/EXPECTED"
[ "$n" -ge 20 ] || fail "only $n bad inputs read"

# Options: --gpu against the file, the families' options.
expect 2 "$cs" platform from "$p4d" --gpu h100
grep -q 'the gpu option, h100 contradicts PCI 10de:20b0' "$tmp/err" || fail "--gpu h100 on p4d: $(cat "$tmp/err")"
expect 2 "$cs" platform from "$p4d" --nic hdr
expect 2 "$cs" platform from
expect 2 "$cs" platform dgx-a100 --gpu a100-pcie
expect 2 "$cs" platform from "$top/azure-ndv4-a100-topo.xml" --gpu a100 --nodes 40
grep -q 'up to 256 GPUs' "$tmp/err" || fail "40 nodes: $(cat "$tmp/err")"
expect 0 "$cs" platform from "$top/azure-ndv4-a100-topo.xml" --gpu a100 --set cs.link_Bps.net=5e9 -o "$tmp/slow.xml"
grep -q '<link id="n0_nic0_net" bandwidth="5e+09Bps"' "$tmp/slow.xml" || fail "--set cs.link_Bps.net did not reach the NIC links"

# nccl-log
expect 0 "$cs" nccl-log "$p4dlog"
grep -q '^version            2.9.9 (2.9.9+cuda11.2) .* 35$' "$tmp/out" || fail "nccl-log: version: $(head -n 3 "$tmp/out")"
grep -q '^connections        P2P read 256, NET GDR 64 ' "$tmp/out" || fail "nccl-log: connections"
grep -q '^0    133    0 7 6 5 4 3 2 1 8 15 14 13 12 11 10 9$' "$tmp/out" || fail "nccl-log: ring 0"
expect 2 "$cs" nccl-log "$p4d"
expect 2 "$cs" nccl-log
expect 0 "$cs" help nccl-log

# gen nccl --log: the log's ranks, nodes, channels and ring orders.
expect 0 "$cs" gen nccl --log "$p4dlog" --size 1G -o "$tmp/nccl.xml"
grep -q 'name="allreduce_nccl_2.9.9_ring_8ch_512thr" proto="Simple" nchannels="8" nchunksperloop="128" ngpus="16"' "$tmp/nccl.xml" ||
    fail "gen nccl --log: $(head -n 1 "$tmp/nccl.xml")"
expect 0 "$cs" verify "$tmp/nccl.xml"
# ring 1 is 0 3 10 15 ... 4 1: on channel 1 rank 0 sends to 3 and receives from 1
grep -q '<tb id="[0-9]*" send="3" recv="1" chan="1"' "$tmp/nccl.xml" || fail "gen nccl --log: ring 1's order"
# a version past the rule's sources (2.26.2) is taken with 2.18's rule, and says so
expect 0 "$cs" gen nccl --log "$h100log" --size 1G -o "$tmp/h26.xml"
grep -q "gen nccl: warning: NCCL 2.26.2 is newer than the versions whose channel and thread rule.*taken with 2.18's" "$tmp/err" ||
    fail "gen nccl --log of 2.26: $(cat "$tmp/err")"
expect 0 "$cs" gen nccl --log "$h100log" --nccl-version 2.18.5 --size 1G -o "$tmp/h.xml"
grep -q "warning" "$tmp/err" && fail "gen nccl --log --nccl-version 2.18.5 warns: $(cat "$tmp/err")"
sed 's/allreduce_nccl_2.26.2_/allreduce_nccl_2.18.5_/' "$tmp/h26.xml" | cmp -s - "$tmp/h.xml" ||
    fail "gen nccl --log of 2.26 is not 2.18.5's schedule"
expect 2 "$cs" gen nccl --log "$p4dlog" --gpus 8 --size 1G
expect 2 "$cs" gen ring --gpus 8 --log "$p4dlog"

# predict on the log: its platform (--platform), its schedule (nccl:log=), its table (--compare).
expect 0 "$cs" predict --gen "nccl:log=$p4dlog,size=1G" --platform "$p4dlog" -b 1G -e 1G --compare "$p4dlog" --quiet
grep -q '^# compared with .*: 1 of 1 sizes measured' "$tmp/out" || fail "predict --compare LOG: $(tail -n 3 "$tmp/out")"
expect 0 "$cs" predict --gen ring:gpus=16,channels=8 --platform "$tmp/q3.xml" -b 64M -e 64M --vs-nccl --nccl-log "$p4dlog" --quiet
grep -q ' ok$' "$tmp/out" || fail "predict --vs-nccl --nccl-log: $(tail -n 2 "$tmp/out")"
expect 2 "$cs" predict --gen ring:gpus=8 --platform "$tmp/p1.xml" -b 1M -e 1M --nccl-log "$p4dlog"
# calibrate platform on an INFO log: its ranks, nodes and schedule come with it.
expect 0 "$cs" calibrate platform --family dgx-a100 "$p4dlog" --max-iter 1 \
    -o "$tmp/fit.xml" --report "$tmp/fit.md"
grep -q '^Family dgx-a100, 2 nodes; fitted on ' "$tmp/fit.md" ||
    fail "calibrate on the log: $(sed -n 3p "$tmp/fit.md")"
grep -q 'schedule `gen:nccl:log=.*awsp4d-efa-2node-ncclinfo-nccl2.9.9.log`; protocol NCCL' "$tmp/fit.md" ||
    fail "calibrate on the log: not its schedule and protocol"
[ "$(hosts "$tmp/fit.xml")" = 16 ] || fail "calibrate on the log: not the log's 2 nodes"

# The committed p4d platform is what platforms/README's line writes (tests/platforms.sh
# compares it byte for byte); it shares each EFA NIC between 2 GPUs as the file says.
grep -q 'GPU 1 (0000:10:1d.0) -> NIC 0000:10:1b.0 (PIX, GPUDirect RDMA)' "$srcdir/platforms/aws-p4d-2node.xml" ||
    fail "platforms/aws-p4d-2node.xml: GPU 1's NIC"
[ "$fails" -eq 0 ]
