#!/bin/sh
# tracediff.sh: `collsim tracediff` from the command line: a predicted trace against itself
# matches every step with no difference; a slower platform's trace of the same schedule matches
# the same steps and is slower; --csv writes a row per step; bad traces and options exit 2.
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
cs="$builddir/collsim"
xml="$srcdir/tests/data/msccl-xml/allreduce_a100_ncv4.4gpu.1inst.LL.xml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=$((fail + 1)); }

"$cs" platform virtual --ranks 4 -o "$tmp/v.xml" || no "platform"
"$cs" platform virtual --ranks 4 --set cs.link_Bps.hbm=1e11 -o "$tmp/slow.xml" || no "slow platform"
"$cs" predict "$xml" --platform "$tmp/v.xml" -b 1M -e 1M --trace "$tmp/a.json" >/dev/null || no "trace a"
"$cs" predict "$xml" --platform "$tmp/slow.xml" -b 1M -e 1M --trace "$tmp/b.json" >/dev/null || no "trace b"
"$cs" tracediff "$tmp/a.json" "$tmp/a.json" --csv "$tmp/rows.csv" >"$tmp/same" || no "tracediff same"
n=$(($(wc -l <"$tmp/rows.csv") - 1))
[ "$n" -gt 0 ] || no "no rows"
grep -q "steps matched $n; only measured 0; only predicted 0" "$tmp/same" || no "same: steps"
grep -q "median 0.000 us, max 0.000 us" "$tmp/same" || no "same: differences"
head -n 1 "$tmp/rows.csv" | grep -q "^rank,tb,iteration,step,type,measured_start_us,measured_us,predicted_start_us,predicted_us,diff_us$" || no "csv header"
"$cs" tracediff "$tmp/a.json" "$tmp/b.json" --top 3 >"$tmp/diff" || no "tracediff a b"
grep -q "steps matched $n; only measured 0; only predicted 0" "$tmp/diff" || no "a b: steps"
# a 24x slower memory: the predicted (second) trace's span is longer
sed -n 's/^span.*measured \([0-9.]*\) us, predicted \([0-9.]*\) us.*/\1 \2/p' "$tmp/diff" |
    awk '{ exit !($2 > $1) }' || { no "slow platform not slower"; cat "$tmp/diff"; }
[ "$(grep -c '^ \+[0-9]' "$tmp/diff")" -eq 3 ] || no "--top 3 rows"

printf '{"traceEvents":[\n{"cat":"step","ph":"X","pid":0}\n' >"$tmp/bad.json"
"$cs" tracediff "$tmp/bad.json" "$tmp/a.json" 2>"$tmp/err"
[ $? -eq 2 ] || no "bad trace: want exit 2"
grep -q "bad.json:2: a step or wait slice lacks" "$tmp/err" || { no "bad trace: no FILE:LINE"; cat "$tmp/err"; }
"$cs" tracediff "$tmp/a.json" 2>/dev/null
[ $? -eq 2 ] || no "one file: want exit 2"
"$cs" tracediff --top x "$tmp/a.json" "$tmp/a.json" 2>/dev/null
[ $? -eq 2 ] || no "--top x: want exit 2"
"$cs" tracediff "$tmp/a.json" "$tmp/nonexistent.json" 2>/dev/null
[ $? -eq 2 ] || no "missing file: want exit 2"

[ "$fail" -eq 0 ] && echo "tracediff: all passed"
exit "$fail"
