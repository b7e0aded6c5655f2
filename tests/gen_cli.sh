#!/bin/sh
# gen_cli.sh: `collsim gen` and `collsim diff` from the command line: output, exit codes, messages,
# the <algo> header, the 21 seed references (when ../shared/data is there, else exit 77, SKIP,
# after the other checks), and verify on generated schedules (when the verify command is built in).
set -u
cs=${CS_BUILDDIR:-.}/collsim
src=${CS_SRCDIR:-..}
data=${CS_SHARED_DATA:-$src/../shared/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
skipped=0

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# expect RC CMD...: run CMD, compare its exit status; stderr goes to $tmp/err
expect() {
    want=$1
    shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    [ "$got" -eq "$want" ] || fail "$* exited $got, expected $want: $(head -c 300 "$tmp/err")"
}

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
bad "limits" hierarchical --gpus 32 --msccl-tools-compat
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
bad "at least 1" hierarchical --gpus 8 --sms 0
expect 0 "$cs" gen hierarchical --gpus 64 --instances 2 --sms 132
bad "for hierarchical" ring --gpus 8 --dependence-nops on
bad "out of range" ring --gpus 99999999999
bad "option '--gpus' needs a value" ring --gpus
bad "option '--msccl-tools-compat' takes no value" hierarchical --gpus 8 --msccl-tools-compat=1
bad "one generator only" ring allpairs --gpus 8
bad "exceeds --max-bytes 65536" ring --gpus 8 --min-bytes 1M --max-bytes 64K
bad "out of range" ring --gpus 8 --max-bytes 2T
bad "not a number" ring --gpus 8 --min-bytes -1
bad "not a number" allpairs --gpus 8 --max-bytes lots
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
    "$cs" gen hierarchical --gpus 8 --msccl-tools-compat | "$cs" verify - >/dev/null 2>&1
    [ $? -eq 1 ] || fail "verify does not reject the seed"
    "$cs" gen hierarchical --gpus 8 --variant v1 --dependence-nops on | "$cs" verify - >"$tmp/out" 2>&1
    [ $? -eq 2 ] && grep -q cycle "$tmp/out" || fail "the corrected algorithm with dependence nops has no cycle?"
else
    echo "gen_cli.sh: no verify command in this build, skipping verify"
fi

[ "$fails" -eq 0 ] || { echo "gen_cli.sh: $fails failures" >&2; exit 1; }
[ "$skipped" -eq 0 ] || { echo "gen_cli.sh: SKIP: the seed references were not compared"; exit 77; }
echo "gen_cli.sh: ok"
