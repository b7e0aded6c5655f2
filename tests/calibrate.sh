#!/bin/sh
# calibrate.sh: `collsim calibrate fit` on the synthetic harness fixture recovers the parameters
# it was generated from (within 2%), rejects bad input with file:line and exit 2, and gives sane
# values on the shared measurements (exit 77, SKIP, after the other checks when they are absent).
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
collsim="$CS_BUILDDIR/collsim"
fixture="$CS_SRCDIR/tests/data/calibration/synthetic-harness.csv"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# value KEY FILE: the value of <prop id="KEY" .../> in FILE.
value() {
    sed -n "s/.*<prop id=\"$1\" value=\"\\([^\"]*\\)\".*/\\1/p" "$2"
}

# near KEY WANT TOL FILE
near() {
    got=$(value "$1" "$4")
    if [ -z "$got" ] || ! awk -v g="$got" -v w="$2" -v t="$3" \
        'BEGIN { e = (g - w) / w; if (e < 0) e = -e; exit !(e <= t) }'; then
        echo "FAIL: $1 = '${got}', want $2 within $3" >&2
        fail=1
    fi
}

# expect_error RC PATTERN ARGS...: the command exits RC and its stderr matches PATTERN.
expect_error() {
    want=$1 pat=$2
    shift 2
    "$collsim" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne "$want" ] || ! grep -q -- "$pat" "$tmp/err"; then
        echo "FAIL: collsim $* exited $rc (want $want), stderr:" >&2
        cat "$tmp/err" >&2
        fail=1
    fi
}

"$collsim" calibrate fit "$fixture" --link nvlink --only-fitted -o "$tmp/p.xml" \
    --report "$tmp/r.md" || { echo "FAIL: calibrate fit on the fixture" >&2; exit 1; }
near cs.launch_s 4.0e-6 0.02 "$tmp/p.xml"
near cs.call_s.LL.nvlink 1.5e-6 0.02 "$tmp/p.xml"
near cs.call_s.LL128.nvlink 2.0e-6 0.02 "$tmp/p.xml"
near cs.call_s.Simple.nvlink 3.0e-6 0.02 "$tmp/p.xml"
near cs.tb_Bps.LL 10e9 0.02 "$tmp/p.xml"
near cs.tb_Bps.LL128 18e9 0.02 "$tmp/p.xml"
near cs.tb_Bps.Simple 22e9 0.02 "$tmp/p.xml"
near cs.copy_Bps 100e9 0.02 "$tmp/p.xml"
near cs.reduce_Bps 120e9 0.02 "$tmp/p.xml"
near cs.link_Bps.nvlink 200e9 0.02 "$tmp/p.xml"
near cs.link_lat_s.nvlink 0.8e-6 0.02 "$tmp/p.xml"
# Every line is a comment or a prop; every prop follows a comment naming the fit.
if grep -v -e '^<!-- ' -e '^<prop id="cs\.[A-Za-z0-9_.]*" value="[0-9.e+-]*"/>$' "$tmp/p.xml" |
    grep -q .; then
    echo "FAIL: unexpected lines in the parameters" >&2
    fail=1
fi
[ "$(grep -c '^<prop' "$tmp/p.xml")" -eq 11 ] || { echo "FAIL: want 11 fitted props" >&2; fail=1; }
grep -q '1 rows not ok skipped' "$tmp/r.md" || { echo "FAIL: report misses the skipped row" >&2; fail=1; }
grep -q '| 16777216 |' "$tmp/r.md" || { echo "FAIL: report misses residuals" >&2; fail=1; }
# Without --only-fitted every key is written, the unfitted ones with their prior.
"$collsim" calibrate fit "$fixture" -o "$tmp/all.xml" || fail=1
# ... and every key of src/params.h is there: without --link the 6 keys that need no link class
# are fitted (launch, three tb_Bps, copy, reduce), the rest keep their priors.
total=$(grep -c '^<prop' "$tmp/all.xml")
priors=$(grep -c 'not fitted; prior' "$tmp/all.xml")
[ "$total" -ge 22 ] && [ $((total - priors)) -eq 6 ] ||
    { echo "FAIL: $total props, $priors priors" >&2; fail=1; }

# The harness's own format fixture (tests/data/calibration/README lists its parameters).
"$collsim" calibrate fit "$CS_SRCDIR/tests/data/calibration/format-fixture.csv" --link nvlink \
    --only-fitted -o "$tmp/ff.xml" --report "$tmp/ff.md" || { echo "FAIL: format fixture" >&2; fail=1; }
near cs.launch_s 2.5e-6 0.02 "$tmp/ff.xml"
near cs.call_s.LL.nvlink 1.0e-6 0.02 "$tmp/ff.xml"
near cs.call_s.LL128.nvlink 1.5e-6 0.02 "$tmp/ff.xml"
near cs.call_s.Simple.nvlink 3.0e-6 0.02 "$tmp/ff.xml"
near cs.tb_Bps.LL 1.5e10 0.02 "$tmp/ff.xml"
near cs.tb_Bps.LL128 4e10 0.02 "$tmp/ff.xml"
near cs.tb_Bps.Simple 6e10 0.02 "$tmp/ff.xml"
near cs.copy_Bps 1e11 0.02 "$tmp/ff.xml"          # 2 x 5e10 (read + write)
near cs.reduce_Bps 1.05e11 0.02 "$tmp/ff.xml"     # 3 x 3.5e10 (two reads, one write)
near cs.link_Bps.nvlink 2e11 0.02 "$tmp/ff.xml"
near cs.link_lat_s.nvlink 0.8e-6 0.02 "$tmp/ff.xml"  # half of the 1.6 us round trip
grep -q '1 rows not ok skipped' "$tmp/ff.md" || { echo "FAIL: bad_data row not skipped" >&2; fail=1; }

# Bad input: exit 2 with file:line.
printf 'size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n1024,10,0.1,0.2,in_place\n2048,abc,0.1,0.2,in_place\n' >"$tmp/bad1.csv"
expect_error 2 "bad1.csv:3: column time_us: 'abc' is not a finite number" calibrate fit "$tmp/bad1.csv" --ranks 8
printf 'size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n1024,10,0.1,0.2,in_place\n2048,0,0.1,0.2,in_place\n' >"$tmp/bad2.csv"
expect_error 2 "bad2.csv:3: size 2048 B, time 0 us" calibrate fit "$tmp/bad2.csv" --ranks 8
printf 'size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n1024,10,0.1,0.2\n' >"$tmp/bad3.csv"
expect_error 2 "bad3.csv:2: 4 fields, the header has 5" calibrate fit "$tmp/bad3.csv"
printf 'a,b\n1,2\n' >"$tmp/bad4.csv"
expect_error 2 "bad4.csv:1: neither a measurement table" calibrate fit "$tmp/bad4.csv"
printf 'size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n1024,10,,,in_place\n2048,11,,,in_place\n4096,12,,,in_place\n' >"$tmp/noranks.csv"
expect_error 2 "give --ranks" calibrate fit "$tmp/noranks.csv"
printf 'size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n1024,10,,,in_place\n1024,11,,,in_place\n1024,12,,,in_place\n' >"$tmp/onesize.csv"
expect_error 2 "need 2 distinct sizes" calibrate fit "$tmp/onesize.csv" --ranks 4
sed 's/^p2p_bw,ce,copy,0,1,1,1,0,0,4096,16,0,/p2p_bw,ce,copy,0,1,1,1,0,0,4096,0,0,/' "$fixture" >"$tmp/bad5.csv"
expect_error 2 "bad5.csv:[0-9]*: ops 0" calibrate fit "$tmp/bad5.csv"
expect_error 2 "cannot open" calibrate fit "$tmp/missing.csv"
expect_error 2 "needs at least one CSV" calibrate fit
expect_error 2 "unknown subcommand" calibrate frobnicate
expect_error 2 "is not nvlink, pcie or net" calibrate fit "$fixture" --link pci
expect_error 2 "is not MIN:MAX" calibrate fit "$fixture" --sizes 12
expect_error 2 "unknown platform parameter" calibrate fit "$fixture" --set cs.nope=1
expect_error 2 "is not MIN:MAX" calibrate fit "$fixture" --sizes 1e30:
expect_error 2 "is not MIN:MAX" calibrate fit "$fixture" --sizes 1.5K:
expect_error 2 "ranks: '8abc' is not a number" calibrate fit "$fixture" --ranks 8abc
expect_error 2 "ranks: '99999999999' is out of range" calibrate fit "$fixture" --ranks 99999999999
expect_error 2 "unknown option '--colour'" calibrate fit "$fixture" --colour red
expect_error 2 "option '--link' needs a value" calibrate fit "$fixture" --link
printf 'size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n1024.5,10,,,in_place\n' >"$tmp/bad6.csv"
expect_error 2 "bad6.csv:2: size_bytes '1024.5' is not a whole number" calibrate fit "$tmp/bad6.csv" --ranks 8
# The harness CSV's bytes are whole numbers up to 1 PiB too; a tiny time that underflows is a number.
awk -F, -v OFS=, '/^#/ || !n++ { print; next } !d++ { $10 = "1e30" } { print }' "$fixture" >"$tmp/bad7.csv"
expect_error 2 "bad7.csv:[0-9]*: bytes '1e30' is not a whole number" calibrate fit "$tmp/bad7.csv"
awk -F, -v OFS=, '/^#/ || !n++ { print; next } !d++ { $10 = "4096.5" } { print }' "$fixture" >"$tmp/bad8.csv"
expect_error 2 "bad8.csv:[0-9]*: bytes '4096.5' is not a whole number" calibrate fit "$tmp/bad8.csv"
printf 'size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n1024,1e-308,,,in_place\n2048,11,,,in_place\n' >"$tmp/tiny.csv"
"$collsim" calibrate fit "$tmp/tiny.csv" --ranks 4 -o "$tmp/tiny.xml" >/dev/null 2>"$tmp/err"
! grep -q "not a finite number" "$tmp/err" || { echo "FAIL: 1e-308 is not a number: $(cat "$tmp/err")" >&2; fail=1; }
# Attached option values (--opt=value, -oFILE) read as the separate ones.
"$collsim" calibrate fit "$fixture" --link=nvlink --only-fitted -o"$tmp/p2.xml" &&
    cmp -s "$tmp/p.xml" "$tmp/p2.xml" || { echo "FAIL: attached option values" >&2; fail=1; }

# The shared measurements, when present: sane values.
# Raw nccl-tests output: the OCI table written as nccl-tests prints it fits exactly as the table
# (the same props; only the comments name the other file); a row reporting wrong values, or one
# that does not match the header, exits 2 at its line.
oci="$CS_SRCDIR/tests/data/validation/oci-bmgpu48-a100sxm40-1node-8gpu.csv"
sh "$CS_SRCDIR/tests/data/nccl-tests/to-nccl-tests.sh" "$oci" >"$tmp/oci.out"
"$collsim" calibrate fit "$oci" --link nvlink -o "$tmp/csv.props" >/dev/null 2>&1
"$collsim" calibrate fit "$tmp/oci.out" --link nvlink -o "$tmp/raw.props" >"$tmp/out" 2>&1 ||
    { echo "FAIL: calibrate fit on nccl-tests output: $(cat "$tmp/out")" >&2; fail=1; }
grep -v '^<!--' "$tmp/csv.props" >"$tmp/a"
grep -v '^<!--' "$tmp/raw.props" >"$tmp/b"
[ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b" ||
    { echo "FAIL: nccl-tests output and its table fit differently" >&2; diff "$tmp/a" "$tmp/b" >&2; fail=1; }
line=$(grep -n '^ *1024 ' "$tmp/oci.out" | cut -d: -f1)
sed "${line}s/      0 /      3 /" "$tmp/oci.out" >"$tmp/wrong.out"
"$collsim" calibrate fit "$tmp/wrong.out" --link nvlink >"$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "wrong.out:$line: nccl-tests reports 3 wrong values" "$tmp/out" ||
    { echo "FAIL: wrong values in nccl-tests output: $(cat "$tmp/out")" >&2; fail=1; }
sed "${line}s/ sum / /" "$tmp/oci.out" >"$tmp/short.out"
"$collsim" calibrate fit "$tmp/short.out" --link nvlink >"$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "short.out:$line: an nccl-tests row of 12 fields under a header of 13" "$tmp/out" ||
    { echo "FAIL: short nccl-tests row: $(cat "$tmp/out")" >&2; fail=1; }

shared="${CS_SHARED_DATA:-$CS_SRCDIR/../shared/data}/measurements"
if [ -d "$shared" ]; then
    "$collsim" calibrate fit "$shared/nccltests123-dgxa100-ring-1ch-smallmsg-latency.csv" \
        "$shared/oci-bmgpu48-a100sxm40-1node-8gpu.csv" --link nvlink --only-fitted \
        -o "$tmp/oci.xml" --report "$tmp/oci.md" || fail=1
    near cs.launch_s 6.0e-6 0.1 "$tmp/oci.xml"          # 10 us at 2 steps, ~1.9 us per step
    near cs.link_Bps.nvlink 232e9 0.03 "$tmp/oci.xml"   # busbw 230-235 GB/s at >= 1 GiB
    "$collsim" calibrate fit "$shared/azure-aibench-ndv4-a100sxm80-1node-8gpu.csv" --ranks 8 \
        --sizes 256M: --segments 1 --only-fitted -o "$tmp/az.xml" || fail=1
    near cs.link_Bps.nvlink 231e9 0.03 "$tmp/az.xml"
    "$collsim" calibrate fit "$shared/sm02-a100pcie40-1node-4gpu-sys.csv" --link pcie \
        --segments 2 --only-fitted -o "$tmp/sm02.xml" || fail=1
    near cs.link_Bps.pcie 5.2e9 0.15 "$tmp/sm02.xml"    # busbw ~5 GB/s across sockets
    # The committed fits agree with fresh fits of the same data (tests/platforms.sh checks the
    # committed platforms against the committed fits: 234.0 GB/s x 1.0316 through the replay).
    (cd "$shared" && "$collsim" calibrate fit oci-bmgpu48-a100sxm40-1node-8gpu.csv --link nvlink \
        --proto Simple --sizes 256M: --segments 1 --only-fitted -o "$tmp/ocibw.xml") || fail=1
    committed="$CS_SRCDIR/results/validation/fit-oci-bandwidth.props"
    near cs.link_Bps.nvlink "$(value cs.link_Bps.nvlink "$committed")" 1e-6 "$tmp/ocibw.xml"
    (cd "$shared" && "$collsim" calibrate fit nccltests123-dgxa100-ring-1ch-smallmsg-latency.csv \
        --link nvlink --proto LL --only-fitted -o "$tmp/lat.props") || fail=1
    cmp -s "$tmp/lat.props" "$CS_SRCDIR/results/validation/fit-ring-latency.props" ||
        { echo "FAIL: results/validation/fit-ring-latency.props differs from a fresh fit"; fail=1; }
    # cs.link_eff.LL.nvlink: the least-squares slope of NDv4's medians at 64-512 KiB against
    # NCCL's LL channels there (2, 4, 8, 16), per ring step, as a share of the port
    # (results/validation/fit-ndv4-ll-share.md).
    share=$(awk -F, 'NR > 1 && $1 >= 65536 && $1 <= 524288 { t[$1] = t[$1] " " $2 }
        END { n = 0; for (s in t) { split(t[s], v, " "); x = s / 32768; y = (v[1] + v[2]) / 2;
                  n++; sx += x; sy += y; sxx += x * x; sxy += x * y }
              b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
              printf "%.3f", 2 * 4096 / (b / 14 * 1e-6) / 241.402e9 }' \
        "$shared/msccl-leaderboard-ndv4-1node-8gpu-nccl284.csv")
    near cs.link_eff.LL.nvlink "$share" 1e-9 "$CS_SRCDIR/platforms/dgx-a100.props"
    want=$(awk -v b="$(value cs.link_Bps.nvlink "$committed")" 'BEGIN { printf "%.6g", b * 1.0316 }')
    near cs.link_Bps.nvlink "$want" 1e-5 "$CS_SRCDIR/platforms/dgx-a100.xml"
else
    echo "calibrate.sh: SKIP: $shared absent; the fits of the shared measurements not run"
    [ "$fail" -eq 0 ] && exit 77
fi
exit $fail
