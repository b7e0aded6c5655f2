#!/bin/sh
# tune.sh: `collsim tune` picks the known fastest variant per size range of a constructed sweep
# and writes executor-selectable schedules (minBytes/maxBytes windows, protocol of the variant).
set -u
src=${CS_SRCDIR:?}
cs=${CS_BUILDDIR:?}/collsim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cs" tune "$src/tests/data/tune/sweep.csv" --schedule-dir "$src/tests/data/msccl-xml" \
    -o "$tmp/plan" >"$tmp/out" || fail "tune exited $?"
cat "$tmp/out"
# the table: three windows, each with its winner
grep -Eq '^ +1024 +16383 +1024\.\.4096 +allreduce_a100_ncv4\.4gpu\.1inst\.LL LL ' "$tmp/out" || fail "range 1"
grep -Eq '^ +16384 +262143 .*hierarchical_fixed\.4gpu\.1inst\.LL LL128 ' "$tmp/out" || fail "range 2"
grep -Eq '^ +262144 +1048576 .*hierarchical_fixed\.4gpu\.1inst\.LL Simple ' "$tmp/out" || fail "range 3"
[ "$(grep -Ec '^ +[0-9]' "$tmp/out")" -eq 3 ] || fail "not three ranges"
cmp -s "$tmp/out" "$tmp/plan/plan.txt" || fail "plan.txt differs from the printed plan"
# the schedules: windows and protocols set, still valid schedules
set -- "$tmp"/plan/*.xml
[ $# -eq 3 ] || fail "$# schedules, want 3"
head -1 "$1" | grep -q 'proto="LL" .*outofplace="0" minBytes="1024" maxBytes="16383"' || fail "$1 head"
head -1 "$2" | grep -q 'proto="LL128" .*minBytes="16384" maxBytes="262143"' || fail "$2 head"
head -1 "$3" | grep -q 'proto="Simple" .*minBytes="262144" maxBytes="1048576"' || fail "$3 head"
for f in "$@"; do "$cs" info "$f" >/dev/null || fail "$f does not read back"; done

# --extend opens the outer windows
"$cs" tune "$src/tests/data/tune/sweep.csv" --schedule-dir "$src/tests/data/msccl-xml" --extend \
    -o "$tmp/ext" >/dev/null || fail "tune --extend"
head -1 "$tmp"/ext/00-*.xml | grep -q 'minBytes="0" maxBytes="16383"' || fail "extend first"
head -1 "$tmp"/ext/02-*.xml | grep -q 'minBytes="262144" maxBytes="0"' || fail "extend last"

# two platforms in one CSV: refused until --where picks one
sed 's/a100-pcie-4gpu,1048576/a100-hier,1048576/' "$src/tests/data/tune/sweep.csv" >"$tmp/two.csv"
"$cs" tune "$tmp/two.csv" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "two platforms accepted"
grep -q "more than one platform.*--where platform.family" "$tmp/err" || fail "message: $(cat "$tmp/err")"
"$cs" tune "$tmp/two.csv" --where platform.family=a100-pcie-4gpu >"$tmp/w" || fail "--where"
grep -Eq '^ +262144 +262144 .*Simple' "$tmp/w" || fail "--where plan: $(cat "$tmp/w")"
"$cs" tune "$tmp/two.csv" --where nosuch=1 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--where on an unknown column accepted"
# not a sweep CSV
printf 'a,b\n1,2\n' >"$tmp/bad.csv"
"$cs" tune "$tmp/bad.csv" >/dev/null 2>&1
[ $? -eq 2 ] || fail "a non-sweep CSV accepted"
echo "tune: ok"
