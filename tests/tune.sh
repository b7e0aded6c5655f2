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
cmp -s "$tmp/out" "$tmp/plan.plan.txt" || fail "plan.plan.txt differs from the printed plan"
grep -q "^# deploy: MSCCL_ALGO_DIR=$tmp/plan for the MSCCL executor" "$tmp/out" || fail "no deploy line"
# the schedules: windows and protocols set, still valid schedules, and nothing else in the folder
# (the executor reads every file of MSCCL_ALGO_DIR), each one the executor loads
set -- "$tmp"/plan/*.xml
[ $# -eq 3 ] || fail "$# schedules, want 3"
[ "$(ls -A "$tmp/plan" | wc -l)" -eq 3 ] || fail "the plan folder holds more than its schedules"
"$cs" verify --runtime executor -q "$@" >/dev/null || fail "a planned schedule fails verify --runtime executor"
head -1 "$1" | grep -q 'proto="LL" .*outofplace="0" minBytes="1024" maxBytes="16383"' || fail "$1 head"
head -1 "$2" | grep -q 'proto="LL128" .*minBytes="16384" maxBytes="262143"' || fail "$2 head"
head -1 "$3" | grep -q 'proto="Simple" .*minBytes="262144" maxBytes="1048576"' || fail "$3 head"
for f in "$@"; do "$cs" info "$f" >/dev/null || fail "$f does not read back"; done

# --extend opens the outer windows
"$cs" tune "$src/tests/data/tune/sweep.csv" --schedule-dir "$src/tests/data/msccl-xml" --extend \
    -o "$tmp/ext" >/dev/null || fail "tune --extend"
head -1 "$tmp"/ext/00-*.xml | grep -q 'minBytes="0" maxBytes="16383"' || fail "extend first"
head -1 "$tmp"/ext/02-*.xml | grep -q 'minBytes="262144" maxBytes="0"' || fail "extend last"
# ... but not across a size where every variant deadlocked: there it stops one byte short
awk -F, 'BEGIN { OFS = "," } NR > 1 && $5 == 1048576 { $8 = ""; $9 = ""; $10 = ""; $11 = "deadlock" } { print }' \
    "$src/tests/data/tune/sweep.csv" >"$tmp/dead.csv"
printf '0,allreduce_a100_ncv4.4gpu.1inst.LL.xml,LL,a100-pcie-4gpu,512,128,float,,,,deadlock\n' >>"$tmp/dead.csv"
"$cs" tune "$tmp/dead.csv" --schedule-dir "$src/tests/data/msccl-xml" --extend -o "$tmp/dext" \
    >"$tmp/dout" || fail "tune --extend with deadlocks: $(cat "$tmp/dout")"
head -1 "$tmp"/dext/00-*.xml | grep -q 'minBytes="513" maxBytes="16383"' || fail "extend first past a deadlock"
last=$(ls "$tmp"/dext/*.xml | tail -n 1)
head -1 "$last" | grep -q 'maxBytes="1048575"' || fail "extend last across a deadlock: $(head -1 "$last")"
# --plan puts the plan elsewhere; a schedule the executor refuses (coll="custom") is not written
"$cs" tune "$src/tests/data/tune/sweep.csv" --schedule-dir "$src/tests/data/msccl-xml" \
    -o "$tmp/p2" --plan "$tmp/my-plan.txt" >/dev/null && [ -s "$tmp/my-plan.txt" ] || fail "--plan"
[ ! -e "$tmp/p2.plan.txt" ] || fail "--plan also wrote DIR.plan.txt"
# the committed plan of results/sweeps/ndv4-plan.csv is what tune writes today
mkdir "$tmp/rs"
ln -s "$src/results/sweeps/ndv4-plan.csv" "$tmp/rs/ndv4-plan.csv"
(cd "$tmp/rs" && "$cs" tune ndv4-plan.csv -o ndv4-plan/ >/dev/null) || fail "tune ndv4-plan.csv"
cmp -s "$tmp/rs/ndv4-plan.plan.txt" "$src/results/sweeps/ndv4-plan.txt" ||
    fail "results/sweeps/ndv4-plan.txt is stale: $(diff "$tmp/rs/ndv4-plan.plan.txt" "$src/results/sweeps/ndv4-plan.txt")"
printf 'point,schedule,protocol,platform.family,size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status\n0,simple_custom_collective.prog1.xml,Simple,a100-pcie-4gpu,4096,1024,float,5.0,0.8,0.8,ok\n' >"$tmp/custom.csv"
"$cs" tune "$tmp/custom.csv" --schedule-dir "$src/tests/data/msccl-xml" -o "$tmp/cust" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'would not load it.*coll="custom"' "$tmp/err" || fail "custom planned: $(cat "$tmp/err")"
[ -z "$(ls -A "$tmp/cust" 2>/dev/null)" ] || fail "a refused schedule was written"

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
