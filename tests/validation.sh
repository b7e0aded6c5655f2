#!/bin/sh
# validation.sh: the validation subset (tests/data/validation/cases.txt) against its committed
# baseline: fails when a case's median or max |error| in any size band grows by more than 2 points.
# Rewrite the baseline after a reviewed model change with:
#   collsim validate tests/data/validation/cases.txt -o DIR && cp DIR/summary.csv tests/data/validation/baseline.csv
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$CS_SRCDIR" || exit 1
"$CS_BUILDDIR/collsim" validate tests/data/validation/cases.txt -o "$tmp" \
    --baseline tests/data/validation/baseline.csv --tolerance 0.02
rc=$?
[ $rc -eq 0 ] || cat "$tmp/summary.md" >&2
# The summary names every case and band it measured.
grep -q '^### oci-8gpu-small' "$tmp/summary.md" && grep -q '^### ring-latency' "$tmp/summary.md" ||
    { echo "FAIL: summary.md misses a case" >&2; rc=1; }

# A worse model shows up: against a baseline with every error 5 points lower, validate exits 1.
awk -F, 'NR == 1 { print; next } { OFS = ","; $4 -= 0.05; $5 -= 0.05; print }' \
    tests/data/validation/baseline.csv >"$tmp/tight.csv"
"$CS_BUILDDIR/collsim" validate tests/data/validation/cases.txt -o "$tmp/t" \
    --baseline "$tmp/tight.csv" >"$tmp/out" 2>&1
[ $? -eq 1 ] && grep -q 'baseline' "$tmp/out" ||
    { echo "FAIL: a tighter baseline does not fail" >&2; cat "$tmp/out" >&2; rc=1; }

# params=FILE applies every prop, in order with set=: the 50th of 50 props sets a 0.5 s launch.
{
    i=0
    while [ $i -lt 49 ]; do echo '<prop id="cs.deploy_s" value="0"/>'; i=$((i + 1)); done
    echo '<!-- the last one counts too -->'
    echo '<prop id="cs.launch_s" value="0.5"/>'
} >"$tmp/many.props"
printf 'slow tests/data/validation/oci-bmgpu48-a100sxm40-1node-8gpu.csv gen:ring:gpus=8,channels=24,instances=1,protocol=Simple platforms/dgx-a100.xml Simple sizes=:2K set=cs.launch_s=0 params=%s\n' \
    "$tmp/many.props" >"$tmp/slow.txt"
"$CS_BUILDDIR/collsim" validate "$tmp/slow.txt" -o "$tmp/s" >"$tmp/out" 2>&1 &&
    awk -F, 'NR > 1 && !($3 > 500000) { bad = 1 } NR > 1 { n++ } END { exit bad || !n }' \
        "$tmp/s/slow.csv" ||
    { echo "FAIL: params= does not set the 50th prop" >&2; cat "$tmp/out" "$tmp/s/slow.csv" >&2; rc=1; }

# Bad case files: exit 2 with file:line.
bad() {
    printf '%s\n' "$2" >"$tmp/bad.txt"
    "$CS_BUILDDIR/collsim" validate "$tmp/bad.txt" -o "$tmp/b" >"$tmp/out" 2>&1
    st=$?
    if [ $st -ne 2 ] || ! grep -q -- "bad.txt:$1" "$tmp/out"; then
        echo "FAIL: case line '$2' exited $st:" >&2
        cat "$tmp/out" >&2
        rc=1
    fi
}
bad "1: a case is" "name only.csv"
bad "1: protocol 'LL129'" "c m.csv s.xml p.xml LL129"
bad "1: protocol 'fastest:LL,X'" "c m.csv s.xml p.xml fastest:LL,X"
bad "1: bad case option 'colour=red'" "c m.csv s.xml p.xml LL colour=red"
bad "1: bad case option 'fit=9:1'" "c m.csv s.xml p.xml LL fit=9:1"
bad "1: case name 'a/b'" "a/b m.csv s.xml p.xml LL"
bad "2: case 'c' again" "c m.csv s.xml p.xml LL
c m.csv s.xml p.xml LL"
bad "1: cannot open params file" "c m.csv s.xml p.xml LL params=$tmp/none.props"
bad "1: bad case option 'ranks=99999999999'" "c m.csv s.xml p.xml LL ranks=99999999999"
bad "1: bad case option 'ranks=8abc'" "c m.csv s.xml p.xml LL ranks=8abc"
printf '<prop id="cs.nope" value="1"/>\n' >"$tmp/nope.props"
bad "1: params file: .*nope.props:1: unknown platform parameter" "c m.csv s.xml p.xml LL params=$tmp/nope.props"
# Options: values checked, attached or separate.
"$CS_BUILDDIR/collsim" validate tests/data/validation/cases.txt --tolerance 2x >"$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q -- "--tolerance: '2x' is not a number" "$tmp/out" ||
    { echo "FAIL: --tolerance 2x:" >&2; cat "$tmp/out" >&2; rc=1; }
"$CS_BUILDDIR/collsim" validate --colour=red tests/data/validation/cases.txt >"$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q -- "unknown option '--colour" "$tmp/out" ||
    { echo "FAIL: --colour:" >&2; cat "$tmp/out" >&2; rc=1; }
exit $rc
