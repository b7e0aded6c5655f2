#!/bin/sh
# platform_cli.sh: every `collsim platform` family writes a file that SimGrid loads and predict
# runs on; --set, --nic, --nic-socket and --sockets reach the file and the prediction; bad options
# exit 2;
# SimGrid clusters, split-duplex links and --platform - (stdin) work.
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
cs="$builddir/collsim"
data="$srcdir/tests/data/msccl-xml"
. "$srcdir/tests/lib.sh"

ring4="$data/simple_allreduce_ring.4gpu.1inst.xml"
a2a8="$data/alltoall_allpairs.8gpu.1inst.LL128.xml"
expect 0 "$cs" platform a100-pcie-4gpu -o "$tmp/p4.xml"
expect 0 "$cs" predict "$ring4" --platform "$tmp/p4.xml" -b 1M -e 1M
expect 0 "$cs" platform a100-pcie-nvbridge -o "$tmp/nvb.xml"
expect 0 "$cs" predict "$ring4" --platform "$tmp/nvb.xml" -b 1M -e 1M
expect 0 "$cs" platform a100-hier --rows 4 --columns 2 --between net -o "$tmp/h.xml"
expect 0 "$cs" predict "$a2a8" --platform "$tmp/h.xml" -b 1M -e 1M
expect 0 "$cs" platform ndv4 --nodes 2 -o "$tmp/dgx2.xml"
expect 0 "$cs" predict "$a2a8" --platform "$tmp/dgx2.xml" -b 1M -e 1M
grep -q 'cs.class" value="net"' "$tmp/dgx2.xml" || fail "dgx 2 nodes has no net link"
expect 0 "$cs" predict "$a2a8" --platform "$srcdir/platforms/dgx-a100.xml" -b 1M -e 1M

# --set reaches the file and slows the prediction down.
expect 0 "$cs" platform a100-pcie-4gpu --set cs.link_Bps.pcie=1e9 -o "$tmp/slow.xml"
grep -q 'bandwidth="1e+09Bps"' "$tmp/slow.xml" || fail "--set did not change the link"
grep -q 'id="cs.link_Bps.pcie" value="1e+09"' "$tmp/slow.xml" || fail "--set did not change the prop"
fast=$("$cs" predict "$ring4" --platform "$tmp/p4.xml" -b 4M -e 4M --format csv | sed -n 2p | cut -d, -f4)
slow=$("$cs" predict "$ring4" --platform "$tmp/slow.xml" -b 4M -e 4M --format csv | sed -n 2p | cut -d, -f4)
awk -v f="$fast" -v s="$slow" 'BEGIN { exit !(s > 2 * f) }' || fail "slower PCIe did not slow the ring ($fast vs $slow us)"
# predict --set does the same without a new file.
slow2=$("$cs" predict "$ring4" --platform "$tmp/p4.xml" -b 4M -e 4M --format csv --set cs.tb_Bps.Simple=1e9 | sed -n 2p | cut -d, -f4)
awk -v f="$fast" -v s="$slow2" 'BEGIN { exit !(s > 2 * f) }' || fail "predict --set had no effect ($fast vs $slow2 us)"

# NIC types and the NIC on the other socket reach the prediction. A 2-GPU Simple ring allreduce
# pushes the whole buffer through each GPU's path to its NIC once: with the crossing between
# sockets at 2 GB/s, busbw is at most 2 GB/s, and close to it.
busbw() { # PLATFORM GEN-SPEC SIZE
    "$cs" predict --gen "$2" --platform "$1" -b "$3" -e "$3" --format csv | sed -n 2p | cut -d, -f6
}
ring2=ring:gpus=2,channels=2,instances=1,protocol=Simple
expect 0 "$cs" platform a100-pcie-net --nic-socket other --set cs.sys_Bps=2e9 -o "$tmp/pn-sys.xml"
expect 0 "$cs" platform a100-pcie-net -o "$tmp/pn.xml"
sys=$(busbw "$tmp/pn-sys.xml" "$ring2" 64M)
same=$(busbw "$tmp/pn.xml" "$ring2" 64M)
awk -v s="$sys" -v f="$same" 'BEGIN { exit !(s > 1.6 && s <= 2.0 && f > 4 * s) }' ||
    fail "NIC across sockets at 2 GB/s: busbw $sys GB/s (same socket $same)"
committed=$(busbw "$srcdir/platforms/a100-pcie-net-2node-sys.xml" "$ring2" 64M)
awk -v s="$committed" 'BEGIN { exit !(s > 0 && s <= 10.0) }' ||
    fail "a100-pcie-net-2node-sys.xml: busbw $committed GB/s above its 10 GB/s socket crossing"
# 100 Gb/s RoCE NICs (12 GB/s) against HDR (24 GB/s) on a rail-aware 2-node ring
ring16=ring:gpus=16,channels=16,instances=1,protocol=Simple,per_node=8
expect 0 "$cs" platform dgx-a100 --nodes 2 --nic roce100 -o "$tmp/roce.xml"
roce=$(busbw "$tmp/roce.xml" "$ring16" 256M)
hdr=$(busbw "$tmp/dgx2.xml" "$ring16" 256M)
awk -v r="$roce" -v h="$hdr" 'BEGIN { exit !(r > 0 && r < 0.6 * h) }' ||
    fail "roce100 busbw $roce GB/s is not about half of hdr $hdr"

# --sockets 1: no inter-socket link, so a pair across the NUMA nodes is bound by the GPUs' PCIe
# links (24 GB/s), not cs.sys_Bps (here 2 GB/s): the 4-GPU AllGather ring 0-1-2-3 crosses PCIe
# twice (1->2, 3->0) and its busbw stays under 24 GB/s, far above 2.
ag4=nccl:gpus=4,channels=2,coll=allgather,size=32M
expect 0 "$cs" platform a100-pcie-nvbridge --sockets 1 --set cs.sys_Bps=2e9 -o "$tmp/nvb1.xml"
expect 0 "$cs" platform a100-pcie-nvbridge --sockets 2 --set cs.sys_Bps=2e9 -o "$tmp/nvb2.xml"
grep -q xsocket "$tmp/nvb1.xml" && fail "--sockets 1 has an xsocket link"
one=$(busbw "$tmp/nvb1.xml" "$ag4" 32M)
two=$(busbw "$tmp/nvb2.xml" "$ag4" 32M)
awk -v o="$one" -v t="$two" 'BEGIN { exit !(o > 12 && o <= 24 && t <= 2.0 && t > 1) }' ||
    fail "--sockets 1 busbw $one GB/s, --sockets 2 $two GB/s"
expect 0 "$cs" platform a100-pcie-4gpu --sockets 1 -o "$tmp/p41.xml"
grep -q xsocket "$tmp/p41.xml" && fail "a100-pcie-4gpu --sockets 1 has xsocket"
expect 2 "$cs" platform a100-pcie-nvbridge --sockets 3
expect 2 "$cs" platform dgx-a100 --sockets 1
# Routed through switches (Floyd, as a100-pcie-net above 256 GPUs is, or Dijkstra) or by zones
# (a zone per node or column, a100-hier's and dgx-a100's way above 256), a platform gives every
# pair the links of the pair-by-pair routes (Full): the same predictions to the last digit, LL128
# included (its check reads the routes), and the FATPIPEs on the way between columns or nodes
# change nothing (tests/routes.sh compares the routes themselves).
same_routes() { # DESCRIPTION GEN-SPEC PLATFORM-ARGS...
    what=$1 spec=$2
    shift 2
    routings="full floyd dijkstra"
    case $* in dgx-a100* | a100-hier*) routings="$routings zones" ;; esac
    for r in $routings; do
        expect 0 "$cs" platform "$@" --routing $r -o "$tmp/route-$r.xml"
        "$cs" predict --gen "$spec" --platform "$tmp/route-$r.xml" -b 64K -e 256M -f 64 \
            --format csv 2>&1 | grep -v '^#' >"$tmp/pred-$r.csv"
    done
    grep -q 'routing="DijkstraCache"' "$tmp/route-dijkstra.xml" || fail "$what: not routed through switches"
    grep -q ',ok,' "$tmp/pred-full.csv" || fail "$what: $(cat "$tmp/pred-full.csv")"
    grep -q 'routing="Floyd"' "$tmp/route-floyd.xml" || fail "$what: not routed with Floyd"
    for r in $routings; do
        [ "$r" = full ] && continue
        cmp -s "$tmp/pred-full.csv" "$tmp/pred-$r.csv" ||
            { fail "$what: Full and $r routes predict differently"; diff "$tmp/pred-full.csv" "$tmp/pred-$r.csv" | head -5; }
    done
}
same_routes "dgx 2 nodes" ring:gpus=16,channels=2,per_node=8,protocol=LL128 dgx-a100 --nodes 2
same_routes "dgx 2 nodes, NIC on the other socket" hierarchical:gpus=16,columns=2 dgx-a100 --nodes 2 --nic-socket other
same_routes "a100-hier 4x4 over net" allpairs:gpus=16,protocol=LL128 a100-hier --rows 4 --columns 4 --between net
same_routes "a100-hier 4x4 over pcie" hierarchical:gpus=16,columns=4 a100-hier --rows 4 --columns 4
# The FATPIPE that keeps a100-hier's paths apart is each GPU's own: one that several GPUs'
# transfers crossed would tie them all into one system of SimGrid's max-min solver.
n=$(grep -c '<link id="gpu[0-9]*_between"' "$tmp/route-dijkstra.xml")
[ "$n" -eq 16 ] || fail "a100-hier 4x4 through switches: $n gpuG_between links, not 16"
grep -q '_between"' "$tmp/route-dijkstra.xml" &&
    grep '<link id="[a-z]*[0-9]*_between"' "$tmp/route-dijkstra.xml" | grep -qv 'id="gpu' &&
    fail "a100-hier 4x4 through switches: a between link shared by several GPUs"
# By zones, a FATPIPE per pair of columns (4 columns: 6), each on one pair's route only
n=$(grep -c '<link id="fabric[0-9]*_[0-9]*"' "$tmp/route-zones.xml")
[ "$n" -eq 6 ] || fail "a100-hier 4x4 by zones: $n fabric links, not 6"
grep -q '<link id="fabric0_3" bandwidth="[^"]*" latency="0s" sharing_policy="FATPIPE">' "$tmp/route-zones.xml" ||
    fail "a100-hier 4x4 by zones: fabric0_3 is not a FATPIPE without latency"
same_routes "a100-pcie-net 8 servers" ring:gpus=8 a100-pcie-net --nodes 8 --nic-socket other
# sizes: Full routing to 256 GPUs, by zones or through switches to 1024 (scale.sh writes those)
expect 0 "$cs" platform dgx-a100 --nodes 32 -o "$tmp/d256.xml"
grep -q 'routing="Full"' "$tmp/d256.xml" || fail "256 GPUs not Full"
expect 2 "$cs" platform dgx-a100 --nodes 513
grep -q "4104 GPUs: a platform has 1 to 4096 GPUs" "$tmp/err" || fail "4104 GPUs: $(cat "$tmp/err")"
# above 1024 by zones only: not a graph's routes, not a100-pcie-net
expect 2 "$cs" platform dgx-a100 --nodes 129 --routing floyd
grep -q "1032 GPUs: above 1024 a platform is routed by zones" "$tmp/err" || fail "floyd above 1024: $(cat "$tmp/err")"
expect 2 "$cs" platform a100-pcie-net --nodes 1040
grep -q "1040 GPUs: above 1024 a platform is routed by zones" "$tmp/err" || fail "a100-pcie-net above 1024: $(cat "$tmp/err")"
expect 0 "$cs" platform dgx-a100 --nodes 129 -o "$tmp/d1032.xml"
grep -q '<zone id="node128"' "$tmp/d1032.xml" || fail "1032 GPUs by zones: no zone node128"
expect 2 "$cs" platform dgx-a100 --nodes 33 --routing full
grep -q "264 GPUs: Full routing lists every pair, up to 256 GPUs" "$tmp/err" || fail "Full above 256: $(cat "$tmp/err")"
expect 2 "$cs" platform a100-pcie-4gpu --gpus-per-node 300
grep -q "300 GPUs: Full routing" "$tmp/err" || fail "300 PCIe cards: $(cat "$tmp/err")"
expect 2 "$cs" platform a100-pcie-4gpu --routing dijkstra
grep -q "is for a100-hier, dgx-a100 and a100-pcie-net, not a100-pcie-4gpu" "$tmp/err" || fail "dijkstra on pcie: $(cat "$tmp/err")"
expect 2 "$cs" platform dgx-a100 --routing stars
grep -q "routing takes full, floyd, dijkstra or zones, not 'stars'" "$tmp/err" || fail "--routing stars: $(cat "$tmp/err")"
expect 2 "$cs" platform a100-pcie-net --nodes 4 --routing zones
grep -q "routing by zones (a zone per NVLink group) is for a100-hier and dgx-a100, not a100-pcie-net" "$tmp/err" ||
    fail "zones on a100-pcie-net: $(cat "$tmp/err")"
expect 2 "$cs" platform a100-pcie-4gpu --routing floyd
grep -q "is for a100-hier, dgx-a100 and a100-pcie-net, not a100-pcie-4gpu" "$tmp/err" || fail "floyd on pcie: $(cat "$tmp/err")"

expect 2 "$cs" platform a100-nope
expect 2 "$cs" platform ndv4 --nodes 99999999999
grep -q "out of range" "$tmp/err" || fail "--nodes overflow: $(cat "$tmp/err")"
expect 2 "$cs" platform ndv4 --set
grep -q "option '--set' needs a value" "$tmp/err" || fail "--set message: $(cat "$tmp/err")"
# attached values and options before the family write the same file
expect 0 "$cs" platform --nodes=2 ndv4 -o"$tmp/dgx2b.xml"
cmp -s "$tmp/dgx2.xml" "$tmp/dgx2b.xml" || fail "--nodes=2 -oFILE differs"
expect 2 "$cs" platform a100-hier --set cs.nope=1
expect 2 "$cs" platform a100-hier --set cs.launch_s=-1
expect 2 "$cs" platform dgx-a100 --rows 2
expect 2 "$cs" platform a100-pcie-nvbridge --gpus-per-node 3
expect 2 "$cs" predict "$a2a8" --platform "$tmp/p4.xml"
expect 2 "$cs" predict "$ring4"
expect 2 "$cs" predict "$ring4" --platform "$tmp/p4.xml" -b 1X
expect 2 "$cs" predict "$ring4" --platform "$tmp/p4.xml" -d int7
expect 2 "$cs" predict "$ring4" --platform "$ring4"
expect 1 "$cs" predict "$data/allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml" --platform "$tmp/p4.xml" --protocol Simple -b 16M -e 16M
grep -q "wait-for cycle" "$tmp/out" || fail "no deadlock report"
# Platforms are checked before SimGrid sees them: FILE:LINE and the value for a zero bandwidth,
# a negative latency, a bad host speed; the GPU pair for a missing route (no abort, no silently
# unchanged prediction).
pcie4="$srcdir/platforms/a100-pcie-4gpu.xml"
badplat() { # DESCRIPTION MESSAGE SED-EXPRESSION
    sed "$3" "$pcie4" >"$tmp/bad.xml"
    expect 2 "$cs" predict --gen ring:gpus=4,channels=1 --platform "$tmp/bad.xml" -b 1M -e 1M
    grep -qF -- "$2" "$tmp/err" || fail "$1: $(cat "$tmp/err")"
}
at() { grep -n "$1" "$pcie4" | head -n 1 | cut -d: -f1; } # the line of a pattern
badplat "zero bandwidth" "bad.xml:$(at 'id="gpu0_pcie"'): link 'gpu0_pcie': bandwidth=\"0Bps\" must be a positive" \
    's/id="gpu0_pcie" bandwidth="[^"]*"/id="gpu0_pcie" bandwidth="0Bps"/'
badplat "negative latency" "link 'gpu1_pcie': latency=\"-1us\" must be a non-negative" \
    's/id="gpu1_pcie" bandwidth="\([^"]*\)" latency="[^"]*"/id="gpu1_pcie" bandwidth="\1" latency="-1us"/'
badplat "host speed" "bad.xml:$(at '<host id="gpu1"'): host 'gpu1': speed=\"abc\" must be a positive" \
    's/<host id="gpu1" speed="[^"]*"/<host id="gpu1" speed="abc"/'
badplat "no route" "bad.xml: no route from gpu2 to gpu3" \
    '/<route src="gpu2" dst="gpu3">/,/<\/route>/d'
head -n 1 "$srcdir/platforms/a100-hier-4x2.xml" | grep -q '<?xml' || fail "committed platform"

# Any SimGrid platform whose GPUs are hosts gpuN (tests/data/platforms): a flat <cluster> predicts
# exactly what the same platform written out link by link predicts (split-duplex links of class
# net both, by the cluster's default and by the links' props); a split-duplex link's class reaches
# the hop latency; fat-tree, torus and nested clusters run, and their classes reach the LL128
# check (nvlink: no warning; pcie: a warning naming a torus link).
plats="$srcdir/tests/data/platforms"
ptimes() { # PLATFORM [PREDICT-OPTION...]: the CSV's times at 1M, 2M and 4M, on one line
    p=$1
    shift
    "$cs" predict "$a2a8" --platform "$p" -b 1M -e 4M --format csv "$@" 2>"$tmp/err" | sed 1d |
        cut -d, -f4 | tr '\n' ' '
}
c8=$(ptimes "$plats/cluster8.xml")
f8=$(ptimes "$plats/flat8.xml")
[ -n "$c8" ] && [ "$c8" = "$f8" ] || fail "cluster8 ($c8) and flat8 ($f8) differ"
sed 's/value="net"/value="nvlink"/' "$plats/flat8.xml" >"$tmp/flat8-nvlink.xml"
nv=$(ptimes "$tmp/flat8-nvlink.xml")
[ -n "$nv" ] && [ "$nv" != "$f8" ] || fail "split-duplex nvlink ($nv) predicts as net ($f8)"
for p in fattree8 nested8; do
    expect 0 "$cs" predict "$a2a8" --platform "$plats/$p.xml" -b 1M -e 1M
    if grep -q "warning" "$tmp/err"; then fail "$p (nvlink) warns: $(cat "$tmp/err")"; fi
done
expect 0 "$cs" predict "$a2a8" --platform "$plats/torus8.xml" -b 1M -e 1M
grep -q "LL128 over a path that is not NVLink: .* crosses t_link_from_[0-9_to]*_\(UP\|DOWN\) (pcie)" "$tmp/err" ||
    fail "torus8 (pcie) LL128 warning: $(cat "$tmp/err")"

# --platform - reads the platform from stdin (a temporary copy, removed at exit), for predict and
# verify; empty or invalid stdin exits 2 with a message, never SimGrid's C++ exception.
mkdir "$tmp/t"
stdin=$(TMPDIR="$tmp/t" ptimes - <"$plats/cluster8.xml")
[ "$stdin" = "$c8" ] || fail "--platform - ($stdin) differs from the file ($c8)"
TMPDIR="$tmp/t" expect 0 "$cs" verify --platform - "$a2a8" <"$plats/torus8.xml"
grep -q "crosses t_link" "$tmp/out" "$tmp/err" || fail "verify --platform - saw no torus link"
[ -z "$(ls "$tmp/t")" ] || fail "--platform - left $(ls "$tmp/t")"
expect 2 "$cs" predict "$a2a8" --platform - </dev/null
grep -q "stdin is empty" "$tmp/err" || fail "empty stdin: $(cat "$tmp/err")"
expect 2 "$cs" predict - --platform - </dev/null
printf '<platform version="4.1">\n<zone id="z"\n' >"$tmp/cut.xml"
expect 2 "$cs" predict "$a2a8" --platform - <"$tmp/cut.xml"
grep -q "collsim-stdin-platform-.*\.xml:[0-9]*: cannot read platform" "$tmp/err" ||
    fail "invalid stdin: $(cat "$tmp/err")"
# a platform collsim reads but SimGrid refuses (a route over an undeclared link): its message
sed '0,/id="port7" direction="DOWN"/s//id="port9" direction="DOWN"/' "$plats/flat8.xml" >"$tmp/nolink.xml"
for src in file stdin; do
    if [ $src = file ]; then
        expect 2 "$cs" predict "$a2a8" --platform "$tmp/nolink.xml" -b 1M -e 1M
    else
        expect 2 "$cs" predict "$a2a8" --platform - -b 1M -e 1M <"$tmp/nolink.xml"
    fi
    grep -q "\.xml: SimGrid cannot load the platform: Link not found: port9" "$tmp/err" ||
        fail "SimGrid's refusal ($src): $(cat "$tmp/err")"
    if grep -qi "exception\|terminate" "$tmp/err"; then fail "an exception reached the user"; fi
done
sed 's/radical="0-7"/radical="0-7,x"/' "$plats/cluster8.xml" >"$tmp/radical.xml"
expect 2 "$cs" predict "$a2a8" --platform "$tmp/radical.xml"
grep -q "radical.xml:8: cluster 'c': radical=\"0-7,x\" is not a list" "$tmp/err" ||
    fail "bad radical: $(cat "$tmp/err")"
sed 's/<link id="port1"/<link id="port0"/' "$plats/flat8.xml" >"$tmp/twice.xml"
expect 2 "$cs" predict "$a2a8" --platform "$tmp/twice.xml"
line=$(grep -n '<link id="port0"' "$tmp/twice.xml" | sed -n '2s/:.*//p') # the second declaration
grep -q "twice.xml:$line: link 'port0' is declared twice" "$tmp/err" ||
    fail "link declared twice (line $line): $(cat "$tmp/err")"
echo "$fails failed"
[ "$fails" -eq 0 ]
