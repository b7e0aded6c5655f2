#!/bin/sh
# predict_nccl.sh: `collsim predict --vs-nccl`: on every schedule in schedules/ (two sizes each)
# and on generated AllGather, ReduceScatter and AllToAll, the NCCL columns of the table (busbw
# still field 8), CSV (appended, speed-up = NCCL time / schedule time) and JSON; NCCL's time is
# the replay of `gen nccl` at its channels (its tree across nodes where NCCL's model picks it, or
# --nccl-algo forces it); a custom collective and stray options exit 2.
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
cs="$builddir/collsim"
plat="$srcdir/platforms/dgx-a100-2node.xml"
. "${CS_SRCDIR:-..}/tests/lib.sh"

# check_csv FILE WHAT: the header ends with NCCL's columns; every row has NCCL's protocol, its
# channels and threads and a time (after nominal_bytes); an ok row speedup = nccl_time_us / time_us, a deadlocked one
# none
check_csv() {
    head -1 "$1" | grep -q ',status,nominal_bytes,nccl_protocol,nccl_channels,nccl_threads,nccl_time_us,speedup$' ||
        fail "$2: CSV header $(head -1 "$1")"
    awk -F, -v what="$2" 'NR > 1 {
        rows++
        if (NF != 13 || $9 !~ /^(LL|LL128|Simple)(\/tree)?$/ || $10 < 1 || $11 < 64 || $12 <= 0 ||
            ($7 != "ok" && ($7 != "deadlock" || $13 != ""))) {
            print "FAIL: " what ": CSV row " $0; bad++; next
        }
        if ($7 != "ok")
            next
        r = $12 / $4 # speedup is printed to 6 decimals: half a unit of the last one more
        if ($13 < r * (1 - 1e-5) - 5e-7 || $13 > r * (1 + 1e-5) + 5e-7) {
            print "FAIL: " what ": speedup " $0; bad++
        }
    } END { exit bad || rows < 2 }' "$1" >&2 || fails=$((fails + 1))
}

# every committed schedule, two sizes: exit 0 (1 where the schedule deadlocks: the seed in LL
# at 4 MiB), NCCL's columns filled
for f in "$srcdir"/schedules/*.xml; do
    name=$(basename "$f")
    "$cs" predict "$f" -p "$plat" -b 4K -e 4M -f 1024 --vs-nccl --format csv >"$tmp/csv" 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 0 ] || { [ "$rc" -eq 1 ] && grep -q ',deadlock,' "$tmp/csv"; } ||
        { fail "$name: exit $rc: $(head -3 "$tmp/err")"; continue; }
    check_csv "$tmp/csv" "$name"
done

# the other collectives, by the schedule's collective
for spec in ring:gpus=8,coll=allgather ring:gpus=8,coll=reducescatter,channels=2 \
    allpairs:gpus=8,coll=alltoall; do
    "$cs" predict --gen "$spec" -p "$plat" -b 64K -e 16M -f 256 --vs-nccl --format csv \
        >"$tmp/csv" 2>"$tmp/err" || { fail "$spec: exit $?: $(head -3 "$tmp/err")"; continue; }
    check_csv "$tmp/csv" "$spec"
done
grep -q ',ok,[0-9]*,Simple,1,512,' "$tmp/csv" || fail "alltoall: NCCL is not all pairs in Simple: $(cat "$tmp/csv")"

# the table: busbw stays field 8, NCCL's columns before the status, its note in the head
"$cs" predict "$srcdir/schedules/ring.8gpu.4ch.LL.xml" -p "$plat" -b 1K -e 64M -f 64 --vs-nccl \
    >"$tmp/table" 2>"$tmp/err" || fail "table: $(cat "$tmp/err")"
grep -q '^# vs NCCL 2.12.12: ' "$tmp/table" || fail "table: no NCCL note"
grep -q '^#.*#wrong *nccl *ch *thr *time *speedup *status$' "$tmp/table" || fail "table: header"
"$cs" predict "$srcdir/schedules/ring.8gpu.4ch.LL.xml" -p "$plat" -b 1K -e 64M -f 64 >"$tmp/plain"
awk '!/^#/ { print $8 }' "$tmp/table" >"$tmp/b1"
awk '!/^#/ { print $8 }' "$tmp/plain" >"$tmp/b2"
cmp -s "$tmp/b1" "$tmp/b2" || fail "table: busbw is not field 8 with --vs-nccl"
awk '!/^#/ && ($14 !~ /^(LL|LL128|Simple)$/ || $19 != "ok" || NF != 19) { exit 1 }' "$tmp/table" ||
    fail "table rows: $(grep -v '^#' "$tmp/table" | head -3)"

# NCCL's time is its schedule's replay: at 64M NCCL runs the full width (every thread), where
# the rate is not scaled, so `predict --gen nccl:...` gives the same time
"$cs" predict "$srcdir/schedules/ring.8gpu.4ch.LL.xml" -p "$plat" -b 64M -e 64M --vs-nccl \
    --format csv >"$tmp/csv" || fail "64M"
proto=$(awk -F, 'NR == 2 { print $9 }' "$tmp/csv")
want=$(awk -F, 'NR == 2 { print $12 }' "$tmp/csv")
"$cs" predict --gen "nccl:gpus=8,size=64M,protocol=$proto" -p "$plat" -b 64M -e 64M --format csv \
    >"$tmp/gen" || fail "predict --gen nccl"
got=$(awk -F, 'NR == 2 { print $4 }' "$tmp/gen")
[ -n "$want" ] && [ "$want" = "$got" ] || fail "NCCL's time at 64M: $want, its schedule replays in $got"

# across nodes (--nccl-nodes 2): NCCL's rings go node by node, as gen nccl --nodes 2 writes them
"$cs" predict "$srcdir/schedules/hierarchical.16gpu.1inst.Simple.xml" -p "$plat" -b 64M -e 64M \
    --vs-nccl --nccl-nodes 2 --format csv >"$tmp/csv" || fail "--nccl-nodes 2"
proto=$(awk -F, 'NR == 2 { print $9 }' "$tmp/csv")
want=$(awk -F, 'NR == 2 { print $12 }' "$tmp/csv")
"$cs" predict --gen "nccl:gpus=16,nodes=2,size=64M,protocol=$proto" -p "$plat" -b 64M -e 64M \
    --format csv >"$tmp/gen" || fail "predict --gen nccl:...,nodes=2"
got=$(awk -F, 'NR == 2 { print $4 }' "$tmp/gen")
[ -n "$want" ] && [ "$want" = "$got" ] || fail "NCCL's time on 2 nodes: $want, its schedule: $got"

# across 2 nodes at 64 KiB NCCL's model picks its tree for LL (tree 27.5 us of latency against
# the ring's 36.4 in NCCL 2.12's model): the CSV says LL/tree, its time is gen nccl's tree's;
# --nccl-algo ring gives the ring, on fewer channels (the ring's LL threshold grows with the ranks)
"$cs" predict "$srcdir/schedules/hierarchical.16gpu.1inst.Simple.xml" -p "$plat" -b 64K -e 64K \
    --vs-nccl --nccl-nodes 2 --format csv >"$tmp/csv" || fail "--nccl-nodes 2 at 64K"
[ "$(awk -F, 'NR == 2 { print $9, $10 }' "$tmp/csv")" = "LL/tree 16" ] ||
    fail "64K on 2 nodes: not NCCL's LL tree on 16 channels: $(cat "$tmp/csv")"
want=$(awk -F, 'NR == 2 { print $12 }' "$tmp/csv")
"$cs" predict --gen "nccl:gpus=16,nodes=2,size=64K,protocol=LL,algo=tree" -p "$plat" -b 64K \
    -e 64K --format csv >"$tmp/gen" || fail "predict --gen nccl:...,algo=tree"
got=$(awk -F, 'NR == 2 { print $4 }' "$tmp/gen")
[ -n "$want" ] && [ "$want" = "$got" ] || fail "NCCL's tree at 64K: $want, its schedule: $got"
"$cs" predict "$srcdir/schedules/hierarchical.16gpu.1inst.Simple.xml" -p "$plat" -b 64K -e 64K \
    --vs-nccl --nccl-nodes 2 --nccl-algo ring --format json >"$tmp/json" || fail "--nccl-algo ring"
grep -q '"nccl": {"protocol": "LL", "algorithm": "ring", "channels": 1,' "$tmp/json" ||
    fail "--nccl-algo ring: $(cat "$tmp/json")"
"$cs" predict "$srcdir/schedules/hierarchical.16gpu.1inst.Simple.xml" -p "$plat" -b 64K -e 64K \
    --vs-nccl --nccl-nodes 2 --nccl-algo tree --format json >"$tmp/json" || fail "--nccl-algo tree"
grep -q '"algorithm": "tree", "channels": 16,' "$tmp/json" ||
    fail "--nccl-algo tree: $(cat "$tmp/json")"

# gen nccl: --algo forces the algorithm; the tree is AllReduce's; a bad name exits 2
"$cs" gen nccl --gpus 16 --nodes 2 --size 1G --algo tree >"$tmp/t.xml" &&
    grep -q 'name="allreduce_nccl_2.12.12_tree_24ch_512thr"' "$tmp/t.xml" &&
    "$cs" verify "$tmp/t.xml" >/dev/null || fail "gen nccl --algo tree at 1G"
"$cs" gen nccl --gpus 16 --nodes 2 --size 1G >"$tmp/r.xml" &&
    grep -q 'name="allreduce_nccl_2.12.12_ring_24ch_512thr"' "$tmp/r.xml" ||
    fail "gen nccl on 2 nodes at 1G in Simple is not NCCL's ring"
for bad in "--algo star" "--algo tree --coll allgather" "--algo tree --gpus 128 --nodes 2"; do
    # shellcheck disable=SC2086
    "$cs" gen nccl --gpus 16 --size 1M $bad >/dev/null 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 2 ] && [ -s "$tmp/err" ] || fail "gen nccl $bad: exit $rc"
done
"$cs" gen ring --gpus 8 --algo tree >/dev/null 2>&1
[ $? -eq 2 ] || fail "gen ring --algo: not refused"

# JSON: the version in the head, an nccl object and the speed-up per row
"$cs" predict "$srcdir/schedules/allpairs.8gpu.1inst.LL.xml" -p "$plat" -b 1K -e 1M -f 32 \
    --vs-nccl --nccl-version 2.8.4 --nccl-channels 12 --format json >"$tmp/json" || fail "json"
grep -q '"vs_nccl": "2.8.4"' "$tmp/json" || fail "json: no vs_nccl"
[ "$(grep -c '"nccl": {"protocol": "LL.*", "algorithm": "ring", "channels": [0-9]*, "threads": [0-9]*, "size_bytes": [0-9]*, "time_us": [0-9.]*}, "speedup": [0-9.]*}' "$tmp/json")" -eq 3 ] ||
    fail "json rows: $(cat "$tmp/json")"
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/json" || fail "json does not parse"
fi

# a custom collective has no NCCL counterpart; the NCCL options need --vs-nccl
"$cs" predict "$srcdir/tests/data/msccl-xml/simple_custom_collective.prog1.xml" -p "$plat" \
    -b 1K -e 1K --vs-nccl >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "custom schedule has no NCCL collective" "$tmp/err" ||
    fail "custom: exit $rc: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && fail "custom: wrote output"
for bad in "--nccl-version 2.12" "--nccl-nodes 2" "--vs-nccl --nccl-version 3.0" \
    "--vs-nccl --nccl-channels 0" "--vs-nccl --nccl-nodes 3" "--nccl-algo tree" \
    "--vs-nccl --nccl-algo star"; do
    # shellcheck disable=SC2086
    "$cs" predict "$srcdir/schedules/ring.8gpu.1ch.LL.xml" -p "$plat" -b 1K -e 1K $bad \
        >/dev/null 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 2 ] && [ -s "$tmp/err" ] || fail "$bad: exit $rc"
done
# a version past the rule's sources: 2.18's rule, with a warning; the same times as 2.18.5
for v in 2.21.5 2.18.5; do
    "$cs" predict "$srcdir/schedules/ring.8gpu.1ch.LL.xml" -p "$plat" -b 1K -e 1M -f 32 --vs-nccl \
        --nccl-version $v --format csv >"$tmp/v$v.csv" 2>"$tmp/v$v.err" || fail "--nccl-version $v"
done
grep -q "predict --vs-nccl: warning: NCCL 2.21.5 is newer than the versions.*taken with 2.18's" \
    "$tmp/v2.21.5.err" || fail "--nccl-version 2.21.5: no warning: $(cat "$tmp/v2.21.5.err")"
grep -q warning "$tmp/v2.18.5.err" && fail "--nccl-version 2.18.5 warns: $(cat "$tmp/v2.18.5.err")"
[ -s "$tmp/v2.18.5.csv" ] && cmp -s "$tmp/v2.21.5.csv" "$tmp/v2.18.5.csv" ||
    fail "--nccl-version 2.21.5 does not predict as 2.18.5"

[ "$fails" -eq 0 ] || { echo "predict_nccl.sh: $fails failures" >&2; exit 1; }
echo "predict_nccl.sh: ok"
