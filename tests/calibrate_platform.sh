#!/bin/sh
# calibrate_platform.sh: `collsim calibrate platform` recovers the launch and link bandwidth of a
# table the model itself predicted, rejects bad input with exit 2, and (with ../shared) the
# README's walk-through runs as written and its platform re-predicts the fitted table within the
# residuals its report states (exit 77, SKIP, after the other checks when ../shared is absent).
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
collsim="$CS_BUILDDIR/collsim"
. "$CS_SRCDIR/tests/lib.sh"

value() { # KEY FILE: the value of <prop id="KEY" .../> in FILE
    sed -n "s/.*<prop id=\"$1\" value=\"\\([^\"]*\\)\".*/\\1/p" "$2" | tail -n 1
}
near() { # WHAT GOT WANT RELTOL
    awk -v g="$2" -v w="$3" -v t="$4" \
        'BEGIN { d = (g - w) / w; if (d < 0) d = -d; exit !(g != "" && d <= t) }' ||
        fail "$1: got '$2', want $3 within $4"
}

# predicted SPEC PLATFORM MEAS OUT: per size of MEAS, the fastest of LL, LL128 and Simple at that
# size rounded up to the schedule's granularity (as the fit rounds it: the smallest size the
# executor runs at or above it; predict itself aligns down), as "size time_us" lines. The
# granularity is predict's smallest nonzero aligned size.
predicted() {
    g=$("$collsim" predict --gen "$1" --platform "$2" -b 1 -e 1G --format csv 2>/dev/null |
        sed -n '2s/,.*//p')
    for s in $(awk -F, 'NR > 1 { print $1 }' "$3" | sort -un); do
        r=$(((s + g - 1) / g * g))
        for p in LL LL128 Simple; do
            "$collsim" predict --gen "$1" --platform "$2" --protocol "$p" -b "$r" -e "$r" \
                --format csv 2>/dev/null | awk -F, -v s="$s" 'NR > 1 && $7 == "ok" { print s, $4 }'
        done | sort -k2,2g | head -n 1
    done >"$4"
}

# residuals MEAS PRED: per measured size (the median of its rows) the prediction of that size,
# as "size error" lines.
residuals() {
    awk -F, 'NR > 1 { print $1, $2 }' "$1" | sort -k1,1n -k2,2g |
        awk '{ if ($1 != s && n) { print s, (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2); n = 0 }
               s = $1; v[++n] = $2 }
             END { if (n) print s, (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2) }' |
        awk 'NR == FNR { pt[$1] = $2; next } ($1 in pt) { print $1, (pt[$1] - $2) / $2 }' "$2" -
}

# --- a table the model predicted: the fit finds the launch and bandwidth it was made with.
spec=ring:gpus=8,channels=24,instances=1,protocol=Simple
"$collsim" platform dgx-a100 --set cs.launch_s=7e-6 --set cs.link_Bps.nvlink=200e9 \
    -o "$tmp/truth.xml" || fail "platform dgx-a100 for the predicted table"
"$collsim" predict --gen "$spec" --platform "$tmp/truth.xml" --protocol Simple -b 1K -e 8G -f 8 \
    --format csv >"$tmp/table.csv" 2>/dev/null || fail "predict the table to fit"
"$collsim" calibrate platform --family dgx-a100 "$tmp/table.csv" --gen "$spec" \
    --protocols Simple --tol 0.01 -o "$tmp/fit.xml" --props "$tmp/fit.props" \
    --report "$tmp/fit.md" ||
    fail "calibrate platform on a predicted table"
near cs.launch_s "$(value cs.launch_s "$tmp/fit.xml")" 7e-6 1e-3
near cs.link_Bps.nvlink "$(value cs.link_Bps.nvlink "$tmp/fit.xml")" 200e9 1e-3
grep -q '^| `cs.launch_s` | [1-9][0-9]* | 46.200 us | 7.000 us |' "$tmp/fit.md" &&
    grep -q '^| `cs.link_Bps.nvlink` | [1-9][0-9]* | 194 GB/s | 200 GB/s |' "$tmp/fit.md" &&
    grep -q 'iterations\{0,1\} (one prediction of the bands each), converged' "$tmp/fit.md" ||
    { fail "the report's keys and iterations:"; cat "$tmp/fit.md" >&2; }
# The props file holds the two adjusted keys; the platform written from it has them too.
[ "$(grep -c '^<prop' "$tmp/fit.props")" -eq 2 ] ||
    { fail "want 2 props:"; cat "$tmp/fit.props" >&2; }
"$collsim" platform dgx-a100 --params "$tmp/fit.props" -o "$tmp/again.xml" || fail "platform --params fit.props"
for k in cs.launch_s cs.link_Bps.nvlink; do
    [ "$(value $k "$tmp/again.xml")" = "$(value $k "$tmp/fit.xml")" ] ||
        fail "$k differs through --props"
done

# --- --fit: a per-step cost fitted on the middle sizes, with the launch kept as given (its band
# empty) and the bandwidth from the large sizes, recovers the values the table was made with.
"$collsim" platform dgx-a100 --set cs.launch_s=7e-6 --set cs.link_Bps.nvlink=200e9 \
    --set cs.call_s.Simple.nvlink=10e-6 -o "$tmp/truth2.xml" || fail "platform with a step cost"
"$collsim" predict --gen "$spec" --platform "$tmp/truth2.xml" --protocol Simple -b 1K -e 8G -f 8 \
    --format csv >"$tmp/table2.csv" 2>/dev/null || fail "predict the table with a step cost"
"$collsim" calibrate platform --family dgx-a100 "$tmp/table2.csv" --gen "$spec" \
    --protocols Simple --tol 0.01 --set cs.launch_s=7e-6 --latency-sizes 0:0 \
    --fit cs.call_s.Simple.nvlink=1M:64M --max-iter 32 -o "$tmp/fit2.xml" \
    --props "$tmp/fit2.props" --report "$tmp/fit2.md" ||
    fail "calibrate platform --fit on a predicted table"
near cs.launch_s "$(value cs.launch_s "$tmp/fit2.xml")" 7e-6 1e-9
near cs.call_s.Simple.nvlink "$(value cs.call_s.Simple.nvlink "$tmp/fit2.xml")" 10e-6 2e-3
near cs.link_Bps.nvlink "$(value cs.link_Bps.nvlink "$tmp/fit2.xml")" 200e9 2e-3
grep -q '^| `cs.call_s.Simple.nvlink` | [1-9][0-9]* | 2.8e-06 | ' "$tmp/fit2.md" &&
    grep -q 'fitted on the sizes 1048576 to 67108864 B (--fit)' "$tmp/fit2.md" &&
    grep -q 'converged' "$tmp/fit2.md" ||
    { fail "the --fit report:"; cat "$tmp/fit2.md" >&2; }
grep -q '<prop id="cs.call_s.Simple.nvlink"' "$tmp/fit2.props" ||
    fail "the props file lacks the --fit key"

# --- bad input: exit 2 with the reason (file:line where there is one).
expect_error() { # PATTERN ARGS...
    pat=$1
    shift
    "$collsim" calibrate platform "$@" >/dev/null 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 2 ] && grep -q -- "$pat" "$tmp/err" ||
        fail "calibrate platform $* exited $rc: $(cat "$tmp/err")"
}
expect_error "needs --family" "$tmp/table.csv" -o "$tmp/x.xml"
expect_error "needs MEASUREMENT" --family dgx-a100 "$tmp/table.csv"
expect_error "unknown platform family 'dgx'" --family dgx "$tmp/table.csv" -o "$tmp/x.xml"
expect_error "give --link" --family a100-hier "$tmp/table.csv" -o "$tmp/x.xml"
expect_error "exclude each other" --family dgx-a100 "$tmp/table.csv" --gen "$spec" \
    --schedule x.xml -o "$tmp/x.xml"
expect_error "--protocols: 'LL,SLOW'" --family dgx-a100 --protocols LL,SLOW "$tmp/table.csv" \
    -o "$tmp/x.xml"
printf 'size_bytes,time_us\n64,1\n128,x\n' >"$tmp/bad.csv"
expect_error "bad.csv:3: column time_us" --family dgx-a100 --ranks 8 "$tmp/bad.csv" -o "$tmp/x.xml"
expect_error "no measured size is dominated" --family dgx-a100 "$tmp/table.csv" --gen "$spec" \
    --latency-sizes 3:3 --bandwidth-sizes 3:3 -o "$tmp/x.xml"
printf 'size_bytes,time_us,algbw_GBps,busbw_GBps\n1048576,100,10,15\n' >"$tmp/4ranks.csv"
expect_error "4ranks.csv: allreduce over 4 ranks, unlike the fitted tables (allreduce over 8)" \
    --family dgx-a100 "$tmp/table.csv" --held-out "$tmp/4ranks.csv" -o "$tmp/x.xml"
expect_error "--fit: 'cs.launch_s' is not KEY=MIN:MAX" --family dgx-a100 "$tmp/table.csv" \
    --fit cs.launch_s -o "$tmp/x.xml"
expect_error "--fit: '1M' is not MIN:MAX" --family dgx-a100 "$tmp/table.csv" \
    --fit cs.launch_s=1M -o "$tmp/x.xml"
expect_error "--fit cs.nope: not a parameter" --family dgx-a100 "$tmp/table.csv" --gen "$spec" \
    --fit cs.nope=1M:2M -o "$tmp/x.xml"
expect_error "--fit cs.call_s.LL128.nvlink: no measured size from 3 to 3 B" --family dgx-a100 \
    "$tmp/table.csv" --gen "$spec" --fit cs.call_s.LL128.nvlink=3:3 -o "$tmp/x.xml"
expect_error "--fit cs.launch_s: the latency band fits it" --family dgx-a100 "$tmp/table.csv" \
    --fit cs.launch_s=1M:2M -o "$tmp/x.xml"
expect_error "--fit cs.link_Bps.nvlink: the bandwidth band fits it" --family dgx-a100 \
    "$tmp/table.csv" --fit cs.link_Bps.nvlink=1M:2M -o "$tmp/x.xml"
expect_error "--fit: cs.dep_s given twice" --family dgx-a100 "$tmp/table.csv" \
    --fit cs.dep_s=1M:2M --fit cs.dep_s=4M:8M -o "$tmp/x.xml"
[ ! -e "$tmp/x.xml" ] || fail "a failed fit wrote its platform"

# --- the README's walk-through, run as written, on the shared measurements (not under
# sanitizers, where its replays take minutes: the default and clang builds run it).
if [ "${CS_SANITIZED:-0}" = 1 ]; then
    echo "calibrate_platform.sh: the README's walk-through is not run under sanitizers"
    exit $((fails > 0))
fi
shared="${CS_SHARED_DATA:-$CS_SRCDIR/../shared/data}/measurements"
if [ ! -d "$shared" ]; then
    echo "calibrate_platform.sh: SKIP: $shared absent; the README's walk-through not run"
    [ "$fails" -eq 0 ] && exit 77
    exit 1
fi
# The command: the README's lines from "    collsim calibrate platform" to the first without a
# trailing backslash.
cmd=$(awk '/^    collsim calibrate platform / { on = 1 }
           on { sub(/^ +/, ""); if (sub(/\\$/, "")) printf "%s", $0; else { print; exit } }' \
    "$CS_SRCDIR/README")
case "$cmd" in
*'$m/oci-bmgpu48-a100sxm40-1node-8gpu.csv'*'--held-out'*) ;;
*) echo "FAIL: the README's calibrate platform command: '$cmd'" >&2; exit 1 ;;
esac
# shellcheck disable=SC2086
mkdir "$tmp/readme"
(cd "$tmp/readme" && m=$shared && eval "\"\$collsim\" ${cmd#collsim }") >"$tmp/out" 2>&1 ||
    { echo "FAIL: the README's command: $(cat "$tmp/out")" >&2; exit 1; }
report=$(ls "$tmp"/readme/*.md | head -n 1)
plat=$(ls "$tmp"/readme/*.xml | head -n 1)
gen=$(printf '%s\n' "$cmd" | sed -n 's/.*--gen \([^ ]*\).*/\1/p')
# Re-predict with the written platform and compare with the report's residuals of the fitted
# table (its first "Residual over" line; 2 decimals, so 0.006 points of slack).
predicted "$gen" "$plat" "$shared/oci-bmgpu48-a100sxm40-1node-8gpu.csv" "$tmp/pred"
residuals "$shared/oci-bmgpu48-a100sxm40-1node-8gpu.csv" "$tmp/pred" >"$tmp/res"
stated=$(grep -m 1 '^Residual over' "$report" |
    sed 's/.*median |error| \([0-9.]*\)%, max |error| \([0-9.]*\)%.*/\1 \2/')
got=$(awk '{ e = $2 < 0 ? -$2 : $2; v[NR] = e; if (e > mx) mx = e }
           END { n = asort_n(v, NR); printf "%.4f %.4f %d", 100 * med, 100 * mx, NR }
           function asort_n(a, n,   i, j, t) {
               for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
                   t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
               med = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2; return n }' "$tmp/res")
set -- $stated $got
if [ "$#" -ne 5 ] || [ "$5" -ne 28 ] ||
    ! awk -v sm="$1" -v sx="$2" -v gm="$3" -v gx="$4" \
        'BEGIN { exit !(gm <= sm + 0.006 && gx <= sx + 0.006) }'; then
    fail "re-predicted: median/max |error| $3%/$4% over $5 sizes, the report states $1%/$2%"
fi
# The bands the keys were fitted on stay within the tolerance the report names.
grep -q '^[0-9]* iterations\{0,1\} (one prediction of the bands each), converged' "$report" ||
    fail "the walk-through did not converge"
grep -q '^## Held out: `.*thanos-notes' "$report" ||
    fail "the report has no held-out table"
# The committed outputs of this command (results/calibration/dgx-a100-fit.*) are current: the
# same fitted values (their comments name the data by another path).
props=$(ls "$tmp"/readme/*.props | head -n 1)
[ "$(grep '^<prop' "$props")" = "$(grep '^<prop' "$CS_SRCDIR/results/calibration/dgx-a100-fit.props")" ] ||
    fail "results/calibration/dgx-a100-fit.props is stale; rerun the README's calibrate platform command there"
for k in cs.launch_s cs.link_Bps.nvlink; do
    [ "$(value $k "$plat")" = "$(value $k "$CS_SRCDIR/results/calibration/dgx-a100-fit.xml")" ] ||
        fail "results/calibration/dgx-a100-fit.xml: $k is stale"
done
# The committed model fit of the DGX platforms (results/validation/fit-thanos-model.*) is what
# the command in results/validation/README writes today (its outputs redirected here).
cmd=$(awk '/^    collsim calibrate platform --family dgx-a100 \$m\/thanos-notes/ { on = 1 }
           on { sub(/^ +/, ""); if (sub(/\\$/, "")) printf "%s", $0; else { print; exit } }' \
    "$CS_SRCDIR/results/validation/README")
case "$cmd" in
*'--fit cs.call_s.Simple.nvlink='*'--props results/validation/fit-thanos-model.props'*) ;;
*) echo "FAIL: results/validation/README's model fit command: '$cmd'" >&2; exit 1 ;;
esac
mkdir -p "$tmp/model/results/validation"
(cd "$tmp/model" && m=$shared && eval "\"\$collsim\" ${cmd#collsim }") >"$tmp/out" 2>&1 ||
    { echo "FAIL: the model fit command: $(cat "$tmp/out")" >&2; exit 1; }
[ "$(grep '^<prop' "$tmp/model/results/validation/fit-thanos-model.props")" = \
    "$(grep '^<prop' "$CS_SRCDIR/results/validation/fit-thanos-model.props")" ] ||
    fail "results/validation/fit-thanos-model.props is stale; rerun the command of results/validation/README"
[ "$fails" -eq 0 ]
