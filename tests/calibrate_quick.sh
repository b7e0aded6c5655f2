#!/bin/sh
# calibrate_quick.sh: scripts/calibrate-quick on a fake device. The fixture is made here, not
# measured: the synthetic harness CSV of tests/data/calibration, and for one schedule an executor
# CSV and a per-step trace in the harness's layout whose times are 1.2 x collsim's own prediction
# on a virtual platform. The script must fit the CSV, write the virtual platform, put every
# executor row beside a prediction, and match every measured step with a predicted one; without a
# GPU the harness's exit 77 passes through.
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
cs="$builddir/collsim"
script="$srcdir/scripts/calibrate-quick"
xmldir="$srcdir/tests/data/msccl-xml"
name=allreduce_a100_ncv4.4gpu.1inst.LL
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=$((fail + 1)); }

fix="$tmp/fake"
mkdir -p "$fix"
cp "$srcdir/tests/data/calibration/synthetic-harness.csv" "$fix/calib-fake-19700101.csv"
"$cs" platform virtual --gpu a100 --ranks 4 -o "$tmp/v4.xml" || no "platform virtual"
# executor CSV: predict's columns, times 1.2 x the prediction
{
    echo "size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status"
    for s in 65536 1048576; do
        "$cs" predict "$xmldir/$name.xml" --platform "$tmp/v4.xml" -b $s -e $s --format csv | tail -n 1
    done | awk -F, -v OFS=, '{ $4 = sprintf("%.3f", $4 * 1.2); print }'
} >"$fix/exec-$name.csv"
# trace: the predicted steps, their clock stretched by 1.2, in the harness's layout
"$cs" predict "$xmldir/$name.xml" --platform "$tmp/v4.xml" -b 1M -e 1M --trace "$tmp/p.json" >/dev/null || no "predict --trace"
"$cs" tracediff "$tmp/p.json" "$tmp/p.json" --top 0 --csv "$tmp/rows.csv" >/dev/null || no "tracediff rows"
nsteps=$(($(wc -l <"$tmp/rows.csv") - 1))
awk -F, 'NR == 1 {
        printf "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"collective\":\"allreduce\",\"protocol\":\"LL\","
        printf "\"gpus\":4,\"size_bytes\":1048576,\"iterations\":1,\"source\":\"fake-device\"},\"traceEvents\":[\n"
        next
    }
    {
        printf "%s{\"name\":\"%s\",\"cat\":\"step\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,\"args\":{\"iteration\":%d,\"step\":%d}}",
            (NR > 2 ? ",\n" : ""), $5, $1, $2, 1000 + 1.2 * $6, 1.2 * $7, $3, $4
    }
    END { printf "\n]}\n" }' "$tmp/rows.csv" >"$fix/exec-$name-1048576.trace.json"

"$script" --from "$fix" --gpu a100 --collsim "$cs" --xml-dir "$xmldir" 2>"$tmp/err" || { no "calibrate-quick exit $?"; cat "$tmp/err"; }
for f in fit.props fit.md virtual-a100-4.xml predicted.csv report.md "tracediff-$name-1048576.txt"; do
    [ -s "$fix/$f" ] || no "no $f"
done
# the synthetic truth's LL loopback rate (10 GB/s) is fitted and reaches the virtual platform
v=$(sed -n 's/.*id="cs.tb_Bps.LL" value="\([^"]*\)".*/\1/p' "$fix/fit.props")
awk -v v="$v" 'BEGIN { exit !(v > 9.9e9 && v < 10.1e9) }' || no "fit.props cs.tb_Bps.LL '$v', want 10e9"
grep -q "id=\"cs.tb_Bps.LL\" value=\"$v\"" "$fix/virtual-a100-4.xml" || no "the fit does not reach the platform"
grep -q 'id="cs.ranks_per_gpu" value="4"' "$fix/virtual-a100-4.xml" || no "virtual platform ranks"
[ "$(grep -c "^$name,4,\(65536\|1048576\),[0-9.]*,ok,[0-9.]*,ok,-\{0,1\}[0-9.]*$" "$fix/predicted.csv")" -eq 2 ] ||
    { no "predicted.csv rows"; cat "$fix/predicted.csv"; }
grep -q "steps matched $nsteps; only measured 0; only predicted 0" "$fix/tracediff-$name-1048576.txt" ||
    { no "trace steps do not all match"; cat "$fix/tracediff-$name-1048576.txt"; }
grep -q "^|error| over 2 rows: median" "$fix/report.md" || no "report summary"
grep -q "steps matched $nsteps" "$fix/report.md" || no "report traces"

# No GPU: the harness's exit 77 is the script's.
printf '#!/bin/sh\necho "no CUDA device" >&2\nexit 77\n' >"$tmp/nogpu"
chmod +x "$tmp/nogpu"
"$script" --gpu h200 -o "$tmp/run" --harness "$tmp/nogpu" --collsim "$cs" 2>/dev/null
[ $? -eq 77 ] || no "no GPU: want exit 77"
"$script" --gpu v100 --collsim "$cs" 2>/dev/null
[ $? -eq 2 ] || no "unknown GPU: want exit 2"
"$script" --from "$tmp/none" --gpu a100 --collsim "$cs" 2>/dev/null
[ $? -eq 2 ] || no "missing --from folder: want exit 2"

[ "$fail" -eq 0 ] && echo "calibrate_quick: all passed"
exit "$fail"
