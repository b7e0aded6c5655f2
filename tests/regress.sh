#!/bin/sh
# regress.sh: `collsim regress` on a quick subset of the committed baseline (exit 0), and on a copied
# platform whose PCIe link is made slower (exit 1 with a table of the moved predictions); --update
# then makes it pass again; --abs-tolerance, the JUnit report, baselines built with --init, and
# a bad baseline is refused.
set -u
src=${CS_SRCDIR:?}
cs=${CS_BUILDDIR:?}/collsim
. "$src/tests/lib.sh"

# the fast subset that `make check` runs: 4 (schedule, platform, protocol) groups
"$cs" regress "$src/results/regression/baseline.csv" --subset 4 >"$tmp/out" 2>&1 ||
    fail "baseline subset moved or failed: $(cat "$tmp/out")"
grep -Eq "0 of [0-9]+ predictions \(4 of [0-9]+ groups\) moved" "$tmp/out" || fail "summary: $(cat "$tmp/out")"

# a copied platform and the baseline rows that use the original
mkdir -p "$tmp/results/regression" "$tmp/platforms"
cp "$src/platforms/a100-pcie-4gpu.xml" "$tmp/platforms/copy.xml"
b=$tmp/results/regression/baseline.csv
head -1 "$src/results/regression/baseline.csv" >"$b"
grep ',platforms/a100-pcie-4gpu.xml,' "$src/results/regression/baseline.csv" |
    sed 's|,platforms/a100-pcie-4gpu.xml,|,platforms/copy.xml,|' >>"$b"
[ "$(wc -l <"$b")" -gt 10 ] || fail "too few rows copied"
"$cs" regress "$b" >"$tmp/out" || fail "the copy predicts differently: $(cat "$tmp/out")"

# one GPU's PCIe link ten times slower (below the 10 GB/s inter-socket link, so that it
# becomes the bottleneck): large sizes slow down, small ones (latency-bound) may not
sed -i 's|<link id="gpu0_pcie" bandwidth="2.4e+10Bps"|<link id="gpu0_pcie" bandwidth="2.4e+09Bps"|' "$tmp/platforms/copy.xml"
grep -q 'id="gpu0_pcie" bandwidth="2.4e+09Bps"' "$tmp/platforms/copy.xml" || fail "edit did not apply"
"$cs" regress "$b" --tolerance 1 >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ $rc -eq 1 ] || fail "regress exited $rc after the change, want 1"
head -1 "$tmp/out" | grep -q '^schedule  *platform  *proto  *size_bytes  *old_us  *new_us  *change$' || fail "table header"
# the largest size moved, in every protocol, and got slower
for p in LL LL128 Simple; do
    grep -Eq "platforms/copy.xml +$p +16777216 .* \+[0-9.]+%$" "$tmp/out" || fail "16 MiB $p not reported slower"
done
grep -q "moved by more than 1%" "$tmp/out" || fail "summary line"
# a tolerance above the change passes
"$cs" regress "$b" --tolerance 1000 >/dev/null || fail "tolerance 1000% still fails"
# so does an absolute tolerance above it: a time moves only beyond both
"$cs" regress "$b" --tolerance 1 --abs-tolerance 1e9 >"$tmp/out" || fail "--abs-tolerance 1e9 still fails: $(cat "$tmp/out")"
grep -q "moved by more than 1% and 1e+09 us" "$tmp/out" || fail "summary with --abs-tolerance: $(cat "$tmp/out")"
"$cs" regress "$b" --abs-tolerance -1 >/dev/null 2>&1
[ $? -eq 2 ] || fail "negative --abs-tolerance accepted"
# the JUnit report: well-formed, a testcase per row, a failure with old, new and change per move
"$cs" regress "$b" --junit "$tmp/j.xml" >"$tmp/out" 2>&1
[ $? -eq 1 ] || fail "--junit changed the exit status"
if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout "$tmp/j.xml" || fail "JUnit report not well-formed"
    [ "$(xmllint --xpath 'count(//testcase)' "$tmp/j.xml")" -eq "$(($(wc -l <"$b") - 1))" ] || fail "JUnit testcases"
    [ "$(xmllint --xpath 'count(//testcase/failure)' "$tmp/j.xml")" -eq "$(grep -c 'copy.xml' "$tmp/out")" ] || fail "JUnit failures"
fi
grep -Eq '<testsuites name="collsim regress" tests="[0-9]+" failures="[1-9][0-9]*" errors="0">' "$tmp/j.xml" || fail "JUnit counts: $(head -3 "$tmp/j.xml")"
grep -Eq '<failure type="moved" message="old [0-9.]+ us \(ok\), new [0-9.]+ us \(ok\), change \+[0-9.]+%' "$tmp/j.xml" || fail "JUnit failure text"
# --update accepts the change, after which nothing moves
"$cs" regress "$b" --update >/dev/null || fail "--update"
"$cs" regress "$b" >/dev/null || fail "moved after --update"

# --init: a baseline from a predict CSV (schedule, platform, protocol as options) and from a sweep
# CSV (its own columns); each passes at once
"$cs" predict --gen ring:gpus=4 --platform "$tmp/platforms/copy.xml" --protocol LL -b 1K -e 64K -f 4 \
    --format csv >"$tmp/p.csv" 2>/dev/null || fail "predict"
m=$tmp/results/regression/mine.csv
"$cs" regress --init "$m" "$tmp/p.csv" --schedule gen:ring:gpus=4 --platform platforms/copy.xml \
    --protocol LL >"$tmp/out" || fail "--init from predict: $(cat "$tmp/out")"
grep -q "mine.csv: 4 predictions in 1 (schedule, platform, protocol) groups" "$tmp/out" || fail "--init summary: $(cat "$tmp/out")"
grep -q '^gen:ring:gpus=4,platforms/copy.xml,LL,1024,' "$m" || fail "--init row: $(sed -n 2p "$m")"
"$cs" regress "$m" >"$tmp/out" || fail "a fresh baseline moved: $(cat "$tmp/out")"
# progress lines on stderr that is not a terminal (every update with a tiny interval), none with
# --quiet; a bad interval is refused
COLLSIM_PROGRESS_INTERVAL=1e-9 "$cs" regress "$m" >/dev/null 2>"$tmp/err" || fail "regress with progress"
grep -Eq '^regress: 1/1 groups \(100%\), elapsed [0-9]+:[0-9]{2}, ETA 0:00$' "$tmp/err" || fail "regress progress: $(cat "$tmp/err")"
COLLSIM_PROGRESS_INTERVAL=1e-9 "$cs" regress "$m" --quiet >/dev/null 2>"$tmp/err"
[ ! -s "$tmp/err" ] || fail "regress --quiet: $(cat "$tmp/err")"
COLLSIM_PROGRESS_INTERVAL=1e-9 "$cs" predict --gen ring:gpus=4 --platform "$tmp/platforms/copy.xml" \
    -b 1K -e 64K -f 4 --format csv >/dev/null 2>"$tmp/err" || fail "predict with progress"
grep -Eq '^predict: 3/4 sizes \(75%\), elapsed [0-9:]+, ETA [0-9:]+, 16384 bytes$' "$tmp/err" || fail "predict progress: $(cat "$tmp/err")"
COLLSIM_PROGRESS_INTERVAL=1e-9 "$cs" predict --gen ring:gpus=4 --platform "$tmp/platforms/copy.xml" \
    -b 1K -e 4K --quiet >/dev/null 2>"$tmp/err" && [ ! -s "$tmp/err" ] || fail "predict --quiet: $(cat "$tmp/err")"
(cd "$src" && COLLSIM_PROGRESS_INTERVAL=1e-9 "$cs" validate tests/data/validation/cases.txt \
    -o "$tmp/val") >/dev/null 2>"$tmp/err" || fail "validate with progress: $(cat "$tmp/err")"
grep -Eq '^validate: ([0-9]+)/\1 cases \(100%\), elapsed [0-9:]+, ETA 0:00$' "$tmp/err" || fail "validate progress: $(cat "$tmp/err")"
(cd "$src" && COLLSIM_PROGRESS_INTERVAL=1e-9 "$cs" validate tests/data/validation/cases.txt \
    -o "$tmp/val" --quiet) >/dev/null 2>"$tmp/err" && [ ! -s "$tmp/err" ] || fail "validate --quiet: $(cat "$tmp/err")"
COLLSIM_PROGRESS_INTERVAL=soon "$cs" regress "$m" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "COLLSIM_PROGRESS_INTERVAL: 'soon' is not a number of seconds" "$tmp/err" || fail "bad interval: $(cat "$tmp/err")"
grep -q "0 of 4 predictions (1 of 1 groups)" "$tmp/out" || fail "fresh baseline summary: $(cat "$tmp/out")"
printf 'gen.algorithm = ring\ngen.gpus = 4\nprotocol = LL Simple\nplatform = %s\nsizes = 1K..4K\n' \
    "$tmp/platforms/copy.xml" >"$tmp/s.sweep"
"$cs" sweep "$tmp/s.sweep" --results "$tmp/s.results" -o "$tmp/s.csv" --quiet || fail "sweep"
"$cs" regress --init "$m" "$tmp/s.csv" >/dev/null || fail "--init from a sweep"
grep -q '^"gen:ring:gpus=4,protocol=Simple",.*,Simple,4096,' "$m" || fail "--init sweep row: $(cat "$m")"
"$cs" regress "$m" --quiet >"$tmp/out" || fail "a fresh sweep baseline moved: $(cat "$tmp/out")"
# what --init refuses: a predict CSV without its schedule, an option that repeats a column
"$cs" regress --init "$m" "$tmp/p.csv" --platform platforms/copy.xml >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "p.csv:1: no schedule column: give --schedule" "$tmp/err" || fail "--init without --schedule: $(cat "$tmp/err")"
"$cs" regress --init "$m" "$tmp/s.csv" --protocol LL >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "s.csv:1: has a protocol column; drop --protocol" "$tmp/err" || fail "--init repeated column: $(cat "$tmp/err")"
"$cs" regress "$m" --schedule x >/dev/null 2>&1
[ $? -eq 2 ] || fail "--schedule without --init accepted"

# bad baselines: wrong header, missing platform, bad size
printf 'schedule,platform\nx,y\n' >"$tmp/bad1.csv"
"$cs" regress "$tmp/bad1.csv" >/dev/null 2>&1
[ $? -eq 2 ] || fail "wrong header accepted"
printf 'schedule,platform,protocol,size_bytes,time_us,busbw_GBps,status\ngen:ring:gpus=4,platforms/none.xml,LL,1024,1,1,ok\n' >"$b"
"$cs" regress "$b" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "baseline.csv:2: platform 'platforms/none.xml' not found" "$tmp/err" || fail "missing platform: $(cat "$tmp/err")"
printf 'schedule,platform,protocol,size_bytes,time_us,busbw_GBps,status\ngen:ring:gpus=4,platforms/copy.xml,LL,12x,1,1,ok\n' >"$b"
"$cs" regress "$b" >/dev/null 2>&1
[ $? -eq 2 ] || fail "bad size accepted"
# a recorded time or status that cannot be compared is bad input (exit 2 naming the row), not a
# move; so is a baseline of a header alone, which would let every change pass
h=schedule,platform,protocol,size_bytes,time_us,busbw_GBps,status
printf '%s\ngen:ring:gpus=4,platforms/copy.xml,LL,1024,fast,1,ok\n' "$h" >"$b"
"$cs" regress "$b" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "baseline.csv:2: time_us 'fast' is not a number" "$tmp/err" || fail "non-numeric time: $(cat "$tmp/err")"
printf '%s\ngen:ring:gpus=4,platforms/copy.xml,LL,1024,12.5,1,fine\n' "$h" >"$b"
"$cs" regress "$b" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "baseline.csv:2: bad status 'fine'" "$tmp/err" || fail "unknown status: $(cat "$tmp/err")"
printf '%s\n' "$h" >"$b"
"$cs" regress "$b" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "baseline.csv: no rows" "$tmp/err" || fail "header-only baseline: $(cat "$tmp/err")"
# a size the schedule does not divide (run aligned): --update settles it, the next run passes
printf '%s\ngen:ring:gpus=4,platforms/copy.xml,LL,1024,10,1,ok\ngen:ring:gpus=4,platforms/copy.xml,LL,3000,10,1,ok\n' "$h" >"$b"
"$cs" regress "$b" --update -j 1 --quiet >/dev/null 2>"$tmp/err" ||
    fail "--update with an unaligned size: $(cat "$tmp/err")"
"$cs" regress "$b" -j 1 --quiet >"$tmp/out" 2>"$tmp/err" ||
    fail "after --update, an unaligned size still moves: $(cat "$tmp/out" "$tmp/err")"
grep -q ',3000,10,1,ok' "$b" && fail "--update left the unaligned size's row as it was"
[ "$fails" -eq 0 ] || exit 1
echo "regress: ok"
