#!/bin/sh
# gen_cli.sh: `collsim gen` and `collsim diff` from the command line: output, exit codes, messages,
# the <algo> header, --coll (and predict's count and busbw for each collective), the 21 seed
# references and msccl-tools' ring AllGather (when ../shared/data is there, else exit 77, SKIP,
# after the other checks), and verify on generated schedules (when the verify command is built in).
set -u
cs=${CS_BUILDDIR:-.}/collsim
src=${CS_SRCDIR:-..}
data=${CS_SHARED_DATA:-$src/../shared/data}
. "$src/tests/lib.sh"
skipped=0

# stdout and -o agree, and the output reads back
expect 0 "$cs" gen hierarchical --gpus 8 --protocol LL
cp "$tmp/out" "$tmp/stdout.xml"
expect 0 "$cs" gen hierarchical --gpus 8 --protocol LL -o "$tmp/file.xml"
cmp -s "$tmp/stdout.xml" "$tmp/file.xml" || fail "gen stdout and -o differ"
expect 0 "$cs" diff "$tmp/stdout.xml" "$tmp/file.xml"
expect 0 "$cs" fmt "$tmp/file.xml"
cmp -s "$tmp/out" "$tmp/file.xml" || fail "fmt does not round-trip a generated schedule"

# diff: a difference is named, exit 1; unreadable input exits 2
expect 0 "$cs" gen hierarchical --gpus 8 --protocol LL --msccl-tools-compat -o "$tmp/seed.xml"
expect 0 "$cs" gen hierarchical --gpus 8 --protocol LL --variant v1 -o "$tmp/v1.xml"
expect 1 "$cs" diff "$tmp/seed.xml" "$tmp/v1.xml"
grep -q "differ at gpu 0 tb 0 step 0: type: nop vs re" "$tmp/out" || fail "diff message: $(cat "$tmp/out")"
# every difference is listed (not only the first), at most --max-differences, the rest counted;
# --ignore leaves an attribute out
n=$(grep -c " differ at " "$tmp/out")
[ "$n" -gt 1 ] && [ "$n" -le 20 ] || fail "diff listed $n differences"
expect 1 "$cs" diff --max-differences 2 "$tmp/seed.xml" "$tmp/v1.xml"
[ "$(grep -c " differ at " "$tmp/out")" -eq 2 ] && grep -q '^\.\.\. and [0-9]* more differences' "$tmp/out" ||
    fail "--max-differences 2: $(cat "$tmp/out")"
sed 's/name="[^"]*"/name="renamed"/' "$tmp/file.xml" >"$tmp/renamed.xml"
expect 1 "$cs" diff "$tmp/file.xml" "$tmp/renamed.xml"
grep -q "differ at algo: name: .* vs renamed" "$tmp/out" || fail "name difference: $(cat "$tmp/out")"
expect 0 "$cs" diff --ignore name "$tmp/file.xml" "$tmp/renamed.xml"
expect 2 "$cs" diff --max-differences 0 "$tmp/file.xml" "$tmp/renamed.xml"
expect 2 "$cs" diff "$tmp/seed.xml" "$tmp/missing.xml"
printf '<algo' >"$tmp/bad.xml"
expect 2 "$cs" diff "$tmp/bad.xml" "$tmp/seed.xml"
expect 2 "$cs" diff "$tmp/seed.xml"

# bad parameters: exit 2 with a message that says why
bad() {
    needle=$1
    shift
    expect 2 "$cs" gen "$@"
    grep -q -- "$needle" "$tmp/err" || fail "gen $*: message lacks '$needle': $(cat "$tmp/err")"
    [ -s "$tmp/out" ] && fail "gen $*: wrote output on error"
}
bad "at least 4" hierarchical --gpus 2
bad "does not divide" hierarchical --gpus 8 --columns 3
bad "single row" hierarchical --gpus 8 --columns 8
bad "at least 2" hierarchical --gpus 8 --columns 1
bad "at least 1" hierarchical --gpus 8 --instances 0
bad "channels" hierarchical --gpus 8 --instances 33
bad "cnt 72, the runtime allows < 72" hierarchical --gpus 36 --msccl-tools-compat
bad "2 columns" hierarchical --gpus 8 --columns 4 --msccl-tools-compat
bad "channels" ring --gpus 8 --channels 16 --instances 4
bad "--gpus is required" ring
bad "unknown option" ring --gpus 8 --colour red
bad "unknown protocol" ring --gpus 8 --protocol LL256
bad "non-negative integer" ring --gpus -3
bad "unknown generator" tree --gpus 8
bad "for ring" allpairs --gpus 8 --channels 2
bad "for ring" allpairs --gpus 8 --per-node 4
bad "does not divide" ring --gpus 12 --per-node 8
bad "at least 1" ring --gpus 8 --per-node 0
bad "on or off" hierarchical --gpus 8 --dependence-nops maybe
bad "split or v1" hierarchical --gpus 8 --variant v2
bad "for hierarchical" allpairs --gpus 8 --variant v1
# residency: more threadblocks per GPU than an A100 keeps resident, with the count and the limit
bad "gpu 0 has 128 threadblocks; at most 108 are co-resident" hierarchical --gpus 64 --instances 2
bad "gpu 0 has 128 threadblocks; at most 108 are co-resident" allpairs --gpus 64 --instances 2
# checked before the lowering: 8 rings over 1024 GPUs took 48 s and 6 GB
bad "16760832 steps (about 2.0 GB to plan, 2.1 GB of XML), more than the 8388608" ring --gpus 1024 --channels 8
# checked before the lowering, which grows as G^2 (1024 GPUs took 20 s and 2 GB to fail)
bad "the runtime's dependency ids stop at 127: at most 128 GPUs for allreduce" allpairs --gpus 1024 --instances 8
bad "at most 128 GPUs for reducescatter" allpairs --gpus 129 --coll reducescatter
bad "65 GPUs x 2 instances: each reduce waits on the threadblock of every peer in its instance (130 tbs in all)" allpairs --gpus 65 --instances 2 --sms 1000
expect 0 "$cs" gen allpairs --gpus 64 --instances 2 --sms 1000 -o "$tmp/ap.xml"
# NCCL's tree over 1024 GPUs: refused before the lowering (which took 5 s and 900 MB to find
# the chunk offsets beyond int16_t), by the cnt of its steps; a ring's chunks beyond int16_t too
bad "tree over 1024 GPUs: each step moves a GPU's 1024 chunks of the channel, and the runtime allows cnt < 72" nccl --gpus 1024 --nodes 128 --channels 32 --size 1G
bad "at least 1" hierarchical --gpus 8 --sms 0
expect 0 "$cs" gen hierarchical --gpus 64 --instances 2 --sms 132
# 1024 GPUs: the 32 x 32 grid's 124 threadblocks per GPU are refused on an A100; more than 33 rows
# or columns do not fit two channels of 32 connections; past 1024 GPUs nothing goes
bad "gpu 0 has 124 threadblocks; at most 108 are co-resident" hierarchical --gpus 1024 --columns 32
bad "64 rows x 16 columns: a GPU has 63 column peers" hierarchical --gpus 1024 --columns 16
bad "at most 1024" ring --gpus 1025
# past the executor's 64 steps per threadblock: written with a warning (the tb, its count and
# both limits), refused by verify under the executor only
expect 0 "$cs" gen ring --gpus 100 -o "$tmp/r100.xml"
grep -q "warning: gpu 0 tb 0 has 100 steps, over the MSCCL executor's limit of 64 per threadblock .*legacy runtime takes 256" "$tmp/err" ||
    fail "gen ring --gpus 100: no steps warning: $(cat "$tmp/err")"
expect 0 "$cs" gen ring --gpus 64 -o "$tmp/r64.xml"
[ -s "$tmp/err" ] && fail "gen ring --gpus 64 (64 steps) warned: $(cat "$tmp/err")"
bad "for hierarchical" ring --gpus 8 --dependence-nops on
bad "out of range" ring --gpus 99999999999
bad "option '--gpus' needs a value" ring --gpus
bad "option '--msccl-tools-compat' takes no value" hierarchical --gpus 8 --msccl-tools-compat=1
bad "one generator only" ring allpairs --gpus 8
bad "exceeds --max-bytes 65536" ring --gpus 8 --min-bytes 1M --max-bytes 64K
bad "out of range" ring --gpus 8 --max-bytes 2T
bad "not a number" ring --gpus 8 --min-bytes -1
bad "not a number" allpairs --gpus 8 --max-bytes lots
bad "ring has no AllToAll (allpairs writes one)" ring --gpus 8 --coll alltoall
bad "unknown collective 'broadcast'" allpairs --gpus 8 --coll broadcast
bad "allreduce only" hierarchical --gpus 8 --coll allgather
bad "option '--coll' needs a value" ring --gpus 8 --coll
# gen nccl: --size is required, the options of other generators refused, versions 2.8 to 2.x
bad "--size is required" nccl --gpus 8
bad "are for nccl" ring --gpus 8 --size 1M
bad "are for nccl" allpairs --gpus 8 --nccl-version 2.12
bad "are for nccl" hierarchical --gpus 8 --nodes 2
bad "for hierarchical" nccl --gpus 8 --size 1M --variant v1
bad "2.8 and later 2.x" nccl --gpus 8 --size 1M --nccl-version 3.1
bad "MAJOR.MINOR" nccl --gpus 8 --size 1M --nccl-version latest
bad "does not divide" nccl --gpus 12 --size 1M --nodes 5
bad "sets its own" nccl --gpus 8 --size 1M --instances 2
bad "point-to-point" nccl --gpus 8 --size 1M --coll alltoall --protocol LL
bad "out of range" nccl --gpus 8 --size 2T
# values attached with '=', options before the generator
expect 0 "$cs" gen --gpus=8 --protocol=LL hierarchical -o"$tmp/attached.xml"
cmp -s "$tmp/attached.xml" "$tmp/file.xml" || fail "gen --gpus=8 --protocol=LL -oFILE differs"
expect 0 "$cs" gen --help
grep -q "msccl-tools-compat" "$tmp/out" || fail "gen --help lacks the options"
grep -q -- "--min-bytes N.*--max-bytes N" "$tmp/out" || fail "gen --help lacks --min-bytes/--max-bytes"

# every generator writes the <algo> header the MSCCL executor requires (it refuses a file without
# outofplace, minBytes or maxBytes): outofplace = !inplace, the window 0..0 (no limit) by default
header() {
    window=$1
    shift
    expect 0 "$cs" gen "$@"
    grep -q "^<algo .* inplace=\"1\" outofplace=\"0\" $window>\$" "$tmp/out" ||
        fail "gen $*: <algo> lacks '$window': $(head -1 "$tmp/out")"
}
header 'minBytes="0" maxBytes="0"' hierarchical --gpus 8
header 'minBytes="0" maxBytes="0"' hierarchical --gpus 8 --msccl-tools-compat --protocol LL128
header 'minBytes="0" maxBytes="0"' ring --gpus 8 --channels 4
header 'minBytes="0" maxBytes="0"' allpairs --gpus 8 --protocol LL
header 'minBytes="65536" maxBytes="1048576"' ring --gpus 8 --min-bytes 64K --max-bytes 1M
header 'minBytes="1073741824" maxBytes="0"' allpairs --gpus 8 --min-bytes 1G
header 'minBytes="4096" maxBytes="4096"' hierarchical --gpus 4 --msccl-tools-compat --min-bytes=4K --max-bytes=4K
header 'minBytes="0" maxBytes="0"' ring --gpus 8 --coll allreduce
# gen nccl: the window over which NCCL keeps the channels and threads it runs at --size
header 'minBytes="65536" maxBytes="98303"' nccl --gpus 8 --size 64K --protocol LL
header 'minBytes="786432" maxBytes="0"' nccl --gpus 8 --size 1G
grep -q '^<algo name="allreduce_nccl_2.12.12_ring_24ch_512thr" proto="Simple" nchannels="24"' "$tmp/out" ||
    fail "gen nccl --size 1G: $(head -1 "$tmp/out")"
expect 0 "$cs" gen nccl --gpus 8 --size 64K --protocol LL --nccl-version 2.8.4 --channels 12
grep -q '^<algo name="allreduce_nccl_2.8.4_ring_2ch_512thr" proto="LL" nchannels="2"' "$tmp/out" ||
    fail "gen nccl --nccl-version 2.8.4: $(head -1 "$tmp/out")"
expect 0 "$cs" gen nccl --gpus 8 --size 1M --coll alltoall
grep -q '^<algo name="alltoall_nccl_2.12.12_p2p" proto="Simple"' "$tmp/out" ||
    fail "gen nccl --coll alltoall: $(head -1 "$tmp/out")"
expect 0 "$cs" gen nccl --gpus 16 --nodes 2 --size 1G -o "$tmp/nccl16.xml"
expect 0 "$cs" gen ring --gpus 16 --channels 24 --per-node 8 -o "$tmp/ring16.xml"
expect 0 "$cs" diff --ignore name --ignore minBytes --ignore maxBytes "$tmp/nccl16.xml" "$tmp/ring16.xml"

# --coll: the collective as the executor reads it (reducescatter, not msccl-tools' reduce_scatter),
# AllGather and ReduceScatter in place, AllToAll out of place
coll() {
    attrs=$1
    shift
    expect 0 "$cs" gen "$@"
    grep -q "^<algo .* coll=\"$attrs maxBytes=\"0\">\$" "$tmp/out" ||
        fail "gen $*: <algo> lacks 'coll=\"$attrs': $(head -1 "$tmp/out")"
}
coll 'allgather" inplace="1" outofplace="0" minBytes="0"' ring --gpus 8 --coll allgather
coll 'reducescatter" inplace="1" outofplace="0" minBytes="0"' ring --gpus 8 --coll reducescatter
coll 'allgather" inplace="1" outofplace="0" minBytes="0"' allpairs --gpus 4 --coll allgather
coll 'reducescatter" inplace="1" outofplace="0" minBytes="0"' allpairs --gpus 4 --coll reducescatter
coll 'alltoall" inplace="0" outofplace="1" minBytes="0"' allpairs --gpus 4 --coll alltoall
coll 'allreduce" inplace="1" outofplace="0" minBytes="0"' allpairs --gpus 4 --coll allreduce

# predict on each collective: the table's count (field 2) is elements per rank as nccl-tests
# prints it (the CSV's whole-buffer count / G), busbw (field 8) is algbw (field 7) times
# nccl-tests' factor: (G-1)/G for AllGather, ReduceScatter and AllToAll, 2(G-1)/G for AllReduce
plat=$src/platforms/dgx-a100.xml
for c in allgather:0.875:8 reducescatter:0.875:8 alltoall:0.875:8 allreduce:1.75:1; do
    name=${c%%:*}
    factor=${c#*:}
    per=${factor#*:}
    factor=${factor%:*}
    spec=allpairs:gpus=8,coll=$name
    expect 0 "$cs" predict --gen "$spec" -p "$plat" -b 4M -e 4M
    row=$(grep '^ *4194304 ' "$tmp/out")
    expect 0 "$cs" predict --gen "$spec" -p "$plat" -b 4M -e 4M --format csv
    csv=$(sed -n 2p "$tmp/out")
    echo "$row" | awk -v f="$factor" -v per="$per" -v csv="$csv" '
        { split(csv, c, ",") }
        $2 != 1048576 / per || c[2] != 1048576 || $9 != "N/A" { exit 1 }
        { d = c[6] - c[5] * f; if (d < -1e-5 || d > 1e-5 || c[7] != "ok") exit 1 }
        { d = $8 - $7 * f; if (d < -0.011 || d > 0.011) exit 1 }' ||
        fail "predict $spec: count or busbw not nccl-tests' (factor $factor, count / $per): $row / $csv"
done

# the 21 seed references, as Azure/msccl-tools writes them: with outofplace, minBytes and
# maxBytes, which gen writes too. `collsim diff` compares every attribute and cannot be told to
# ignore these three, so the microsoft/msccl-tools copies (without them) are compared byte for
# byte once the three are stripped from gen's output.
if [ -d "$data/msccl-xml/azure-msccl-tools" ]; then
    n=0
    for f in "$data"/msccl-xml/azure-msccl-tools/allreduce_a100_pcie_hierarchical.*.xml; do
        b=$(basename "$f" .xml)
        rest=${b#allreduce_a100_pcie_hierarchical.}
        g=${rest%%gpu.*}
        i=${rest#*gpu.}
        i=${i%%inst.*}
        p=${rest##*.}
        "$cs" gen hierarchical --gpus "$g" --instances "$i" --protocol "$p" --msccl-tools-compat -o "$tmp/c.xml" \
            || fail "gen for $b"
        "$cs" diff "$tmp/c.xml" "$f" >"$tmp/out" || fail "$b: $(cat "$tmp/out")"
        # byte-identical apart from the order of dependencies
        sed 's/depid="[-0-9]*" deps="[-0-9]*"//' "$tmp/c.xml" >"$tmp/c.stripped"
        sed 's/depid="[-0-9]*" deps="[-0-9]*"//' "$f" >"$tmp/f.stripped"
        cmp -s "$tmp/c.stripped" "$tmp/f.stripped" || fail "$b: not byte-identical apart from dependencies"
        sed 's/ outofplace="0" minBytes="0" maxBytes="0">$/>/' "$tmp/c.stripped" >"$tmp/m.stripped"
        sed 's/depid="[-0-9]*" deps="[-0-9]*"//' "$data/msccl-xml/$b.xml" >"$tmp/f.stripped"
        cmp -s "$tmp/m.stripped" "$tmp/f.stripped" ||
            fail "$b: not the microsoft/msccl-tools file apart from dependencies and the header"
        n=$((n + 1))
    done
    [ "$n" -eq 21 ] || fail "found $n seed references, expected 21"
else
    echo "gen_cli.sh: $data/msccl-xml/azure-msccl-tools absent, skipping the seed references"
    skipped=1
fi

# ring AllGather on one ring is msccl-tools' allgather_ring.py with one channel, step for step: only
# the name and the executor's header (absent from microsoft/msccl-tools output) differ
ag=$data/msccl-xml/allgather_ring.8gpu.1ch.1inst.LL128.xml
if [ -f "$ag" ]; then
    expect 0 "$cs" gen ring --coll allgather --gpus 8 --protocol LL128 -o "$tmp/ag.xml"
    expect 0 "$cs" diff --ignore name --ignore outofplace --ignore minBytes --ignore maxBytes \
        "$tmp/ag.xml" "$ag"
    expect 1 "$cs" diff "$tmp/ag.xml" "$ag"
    [ "$(grep -c " differ at " "$tmp/out")" -eq 4 ] || fail "ring AllGather vs $ag: $(cat "$tmp/out")"
else
    echo "gen_cli.sh: $ag absent, skipping the ring AllGather reference"
    skipped=1
fi

# verify, once the command exists
if "$cs" help verify >/dev/null 2>&1; then
    for g in 4 8 16 32 64; do
        for i in 1 2; do
            [ "$g" -eq 64 ] && [ "$i" -eq 2 ] && continue # 128 tbs, refused above
            "$cs" gen hierarchical --gpus "$g" --instances "$i" | "$cs" verify - >"$tmp/out" 2>&1 \
                || fail "hierarchical $g gpus $i instances: $(tail -3 "$tmp/out")"
            "$cs" gen hierarchical --gpus "$g" --instances "$i" --variant v1 | "$cs" verify - >"$tmp/out" 2>&1 \
                || fail "hierarchical v1 $g gpus $i instances: $(tail -3 "$tmp/out")"
        done
    done
    "$cs" gen ring --gpus 8 --channels 4 | "$cs" verify - >"$tmp/out" 2>&1 || fail "ring: $(tail -3 "$tmp/out")"
    "$cs" gen ring --gpus 16 --channels 16 --per-node 8 | "$cs" verify - >"$tmp/out" 2>&1 ||
        fail "ring --per-node: $(tail -3 "$tmp/out")"
    "$cs" gen allpairs --gpus 8 | "$cs" verify - >"$tmp/out" 2>&1 || fail "allpairs: $(tail -3 "$tmp/out")"
    for c in allgather reducescatter alltoall; do
        for g in 2 5 16; do
            for gen in ring allpairs; do
                [ "$gen$c" = ringalltoall ] && continue
                "$cs" gen "$gen" --coll "$c" --gpus "$g" --instances 2 | "$cs" verify - >"$tmp/out" 2>&1 ||
                    fail "$gen --coll $c --gpus $g: $(tail -3 "$tmp/out")"
                grep -q ": ok: .* structure and data correct" "$tmp/out" ||
                    fail "$gen --coll $c --gpus $g: $(tail -1 "$tmp/out")"
            done
        done
    done
    # 100 steps per tb: a warning for any runtime (the legacy one takes 256), an error naming the
    # tb, the count and the limit under the executor
    "$cs" verify "$tmp/r100.xml" >"$tmp/out" 2>&1 || fail "ring 100 GPUs: $(tail -3 "$tmp/out")"
    "$cs" verify --runtime executor "$tmp/r100.xml" >"$tmp/out" 2>&1
    [ $? -eq 2 ] && grep -q "r100.xml:[0-9]*: rank 0 tb 0 has 100 steps: over the executor's default limit of 64" "$tmp/out" ||
        fail "verify --runtime executor on 100 steps: $(head -3 "$tmp/out")"
    # 66 GPUs in 2 columns: 32 column peers and a row peer, over two channels
    "$cs" gen hierarchical --gpus 66 --columns 2 | "$cs" verify --runtime executor - >"$tmp/out" 2>&1 ||
        fail "hierarchical 33 x 2: $(tail -3 "$tmp/out")"
    "$cs" gen hierarchical --gpus 8 --msccl-tools-compat | "$cs" verify - >/dev/null 2>&1
    [ $? -eq 1 ] || fail "verify does not reject the seed"
    "$cs" gen hierarchical --gpus 8 --variant v1 --dependence-nops on | "$cs" verify - >"$tmp/out" 2>&1
    [ $? -eq 2 ] && grep -q cycle "$tmp/out" || fail "the corrected algorithm with dependence nops has no cycle?"
else
    echo "gen_cli.sh: no verify command in this build, skipping verify"
fi

[ "$fails" -eq 0 ] || { echo "gen_cli.sh: $fails failures" >&2; exit 1; }
[ "$skipped" -eq 0 ] || { echo "gen_cli.sh: SKIP: the shared references were not compared"; exit 77; }
echo "gen_cli.sh: ok"
