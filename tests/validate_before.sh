#!/bin/sh
# validate_before.sh: validate --before FILE: summary.md shows each band's median and max |error|
# as BEFORE -> AFTER from an earlier summary.csv, "-" for a case it lacks; summary.csv is the same
# as without it; a bad FILE exits 2 with FILE:LINE before anything is predicted.
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
cs=$CS_BUILDDIR/collsim
. "$CS_SRCDIR/tests/lib.sh"
cd "$CS_SRCDIR" || exit 1

# Two small cases on the OCI table (its 6 sizes up to 2 KiB, all in the <= 64 KiB band); the earlier
# summary knows only the first, and a band of it that this run does not have.
meas=tests/data/validation/oci-bmgpu48-a100sxm40-1node-8gpu.csv
ring='gen:ring:gpus=8,channels=24,instances=1,protocol=Simple'
cat >"$tmp/cases.txt" <<CASES
old $meas $ring platforms/dgx-a100.xml LL sizes=:2K set=cs.deploy_s=0
new $meas $ring platforms/dgx-a100.xml LL sizes=:2K set=cs.deploy_s=0
CASES
cat >"$tmp/before.csv" <<CSV
case,band,n,median_abs,max_abs,missing
old,0,4,0.123456,0.654321,0
old,1,4,0.2,0.3,0
old,3,1,0.5,0.5,0
CSV

"$cs" validate "$tmp/cases.txt" -o "$tmp/plain" >"$tmp/out" 2>&1 ||
    { fail "validate without --before:"; cat "$tmp/out" >&2; }
# gnuplot draws each case's figure in the output folder, whatever characters its name holds
if [ -x /usr/bin/gnuplot ]; then
    "$cs" validate "$tmp/cases.txt" -o "$tmp/it's \$(x)" >"$tmp/out" 2>&1 ||
        { fail "validate -o a folder named with a quote:"; cat "$tmp/out" >&2; }
    [ -s "$tmp/it's \$(x)/old.svg" ] || fail "no old.svg in a folder named with a quote"
fi
"$cs" validate "$tmp/cases.txt" -o "$tmp/b" --before "$tmp/before.csv" >"$tmp/out" 2>&1 ||
    { fail "validate --before:"; cat "$tmp/out" >&2; }
md=$tmp/b/summary.md
# The after numbers are those of the plain run; the before ones those of before.csv.
after=$(awk -F' [|] ' '$1 == "| all sizes" { print $3 }' "$tmp/plain/summary.md" | head -1)
[ -n "$after" ] || fail "no all-sizes row in the plain summary"
grep -qF "| all sizes | 6 | 12.3% -> $after | 65.4% -> " "$md" ||
    fail "case old: no '12.3% -> $after' and '65.4% -> ' in its all-sizes row"
grep -qF "| <= 64 KiB | 6 | 20.0% -> " "$md" || fail "case old: no '20.0% -> ' in its small band"
# The earlier >= 4 MiB band has no sizes now: no row.
grep -q '^| >= 4 MiB' "$md" && fail "a band without sizes now has a row"
# Case new is not in before.csv: "-" before each of its numbers.
awk '/^### new/ { s = 1 } s && /^\| all sizes \| 6 \| - -> [0-9.]+% \| - -> [0-9.]+% \(/ { ok = 1 }
     END { exit !ok }' "$md" || fail "case new: no '- -> ' in its all-sizes row"
awk '/^### old/ { s = 1 } /^### new/ { s = 0 } s && / - -> / { bad = 1 } END { exit bad }' "$md" ||
    fail "case old shows '-' for a band before.csv has"
grep -qF -- "--before $tmp/before.csv" "$md" || fail "summary.md does not name the earlier summary"
grep -qF "(before -> after)" "$md" || fail "no before -> after heading"
grep -q -- '->' "$tmp/plain/summary.md" && fail "a summary without --before shows before -> after"
cmp -s "$tmp/plain/summary.csv" "$tmp/b/summary.csv" || fail "--before changed summary.csv"

# Bad earlier summaries: exit 2 with FILE:LINE, and nothing predicted or written.
bad() {
    printf '%s\n' "$2" >"$tmp/bad.csv"
    rm -rf "$tmp/x"
    "$cs" validate "$tmp/cases.txt" -o "$tmp/x" --before "$tmp/bad.csv" >"$tmp/out" 2>&1
    st=$?
    if [ $st -ne 2 ] || ! grep -q -- "collsim: $tmp/bad.csv:$1" "$tmp/out" || [ -e "$tmp/x" ]; then
        fail "before file '$2' exited $st:"
        cat "$tmp/out" >&2
    fi
}
bad "1: not a validate summary.csv" "size_bytes,time_us
1024,10"
bad "3: band '7': 0 to 3" "case,band,n,median_abs,max_abs,missing
old,0,4,0.1,0.2,0
old,7,4,0.1,0.2,0"
bad "2: median_abs 'x'" "case,band,n,median_abs,max_abs,missing
old,0,4,x,0.2,0"
bad "3: case old band 0 again (first on line 2)" "case,band,n,median_abs,max_abs,missing
old,0,4,0.1,0.2,0
old,0,4,0.1,0.2,0"
"$cs" validate "$tmp/cases.txt" -o "$tmp/x" --before "$tmp/none.csv" >"$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "none.csv" "$tmp/out" ||
    { fail "a missing --before file:"; cat "$tmp/out" >&2; }
"$cs" validate "$tmp/cases.txt" -o "$tmp/x" --before >"$tmp/out" 2>&1
[ $? -eq 2 ] || fail "--before without a file does not exit 2"
[ "$fails" -eq 0 ]
