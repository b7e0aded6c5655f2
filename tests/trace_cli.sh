#!/bin/sh
# trace_cli.sh: `collsim predict --trace` writes valid Chrome trace JSON for the largest size,
# `--stats` names the critical path and its total is the predicted time, the event cap and an
# unwritable trace exit 2, and CSV output stays clean with the statistics on stderr.
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
cs="$builddir/collsim"
ring4="$srcdir/tests/data/msccl-xml/simple_allreduce_ring.4gpu.1inst.xml"
. "$srcdir/tests/lib.sh"

"$cs" platform a100-pcie-4gpu -o "$tmp/p.xml" || exit 1
"$cs" predict "$ring4" --platform "$tmp/p.xml" -b 64K -e 1M -f 4 --trace "$tmp/t.json" --stats \
    >"$tmp/out" 2>"$tmp/err" || fail "predict --trace --stats exits $?: $(cat "$tmp/err")"
grep -q "^# trace of 1048576 bytes written to $tmp/t.json" "$tmp/out" ||
    fail "the trace is not of the largest size"
grep -q '^critical path: .* us (the predicted time)$' "$tmp/out" || fail "--stats names no critical path"
grep -q '^ *[0-9.]* *[0-9.]*%  launch + deploy$' "$tmp/out" || fail "the critical path has no launch"
grep -q '^ *[0-9.]* *[0-9.]*%  gpu [0-9]* tb [0-9]* iteration' "$tmp/out" ||
    fail "the critical path names no step"
# The critical path's total is the time the table prints for the largest size (to its precision:
# one decimal from 100 us, as nccl-tests prints it).
table=$(awk '$1 == 1048576 { print $6 }' "$tmp/out")
path=$(sed -n 's/^critical path: .*, \([0-9.]*\) us (the predicted time)$/\1/p' "$tmp/out")
awk -v a="$table" -v b="$path" 'BEGIN { d = a - b; if (a == "" || b == "" || d > 0.051 || d < -0.051) exit 1 }' ||
    fail "critical path $path us, table $table us"
for k in '"ph":"X"' '"ph":"s"' '"ph":"f"' '"ph":"C"' '"process_name"' '"thread_name"'; do
    grep -q "$k" "$tmp/t.json" || fail "the trace has no $k event"
done
if command -v python3 >/dev/null 2>&1; then
    python3 -m json.tool "$tmp/t.json" >/dev/null || fail "the trace is not valid JSON"
else
    echo "python3 not found: JSON validity is checked by tests/check_trace only"
fi

# CSV stays CSV; the statistics go to stderr.
"$cs" predict "$ring4" --platform "$tmp/p.xml" -b 64K -e 64K --format csv --stats \
    >"$tmp/csv" 2>"$tmp/err" || fail "csv --stats exits $?"
[ "$(wc -l <"$tmp/csv")" -eq 2 ] || fail "csv output has more than the header and one row"
grep -q '^critical path:' "$tmp/err" || fail "csv --stats: no statistics on stderr"

# The event cap and an unwritable trace are errors (exit 2) with a message.
"$cs" predict "$ring4" --platform "$tmp/p.xml" -b 1M -e 1M --stats --max-events 10 \
    >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'more than 10 events' "$tmp/err" || fail "--max-events 10 does not refuse"
"$cs" predict "$ring4" --platform "$tmp/p.xml" -b 1M -e 1M --trace "$tmp/no/such/dir/t.json" \
    >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'cannot write the trace' "$tmp/err" || fail "an unwritable trace does not exit 2"
"$cs" predict "$ring4" --platform "$tmp/p.xml" --max-events x >/dev/null 2>&1
[ $? -eq 2 ] || fail "--max-events x is accepted"

[ "$fails" -eq 0 ] && echo "trace_cli: all passed"
[ "$fails" -eq 0 ]
