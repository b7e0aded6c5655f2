#!/bin/sh
# validate_nccl.sh: validate's nccl=VERSION: each size and protocol of a gen:ring case is predicted
# on the ring with NCCL's channels at that size and the protocol's per-threadblock rate scaled by
# NCCL's threads (nccl-a100.md 1.6b), checked against `collsim predict` on that very ring; the
# summary names the rule; bad versions and schedules exit 2 with file:line. A gen:nccl case
# predicts what `collsim gen nccl` writes at each size (the same ring where NCCL runs a ring; its
# tree across nodes where NCCL's model picks it).
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
cs=$CS_BUILDDIR/collsim
. "$CS_SRCDIR/tests/lib.sh"
cd "$CS_SRCDIR" || exit 1
plat=platforms/dgx-a100.xml
ring='gen:ring:gpus=8,channels=24,instances=1,protocol=Simple'

# The predicted time (us) of `collsim predict` at one size: ring spec, protocol, size, sets...
predict() {
    spec=$1 proto=$2 size=$3
    shift 3
    "$cs" predict --gen "$spec" --platform $plat --protocol "$proto" -b "$size" -e "$size" \
        --format csv --set cs.deploy_s=0 "$@" | awk -F, 'NR == 2 { print $4 }'
}

# The predicted time (us) of validate's CASE.csv at size (or GPU count) x.
validated() {
    awk -F, -v x="$2" '$1 == x { print $3 }' "$1"
}

# same A B WHAT: A and B agree to 1e-3 us (validate prints 4 decimals).
same() {
    awk -v a="$1" -v b="$2" \
        'BEGIN { d = a - b; exit !(a != "" && b != "" && d < 1e-3 && d > -1e-3) }' ||
        fail "$3: validate $1 us, expected $2 us"
}

# apart A B WHAT: A and B differ by more than 1% (the check above could not pass by chance).
apart() {
    awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > 1.01 * b || b > 1.01 * a) }' ||
        fail "$3: $1 and $2 us do not differ; the check proves nothing"
}

# One measured table, one LL, one LL128 and one Simple case with NCCL 2.8.4's rule, and the LL
# case without it.
printf 'size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n' >"$tmp/m.csv"
for s in 4096 16384 32768 65536 524288; do
    printf '%s,40,,,in_place\n' $s >>"$tmp/m.csv"
done
cat >"$tmp/cases.txt" <<EOF
ll $tmp/m.csv $ring $plat LL nccl=2.8.4 set=cs.deploy_s=0
ll128 $tmp/m.csv $ring $plat LL128 nccl=2.8.4 sizes=:4K set=cs.deploy_s=0
simple $tmp/m.csv $ring $plat Simple nccl=2.18 sizes=64K:64K set=cs.deploy_s=0
fastest $tmp/m.csv $ring $plat fastest nccl=2.12.12 sizes=16K:16K set=cs.deploy_s=0
plain $tmp/m.csv $ring $plat LL set=cs.deploy_s=0
llslow $tmp/m.csv $ring $plat LL nccl=2.8.4 sizes=64K:64K set=cs.deploy_s=0 set=cs.tb_Bps.LL=1e9
plainslow $tmp/m.csv $ring $plat LL sizes=64K:64K set=cs.deploy_s=0 set=cs.tb_Bps.LL=1e9
EOF
"$cs" validate "$tmp/cases.txt" -o "$tmp/o" >"$tmp/out" 2>&1
st=$?
[ $st -le 1 ] || { fail "validate exited $st"; cat "$tmp/out" >&2; exit 1; }

# What NCCL runs at one size (gen nccl) predicted: NCCL's own kernel, on the channels and threads
# its rule gives there (the replay narrows the protocol's rates to those threads).
pnccl() { # VERSION PROTO SIZE [PLATFORM]
    "$cs" predict --gen "nccl:gpus=8,channels=24,nccl=$1,algo=ring,size=$3" --platform "${4:-$plat}" \
        --protocol "$2" -b "$3" -e "$3" --format csv --set cs.deploy_s=0 | awk -F, 'NR == 2 { print $4 }'
}
# The channels and threads gen nccl writes at one size: "Nch_Tthr" of its name.
width() { # VERSION PROTO SIZE
    "$cs" gen nccl --gpus 8 --size "$3" --nccl-version "$1" --channels 24 --algo ring --protocol "$2" |
        sed -n '1s/.*_ring_\([0-9]*ch_[0-9]*thr\)".*/\1/p'
}
# LL, 8 ranks, 24 channels: 1 channel of 64 threads at 4 KiB, 256 at 16 KiB, 512 at 32 KiB;
# 2 channels at 64 KiB, 16 at 512 KiB (nBytes >= channels x threads x 64 B).
for sw in 4K:1ch_64thr 16K:1ch_256thr 32K:1ch_512thr 64K:2ch_512thr 512K:16ch_512thr; do
    sz=${sw%%:*}
    [ "$(width 2.8.4 LL "$sz")" = "${sw#*:}" ] || fail "LL $sz: gen nccl writes $(width 2.8.4 LL "$sz")"
done
same "$(validated "$tmp/o/ll.csv" 4096)" "$(pnccl 2.8.4 LL 4K)" "LL 4 KiB"
same "$(validated "$tmp/o/ll.csv" 16384)" "$(pnccl 2.8.4 LL 16K)" "LL 16 KiB"
same "$(validated "$tmp/o/ll.csv" 32768)" "$(pnccl 2.8.4 LL 32K)" "LL 32 KiB"
same "$(validated "$tmp/o/ll.csv" 65536)" "$(pnccl 2.8.4 LL 64K)" "LL 64 KiB"
same "$(validated "$tmp/o/ll.csv" 524288)" "$(pnccl 2.8.4 LL 512K)" "LL 512 KiB"
# Without the rule the same sizes run on 24 channels at full rate: the checks above can fail.
apart "$(validated "$tmp/o/ll.csv" 16384)" "$(validated "$tmp/o/plain.csv" 16384)" "LL 16 KiB"
# (64 KiB: 2 channels against 24, apart where the threadblocks' rate binds.)
apart "$(validated "$tmp/o/llslow.csv" 65536)" "$(validated "$tmp/o/plainslow.csv" 65536)" "LL 64 KiB"
# fewer threads, a lower rate: 16 KiB on 256 threads against the same ring on 512 (32 KiB's)
apart "$(pnccl 2.8.4 LL 16K)" "$(validated "$tmp/o/plain.csv" 16384)" "LL 16 KiB threads"
# LL128: 8 B per thread; at 4 KiB one channel of 320 threads of 640.
[ "$(width 2.8.4 LL128 4K)" = 1ch_320thr ] || fail "LL128 4 KiB: $(width 2.8.4 LL128 4K)"
same "$(validated "$tmp/o/ll128.csv" 4096)" "$(pnccl 2.8.4 LL128 4K)" "LL128 4 KiB"
# Simple: 64 B per thread; 2 channels of 512 threads at 64 KiB.
[ "$(width 2.18 Simple 64K)" = 2ch_512thr ] || fail "Simple 64 KiB: $(width 2.18 Simple 64K)"
same "$(validated "$tmp/o/simple.csv" 65536)" "$(pnccl 2.18 Simple 64K)" "Simple 64 KiB"
# fastest: each protocol on its own width, the fastest kept.
best=$(printf '%s\n%s\n%s\n' "$(pnccl 2.12.12 LL 16K)" "$(pnccl 2.12.12 LL128 16K)" \
    "$(pnccl 2.12.12 Simple 16K)" | sort -g | head -1)
same "$(validated "$tmp/o/fastest.csv" 16384)" "$best" "fastest 16 KiB"

# The summary says which rule produced the channels, and only where it did.
rule="protocol LL\. Channels and threads per size and protocol: NCCL 2\.8\.4's rule (enqueue\.cc"
grep -q "^Measurement .*; $rule" \
    "$tmp/o/summary.md" || fail "summary.md does not name NCCL 2.8.4's rule"
[ "$(grep -c "Channels and threads per size" "$tmp/o/summary.md")" -eq 5 ] ||
    fail "summary.md names the rule for a case without nccl="

# A table of time against GPU count: each count's ring (gpus={n}) has its own ranks; at 128 B
# LL runs 1 channel of 64 threads whatever the count.
printf 'n %s gen:ring:gpus={n},channels=4,instances=1 %s LL size=128 nccl=2.12 %s\n' \
    tests/data/validation/nccltests123-dgxa100-ring-1ch-smallmsg-latency.csv $plat \
    set=cs.deploy_s=0 >"$tmp/n.txt"
"$cs" validate "$tmp/n.txt" -o "$tmp/n" >"$tmp/out" 2>&1
[ $? -le 1 ] || { fail "validate by GPU count"; cat "$tmp/out" >&2; }
same "$(validated "$tmp/n/n.csv" 4)" \
    "$("$cs" predict --gen nccl:gpus=4,channels=4,nccl=2.12,algo=ring,size=128 --platform $plat \
        --protocol LL -b 128 -e 128 --format csv --set cs.deploy_s=0 | awk -F, 'NR == 2 { print $4 }')" \
    "4 GPUs"

# gen:nccl: the same ring as gen:ring with nccl= on one node, so the same times at every size.
printf 'gnccl %s gen:nccl:gpus=8,channels=24,nccl=2.8.4 %s LL set=cs.deploy_s=0\n' "$tmp/m.csv" \
    $plat >"$tmp/g.txt"
# across 2 nodes at 64 KiB in LL NCCL's model picks its tree: 16 channels of 512 threads (8 B
# per thread for the tree, whatever the ranks), the file gen nccl writes at that size
printf 'gtree %s gen:nccl:gpus=16,nodes=2 platforms/dgx-a100-2node.xml LL sizes=64K:64K %s\n' \
    "$tmp/m.csv" set=cs.deploy_s=0 >>"$tmp/g.txt"
"$cs" validate "$tmp/g.txt" -o "$tmp/g" >"$tmp/out" 2>&1
[ $? -le 1 ] || { fail "validate gen:nccl"; cat "$tmp/out" >&2; }
for s in 4096 16384 32768 65536 524288; do
    same "$(validated "$tmp/g/gnccl.csv" $s)" "$(validated "$tmp/o/ll.csv" $s)" "gen:nccl $s B"
done
"$cs" gen nccl --gpus 16 --nodes 2 --size 64K --protocol LL -o "$tmp/tree.xml" &&
    grep -q 'name="allreduce_nccl_2.12.12_tree_16ch_512thr"' "$tmp/tree.xml" ||
    fail "gen nccl at 64 KiB LL on 2 nodes is not a 16-channel tree"
tree=$("$cs" predict --gen nccl:gpus=16,nodes=2,size=64K --platform platforms/dgx-a100-2node.xml \
    --protocol LL -b 64K -e 64K --format csv --set cs.deploy_s=0 | awk -F, 'NR == 2 { print $4 }')
same "$(validated "$tmp/g/gtree.csv" 65536)" "$tree" "gen:nccl tree 64 KiB"
grep -q "schedule \`gen:nccl:gpus=16,nodes=2\`.*NCCL 2\.12\.12's rule" "$tmp/g/summary.md" ||
    fail "summary.md does not name the rule of a gen:nccl case"

# Bad case lines: exit 2 with file:line.
bad() {
    printf '%s\n' "$2" >"$tmp/bad.txt"
    "$cs" validate "$tmp/bad.txt" -o "$tmp/b" >"$tmp/out" 2>&1
    st=$?
    if [ $st -ne 2 ] || ! grep -q -- "bad.txt:$1" "$tmp/out"; then
        fail "case line '$2' exited $st: $(cat "$tmp/out")"
    fi
}
bad "1: nccl=3.0: NCCL 3.0: collsim reproduces NCCL 2.8 and later 2.x versions" \
    "c m.csv $ring $plat LL nccl=3.0"
bad "1: nccl=2.7.8: NCCL 2.7.8: collsim reproduces NCCL 2.8 and later" \
    "c m.csv $ring $plat LL nccl=2.7.8"
bad "1: nccl=two: NCCL version 'two': MAJOR.MINOR or MAJOR.MINOR.PATCH" \
    "c m.csv $ring $plat LL nccl=two"
bad "1: nccl= needs a gen:ring schedule, not 's.xml'" "c m.csv s.xml $plat LL nccl=2.8"
bad "1: nccl= needs a gen:ring schedule, not 'gen:allpairs:gpus=8'" \
    "c m.csv gen:allpairs:gpus=8 $plat LL nccl=2.8"
bad "1: nccl= needs a ring spec with gpus=N and one instance" \
    "c m.csv gen:ring:gpus=8,channels=4,instances=2 $plat LL nccl=2.8"
bad "1: nccl= needs a ring spec with gpus=N and one instance" \
    "c m.csv gen:ring:channels=4 $plat LL nccl=2.8"
bad "1: gen:nccl:gpus=8,algo=star: generator spec" "c m.csv gen:nccl:gpus=8,algo=star $plat LL"
bad "1: gen:nccl:gpus=8,nccl=3.0: generator spec" "c m.csv gen:nccl:gpus=8,nccl=3.0 $plat LL"
bad "1: gen:nccl:gpus=8,coll=allgather,algo=tree: NCCL's tree runs AllReduce only" \
    "c m.csv gen:nccl:gpus=8,coll=allgather,algo=tree $plat LL"
[ "$fails" -eq 0 ]
