#!/bin/sh
# regress.sh: `collsim regress` on a quick subset of the committed baseline (exit 0), and on a copied
# platform whose PCIe link is made slower (exit 1 with a table of the moved predictions); --update
# then makes it pass again, and a bad baseline is refused.
set -u
src=${CS_SRCDIR:?}
cs=${CS_BUILDDIR:?}/collsim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

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
# --update accepts the change, after which nothing moves
"$cs" regress "$b" --update >/dev/null || fail "--update"
"$cs" regress "$b" >/dev/null || fail "moved after --update"

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
echo "regress: ok"
