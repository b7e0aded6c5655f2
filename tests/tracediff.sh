#!/bin/sh
# tracediff.sh: `collsim tracediff` from the command line: a predicted trace against itself
# matches every step with no difference; a slower platform's trace of the same schedule matches
# the same steps and is slower; --csv writes a row per step; bad traces and options exit 2.
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
cs="$builddir/collsim"
xml="$srcdir/tests/data/msccl-xml/allreduce_a100_ncv4.4gpu.1inst.LL.xml"
. "$srcdir/tests/lib.sh"

"$cs" platform virtual --ranks 4 -o "$tmp/v.xml" || fail "platform"
"$cs" platform virtual --ranks 4 --set cs.link_Bps.hbm=1e11 -o "$tmp/slow.xml" || fail "slow platform"
"$cs" predict "$xml" --platform "$tmp/v.xml" -b 1M -e 1M --trace "$tmp/a.json" >/dev/null || fail "trace a"
"$cs" predict "$xml" --platform "$tmp/slow.xml" -b 1M -e 1M --trace "$tmp/b.json" >/dev/null || fail "trace b"
"$cs" tracediff "$tmp/a.json" "$tmp/a.json" --csv "$tmp/rows.csv" >"$tmp/same" || fail "tracediff same"
n=$(($(wc -l <"$tmp/rows.csv") - 1))
[ "$n" -gt 0 ] || fail "no rows"
grep -q "steps matched $n; only measured 0; only predicted 0" "$tmp/same" || fail "same: steps"
grep -q "median 0.000 us, max 0.000 us" "$tmp/same" || fail "same: differences"
head -n 1 "$tmp/rows.csv" | grep -q "^rank,tb,iteration,step,type,measured_start_us,measured_us,predicted_start_us,predicted_us,diff_us$" || fail "csv header"
"$cs" tracediff "$tmp/a.json" "$tmp/b.json" --top 3 >"$tmp/diff" || fail "tracediff a b"
grep -q "steps matched $n; only measured 0; only predicted 0" "$tmp/diff" || fail "a b: steps"
# a 24x slower memory: the predicted (second) trace's span is longer
sed -n 's/^span.*measured \([0-9.]*\) us, predicted \([0-9.]*\) us.*/\1 \2/p' "$tmp/diff" |
    awk '{ exit !($2 > $1) }' || { fail "slow platform not slower"; cat "$tmp/diff"; }
[ "$(grep -c '^ \+[0-9]' "$tmp/diff")" -eq 3 ] || fail "--top 3 rows"

printf '{"traceEvents":[\n{"cat":"step","ph":"X","pid":0}\n' >"$tmp/bad.json"
"$cs" tracediff "$tmp/bad.json" "$tmp/a.json" 2>"$tmp/err"
[ $? -eq 2 ] || fail "bad trace: want exit 2"
grep -q "bad.json:2: a step or wait slice lacks" "$tmp/err" || { fail "bad trace: no FILE:LINE"; cat "$tmp/err"; }
# time stamps no clock makes (1.7e308 us: their differences overflow) are refused, not inf
sed 's/"ts":\([0-9][0-9]*\.[0-9]*\)/"ts":1.7e308/' "$tmp/a.json" >"$tmp/huge.json"
"$cs" tracediff "$tmp/a.json" "$tmp/huge.json" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "huge.json:[0-9]*: a step slice's ts or dur is beyond a day" "$tmp/err" ||
    fail "huge time stamps: $(cat "$tmp/err" "$tmp/out" | head -3)"
"$cs" tracediff "$tmp/a.json" 2>/dev/null
[ $? -eq 2 ] || fail "one file: want exit 2"
"$cs" tracediff --top x "$tmp/a.json" "$tmp/a.json" 2>/dev/null
[ $? -eq 2 ] || fail "--top x: want exit 2"
"$cs" tracediff "$tmp/a.json" "$tmp/nonexistent.json" 2>/dev/null
[ $? -eq 2 ] || fail "missing file: want exit 2"

[ "$fails" -eq 0 ] && echo "tracediff: all passed"
[ "$fails" -eq 0 ]
