#!/bin/sh
# predict_gen.sh: a generated schedule goes to the plan as the generator built it, and predicts
# the same rows, to every digit, as the same schedule written by `collsim gen` and read back;
# predict runs verify's symbolic data check only with --verify, which refuses a schedule whose
# result is wrong (exit 2, naming the wrong output) and passes a right one.
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
cs="$builddir/collsim"
plat="$srcdir/platforms/a100-hier-4x2.xml"
. "$srcdir/tests/lib.sh"

# spec|gen options: the same schedule both ways (not nccl: what NCCL's kernels run is replayed
# without the executor's costs, and its file is an MSCCL schedule, on purpose)
while IFS='|' read -r spec opts; do
    # shellcheck disable=SC2086 # opts is a list of options
    "$cs" gen $opts -o "$tmp/s.xml" 2>/dev/null || { fail "gen $opts"; continue; }
    "$cs" predict --gen "$spec" -p "$plat" -b 1K -e 64M -f 64 --format csv >"$tmp/a" 2>/dev/null
    ra=$?
    "$cs" predict "$tmp/s.xml" -p "$plat" -b 1K -e 64M -f 64 --format csv >"$tmp/b" 2>/dev/null
    rb=$?
    [ "$ra" -eq "$rb" ] || fail "$spec: predict --gen exits $ra, the file $rb"
    [ "$(wc -l <"$tmp/a")" -ge 3 ] || fail "$spec: predict --gen printed too few rows"
    cmp -s "$tmp/a" "$tmp/b" || {
        fail "$spec: predict --gen and gen -o FILE; predict FILE differ"
        diff "$tmp/a" "$tmp/b" | head -5 >&2
    }
done <<'SPECS'
ring:gpus=8,channels=3,protocol=LL|ring --gpus 8 --channels 3 --protocol LL
ring:gpus=8,coll=allgather,channels=2,instances=2|ring --gpus 8 --coll allgather --channels 2 --instances 2
ring:gpus=8,coll=reducescatter,per_node=4,protocol=LL128|ring --gpus 8 --coll reducescatter --per-node 4 --protocol LL128
hierarchical:gpus=8,protocol=LL|hierarchical --gpus 8 --protocol LL
hierarchical:gpus=8,protocol=LL,compat=1|hierarchical --gpus 8 --protocol LL --msccl-tools-compat
hierarchical:gpus=8,columns=4,instances=2,variant=v1|hierarchical --gpus 8 --columns 4 --instances 2 --variant v1
allpairs:gpus=8,coll=alltoall,protocol=Simple|allpairs --gpus 8 --coll alltoall --protocol Simple
allpairs:gpus=8,protocol=LL|allpairs --gpus 8 --protocol LL
SPECS

# --verify: the seed's schedule (wrong result) is predicted without it, refused with it
compat="hierarchical:gpus=8,protocol=LL,compat=1"
expect 0 "$cs" predict --gen "$compat" -p "$plat" -b 1M -e 1M --quiet
expect 2 "$cs" predict --gen "$compat" -p "$plat" -b 1M -e 1M --quiet --verify
grep -q "output chunk .* is wrong" "$tmp/err" && grep -q "computes a wrong result" "$tmp/err" ||
    fail "predict --verify on the seed: no wrong output named: $(head -c 300 "$tmp/err")"
[ -s "$tmp/out" ] && fail "predict --verify refused the seed but printed rows"
"$cs" gen hierarchical --gpus 8 --protocol LL --msccl-tools-compat -o "$tmp/seed.xml" 2>/dev/null
expect 2 "$cs" predict "$tmp/seed.xml" -p "$plat" -b 1M -e 1M --quiet --verify
grep -q "seed.xml:[0-9]*: rank [0-9]* output chunk" "$tmp/err" ||
    fail "predict --verify FILE: the wrong output is not at FILE:LINE: $(head -c 300 "$tmp/err")"
# the corrected generator verifies: --verify changes none of its rows
"$cs" predict --gen hierarchical:gpus=8,protocol=LL -p "$plat" -b 1K -e 1M -f 32 --format csv \
    >"$tmp/a" 2>/dev/null || fail "predict --gen hierarchical"
expect 0 "$cs" predict --gen hierarchical:gpus=8,protocol=LL -p "$plat" -b 1K -e 1M -f 32 \
    --format csv --verify
cmp -s "$tmp/a" "$tmp/out" || fail "predict --verify changed the rows of a schedule that verifies"
"$cs" help predict | grep -q -- "--verify" || fail "predict's usage does not name --verify"

exit $((fails > 0))
