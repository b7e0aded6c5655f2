#!/bin/sh
# calibrate.sh: `collsim calibrate fit` on the synthetic harness fixture recovers the parameters
# it was generated from (within 2%), rejects bad input with file:line and exit 2, and gives sane
# values on the shared measurements (exit 77, SKIP, after the other checks when they are absent).
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
collsim="$CS_BUILDDIR/collsim"
fixture="$CS_SRCDIR/tests/data/calibration/synthetic-harness.csv"
. "$CS_SRCDIR/tests/lib.sh"

# value KEY FILE: the value of <prop id="KEY" .../> in FILE.
value() {
    sed -n "s/.*<prop id=\"$1\" value=\"\\([^\"]*\\)\".*/\\1/p" "$2"
}

# near KEY WANT TOL FILE
near() {
    got=$(value "$1" "$4")
    if [ -z "$got" ] || ! awk -v g="$got" -v w="$2" -v t="$3" \
        'BEGIN { e = (g - w) / w; if (e < 0) e = -e; exit !(e <= t) }'; then
        fail "$1 = '${got}', want $2 within $3"
    fi
}

# absent KEY FILE: no <prop id="KEY"> in FILE.
absent() {
    if [ -n "$(value "$1" "$2")" ]; then
        fail "$1 = $(value "$1" "$2") in $2, want none"
    fi
}

# expect_error RC PATTERN ARGS...: the command exits RC and its stderr matches PATTERN.
expect_error() {
    want=$1 pat=$2
    shift 2
    "$collsim" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne "$want" ] || ! grep -q -- "$pat" "$tmp/err"; then
        fail "collsim $* exited $rc (want $want), stderr:"
        cat "$tmp/err" >&2
    fi
}

"$collsim" calibrate fit "$fixture" --link nvlink --only-fitted -o "$tmp/p.xml" \
    --report "$tmp/r.md" || { fail "calibrate fit on the fixture"; exit 1; }
# Its launch rows are back-to-back ones and its protocol series loopbacks of one call count:
# neither cs.launch_s (the isolated launch) nor a link class's cs.call_s comes from them.
absent cs.launch_s "$tmp/p.xml"
absent cs.call_s.LL.nvlink "$tmp/p.xml"
absent cs.call_s.LL128.nvlink "$tmp/p.xml"
absent cs.call_s.Simple.nvlink "$tmp/p.xml"
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
    fail "unexpected lines in the parameters"
fi
[ "$(grep -c '^<prop' "$tmp/p.xml")" -eq 7 ] || fail "want 7 fitted props"
grep -q '1 rows not ok skipped' "$tmp/r.md" || fail "report misses the skipped row"
grep -q '| 16777216 |' "$tmp/r.md" || fail "report misses residuals"
# Without --only-fitted every key is written, the unfitted ones with their prior.
"$collsim" calibrate fit "$fixture" -o "$tmp/all.xml" || fail "calibrate fit without --only-fitted"
# ... and every key of src/params.h is there: without --link the 6 keys that need no link class
# are fitted (three tb_Bps, copy, reduce), the rest keep their priors.
total=$(grep -c '^<prop' "$tmp/all.xml")
priors=$(grep -c 'not fitted; prior' "$tmp/all.xml")
[ "$total" -ge 22 ] && [ $((total - priors)) -eq 5 ] ||
    fail "$total props, $priors priors"

# The harness's own format fixture (tests/data/calibration/README lists its parameters).
"$collsim" calibrate fit "$CS_SRCDIR/tests/data/calibration/format-fixture.csv" --link nvlink \
    --only-fitted -o "$tmp/ff.xml" --report "$tmp/ff.md" || fail "format fixture"
absent cs.launch_s "$tmp/ff.xml"             # back-to-back launches only
absent cs.call_s.LL.nvlink "$tmp/ff.xml"      # loopback protocol series cross no link
grep -q 'launch 0.000 us, per call 1.000 us, rate 15 GB/s' "$tmp/ff.md" ||
    fail "format fixture's LL launch + calls fit"
near cs.tb_Bps.LL 1.5e10 0.02 "$tmp/ff.xml"
near cs.tb_Bps.LL128 4e10 0.02 "$tmp/ff.xml"
near cs.tb_Bps.Simple 6e10 0.02 "$tmp/ff.xml"
near cs.copy_Bps 1e11 0.02 "$tmp/ff.xml"          # 2 x 5e10 (read + write)
near cs.reduce_Bps 1.05e11 0.02 "$tmp/ff.xml"     # 3 x 3.5e10 (two reads, one write)
near cs.link_Bps.nvlink 2e11 0.02 "$tmp/ff.xml"
near cs.link_lat_s.nvlink 0.8e-6 0.02 "$tmp/ff.xml"  # half of the 1.6 us round trip
grep -q '1 rows not ok skipped' "$tmp/ff.md" || fail "bad_data row not skipped"

# Synthetic truth of issue 15 in the harness's CSV format (0.5% noise): a 5 us isolated launch of
# one threadblock (the other launch rows differ); loopback protocol pairs of 1, 8 and 64 calls
# per launch, t = 5 us + ops x (call + bytes / rate) with LL 1.5 us + B/10 GB/s, LL128 2 us +
# B/18 GB/s, Simple 4.5 us + B/22 GB/s, and contended runs of 16 and 66 pairs at lower rates;
# one pair between GPUs 0 and 1 (launch 6 us) with LL 2.0, LL128 2.8 and Simple 6.0 us per call;
# whole schedules (exec) of 20 us + size / 5 GB/s; a 1.6 us ping-pong round trip.
awk 'function unif() { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 }
function noisy(t,   s, i) { s = 0; for (i = 0; i < 12; i++) s += unif(); return t * (1 + 0.005 * (s - 6)) }
function row(test, mech, op, src, dst, conc, nb, chunk, bytes, ops, k, t) {
    printf "%s,%s,%s,%d,%d,%d,%d,512,%d,%d,%d,%d,%.6e,1410,ok\n", test, mech, op, src, dst, conc,
        nb, chunk, bytes, ops, k, noisy(t)
}
function proto(test, mech, src, dst, conc, launch, call, rate,   o, b, k) {
    for (o = 1; o <= 64; o *= 8)
        for (b = 1024; b <= 262144; b *= 4)
            for (k = 0; k < 5; k++)
                row(test, mech, "send_recv", src, dst, conc, 1, b, b, o, k, launch + o * (call + b / rate))
}
BEGIN {
    seed = 4242
    print "# SYNTHETIC truth written by tests/calibrate.sh, not a measurement"
    print "test,mech,op,src,dst,concurrent,nblocks,nthreads,chunk_bytes,bytes,ops,sample,time_s,sm_mhz,status"
    for (k = 0; k < 5; k++) {
        row("launch", "launch", "isolated", 0, 0, 1, 1, 0, 0, 1, k, 5e-6)
        row("launch", "launch", "isolated", 0, 0, 1, 108, 0, 0, 1, k, 9e-6)
        row("launch", "launch", "back_to_back", 0, 0, 1, 1, 0, 0, 1000, k, 1000 * 2e-6)
        row("launch", "launch", "params_4096", 0, 0, 1, 1, 0, 4096, 1000, k, 1000 * 3e-6)
        for (b = 8; b <= 65536; b *= 8)
            row("p2p_lat", "flag_pingpong", "rtt", 0, 1, 1, 1, 0, b, 10000, k, 10000 * (1.6e-6 + b / 100e9))
        for (s = 65536; s <= 16777216; s *= 4)
            row("exec", "ll", "allreduce_ring", 0, 0, 8, 8, s / 64, s, 1, k, 20e-6 + s / 5e9)
    }
    proto("proto", "ll", 0, 0, 1, 5e-6, 1.5e-6, 10e9)
    proto("proto", "ll128", 0, 0, 1, 5e-6, 2.0e-6, 18e9)
    proto("proto", "simple", 0, 0, 1, 5e-6, 4.5e-6, 22e9)
    proto("proto", "ll", 0, 0, 16, 5e-6, 1.5e-6, 4e9)
    proto("proto", "ll128", 0, 0, 66, 5e-6, 2.0e-6, 6e9)
    proto("proto_link", "ll", 0, 1, 1, 6e-6, 2.0e-6, 8e9)
    proto("proto_link", "ll128", 0, 1, 1, 6e-6, 2.8e-6, 16e9)
    proto("proto_link", "simple", 0, 1, 1, 6e-6, 6.0e-6, 20e9)
}' >"$tmp/truth.csv"
"$collsim" calibrate fit "$tmp/truth.csv" --link nvlink --only-fitted -o "$tmp/t.xml" \
    --report "$tmp/t.md" || fail "calibrate fit on the synthetic truth"
near cs.launch_s 5e-6 0.02 "$tmp/t.xml"               # the isolated launch of one threadblock
near cs.tb_Bps.LL 10e9 0.02 "$tmp/t.xml"              # one loopback pair, not 16 or 66
near cs.tb_Bps.LL128 18e9 0.02 "$tmp/t.xml"
near cs.tb_Bps.Simple 22e9 0.02 "$tmp/t.xml"
near cs.call_s.LL128.nvlink 0.8e-6 0.02 "$tmp/t.xml"  # what LL128 adds to LL between GPUs
near cs.call_s.Simple.nvlink 4.0e-6 0.02 "$tmp/t.xml"
near cs.link_lat_s.nvlink 0.8e-6 0.02 "$tmp/t.xml"
absent cs.call_s.LL.nvlink "$tmp/t.xml"               # LL's per-hop cost is cs.link_lat_s
[ "$(grep -c '^<prop' "$tmp/t.xml")" -eq 7 ] || fail "want 7 fitted props"
grep -q '^25 exec rows (whole schedules) left out of the fit' "$tmp/t.md" ||
    fail "exec rows not reported apart"
# The loopback LL pair's per-call cost and launch come back apart, and are only reported.
grep -Eq 'launch (4\.9|5\.0)[0-9]* us, per call 1\.[45][0-9]* us, rate (9\.9|10\.0)[0-9]* GB/s' \
    "$tmp/t.md" && grep -Eq 'per-call cost 1\.[45][0-9]* us: a loopback on one GPU crosses no link' \
    "$tmp/t.md" ||
    fail "loopback LL launch + calls fit not reported"
# Without the LL series of the pair, what LL128 and Simple add to LL is not known.
grep -v '^proto_link,ll,' "$tmp/truth.csv" >"$tmp/noll.csv"
"$collsim" calibrate fit "$tmp/noll.csv" --link nvlink --only-fitted -o "$tmp/noll.xml" \
    --report "$tmp/noll.md" || fail "calibrate fit without the LL pair"
absent cs.call_s.LL128.nvlink "$tmp/noll.xml"
grep -q 'no LL series of the same pair: what LL128 adds to LL not known' "$tmp/noll.md" ||
    fail "missing LL pair not reported"

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
! grep -q "not a finite number" "$tmp/err" || fail "1e-308 is not a number: $(cat "$tmp/err")"
# Attached option values (--opt=value, -oFILE) read as the separate ones.
"$collsim" calibrate fit "$fixture" --link=nvlink --only-fitted -o"$tmp/p2.xml" &&
    cmp -s "$tmp/p.xml" "$tmp/p2.xml" || fail "attached option values"

# The shared measurements, when present: sane values.
# Raw nccl-tests output: the OCI table written as nccl-tests prints it fits exactly as the table
# (the same props; only the comments name the other file); a row reporting wrong values, or one
# that does not match the header, exits 2 at its line.
oci="$CS_SRCDIR/tests/data/validation/oci-bmgpu48-a100sxm40-1node-8gpu.csv"
sh "$CS_SRCDIR/tests/data/nccl-tests/to-nccl-tests.sh" "$oci" >"$tmp/oci.out"
"$collsim" calibrate fit "$oci" --link nvlink -o "$tmp/csv.props" >/dev/null 2>&1
"$collsim" calibrate fit "$tmp/oci.out" --link nvlink -o "$tmp/raw.props" >"$tmp/out" 2>&1 ||
    fail "calibrate fit on nccl-tests output: $(cat "$tmp/out")"
grep -v '^<!--' "$tmp/csv.props" >"$tmp/a"
grep -v '^<!--' "$tmp/raw.props" >"$tmp/b"
[ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b" ||
    { fail "nccl-tests output and its table fit differently"; diff "$tmp/a" "$tmp/b" >&2; }
line=$(grep -n '^ *1024 ' "$tmp/oci.out" | cut -d: -f1)
sed "${line}s/      0 /      3 /" "$tmp/oci.out" >"$tmp/wrong.out"
"$collsim" calibrate fit "$tmp/wrong.out" --link nvlink >"$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "wrong.out:$line: nccl-tests reports 3 wrong values" "$tmp/out" ||
    fail "wrong values in nccl-tests output: $(cat "$tmp/out")"
sed "${line}s/ sum / /" "$tmp/oci.out" >"$tmp/short.out"
"$collsim" calibrate fit "$tmp/short.out" --link nvlink >"$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "short.out:$line: an nccl-tests row of 12 fields under a header of 13" "$tmp/out" ||
    fail "short nccl-tests row: $(cat "$tmp/out")"

shared="${CS_SHARED_DATA:-$CS_SRCDIR/../shared/data}/measurements"
if [ -d "$shared" ]; then
    "$collsim" calibrate fit "$shared/nccltests123-dgxa100-ring-1ch-smallmsg-latency.csv" \
        "$shared/oci-bmgpu48-a100sxm40-1node-8gpu.csv" --link nvlink --only-fitted \
        -o "$tmp/oci.xml" --report "$tmp/oci.md" || fail "calibrate fit oci.xml"
    near cs.launch_s 6.0e-6 0.1 "$tmp/oci.xml"          # 10 us at 2 steps, ~1.9 us per step
    near cs.link_Bps.nvlink 232e9 0.03 "$tmp/oci.xml"   # busbw 230-235 GB/s at >= 1 GiB
    "$collsim" calibrate fit "$shared/azure-aibench-ndv4-a100sxm80-1node-8gpu.csv" --ranks 8 \
        --sizes 256M: --segments 1 --only-fitted -o "$tmp/az.xml" || fail "calibrate fit az.xml"
    near cs.link_Bps.nvlink 231e9 0.03 "$tmp/az.xml"
    "$collsim" calibrate fit "$shared/sm02-a100pcie40-1node-4gpu-sys.csv" --link pcie \
        --segments 2 --only-fitted -o "$tmp/sm02.xml" || fail "calibrate fit sm02.xml"
    near cs.link_Bps.pcie 5.2e9 0.15 "$tmp/sm02.xml"    # busbw ~5 GB/s across sockets
    # The committed alpha-beta fits (results/validation: checks beside the pooled model fit)
    # agree with fresh fits of the same data.
    (cd "$shared" && "$collsim" calibrate fit oci-bmgpu48-a100sxm40-1node-8gpu.csv --link nvlink \
        --proto Simple --sizes 256M: --segments 1 --only-fitted -o "$tmp/ocibw.xml") || fail "calibrate fit ocibw.xml"
    committed="$CS_SRCDIR/results/validation/fit-oci-bandwidth.props"
    near cs.link_Bps.nvlink "$(value cs.link_Bps.nvlink "$committed")" 1e-6 "$tmp/ocibw.xml"
    (cd "$shared" && "$collsim" calibrate fit nccltests123-dgxa100-ring-1ch-smallmsg-latency.csv \
        --link nvlink --proto LL --only-fitted -o "$tmp/lat.props") || fail "calibrate fit lat.props"
    cmp -s "$tmp/lat.props" "$CS_SRCDIR/results/validation/fit-ring-latency.props" ||
        fail "results/validation/fit-ring-latency.props differs from a fresh fit"
else
    echo "calibrate.sh: SKIP: $shared absent; the fits of the shared measurements not run"
    [ "$fails" -eq 0 ] && exit 77
fi
[ "$fails" -eq 0 ]
