#!/bin/sh
# calibration_results.sh: the committed calibrations of the shared tables (results/calibration,
# written by scripts/calibrate-shared) are current: each fit's tables, re-predicted on the
# platform it wrote (its NAME.validate case file, which `calibrate platform --validate` wrote),
# give the residuals its report states; and every fit of the summary meets the calibration
# targets it is committed with (median |error| at most 5%, max at most 15% over the sizes where
# the table does not contradict itself), or the summary says why not. SKIP (77) without
# ../shared/data.
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
collsim="$CS_BUILDDIR/collsim"
. "$CS_SRCDIR/tests/lib.sh"

res="$CS_SRCDIR/results/calibration"
shared="${CS_SHARED_DATA:-$CS_SRCDIR/../shared/data}"
if [ ! -d "$shared/measurements" ]; then
    echo "calibration_results.sh: SKIP: $shared/measurements absent"
    exit 77
fi
if [ "${CS_SANITIZED:-0}" = 1 ]; then
    echo "calibration_results.sh: SKIP: re-predicting every fit takes too long under sanitizers"
    exit 77
fi
n=0
for v in "$res"/*.validate; do
    [ -f "$v" ] || continue
    name=$(basename "$v" .validate)
    [ "$name" = cross ] && continue # below: no fit of its own
    report="$res/$name.md"
    [ -f "$report" ] || { fail "$name: no report beside $v"; continue; }
    mkdir -p "$tmp/$name"
    # the case file names the platform and schedules from the repository root
    (cd "$CS_SRCDIR" && CS_SHARED_DATA="$shared" "$collsim" validate "$v" -o "$tmp/$name" --quiet) \
        >"$tmp/$name.out" 2>&1 ||
        { [ $? -eq 1 ] || { fail "$name: validate: $(cat "$tmp/$name.out")"; continue; }; }
    # each case's "all sizes" band against the report's Residual line of that table
    for c in $(awk -F, 'NR > 1 && $2 == 0 { print $1 }' "$tmp/$name/summary.csv"); do
        got=$(awk -F, -v c="$c" '$1 == c && $2 == 0 { printf "%.2f %.2f", 100 * $4, 100 * $5 }' \
            "$tmp/$name/summary.csv")
        stated=$(awk -v c="$c" '/^### / { on = ($2 == c) } on && /^Residual over/ {
                     m = $9; x = $12; sub(/%,/, "", m); sub(/%\.$/, "", x); print m, x; exit }' \
            "$report")
        [ -n "$stated" ] || { fail "$name: case $c: no residual line in $report"; continue; }
        set -- $got $stated
        awk -v a="$1" -v b="$2" -v c="$3" -v d="$4" \
            'BEGIN { exit !((a - c < 0.015 && c - a < 0.015) && (b - d < 0.015 && d - b < 0.015)) }' ||
            fail "$name: case $c re-predicted at median/max $1%/$2%, its report states $3%/$4%: rerun scripts/calibrate-shared $name"
        n=$((n + 1))
    done
done
[ "$n" -gt 0 ] || fail "no committed calibration found in $res"
# cross: each table predicted on a platform calibrated on another table of its machine
# (cross.validate), against the committed cross/summary.csv; the OCI two-node platform is the
# one the OCI 1-node fit makes.
if ! (cd "$CS_SRCDIR" && "$collsim" platform dgx-a100 --nodes 2 --nic 2x100 \
    --params results/calibration/oci-8gpu.props --set cs.gpus_per_process=1 \
    -o "$tmp/oci-8gpu-2node.xml") >"$tmp/cross.out" 2>&1; then
    fail "collsim platform for the OCI two-node cross case: $(cat "$tmp/cross.out")"
elif ! cmp -s "$tmp/oci-8gpu-2node.xml" "$res/oci-8gpu-2node.xml"; then
    fail "results/calibration/oci-8gpu-2node.xml is not what oci-8gpu.props makes: rerun scripts/calibrate-shared cross"
fi
mkdir -p "$tmp/cross"
(cd "$CS_SRCDIR" && CS_SHARED_DATA="$shared" "$collsim" validate "$res/cross.validate" -o "$tmp/cross" --quiet) \
    >"$tmp/cross.out" 2>&1 || [ $? -eq 1 ] || fail "cross.validate: $(cat "$tmp/cross.out")"
if [ -f "$tmp/cross/summary.csv" ]; then
    awk -F, 'FNR == 1 { next } NR == FNR { m[$1 "," $2] = $4; x[$1 "," $2] = $5; next }
             { k = $1 "," $2; seen++
               if (!(k in m)) { print "case " $1 " band " $2 " not in the committed summary"; bad = 1; next }
               d = m[k] - $4; e = x[k] - $5
               if (d > 0.00015 || d < -0.00015 || e > 0.00015 || e < -0.00015) {
                   printf "case %s band %s: median/max %.2f%%/%.2f%%, committed %.2f%%/%.2f%%\n",
                       $1, $2, 100 * m[k], 100 * x[k], 100 * $4, 100 * $5; bad = 1 } }
             END { if (!seen) { print "no case"; bad = 1 }; exit bad }' \
        "$tmp/cross/summary.csv" "$res/cross/summary.csv" >"$tmp/cross.why" ||
        fail "cross: $(cat "$tmp/cross.why"): rerun scripts/calibrate-shared cross"
fi
# tune against NCCL on the NDv4 MSCCL run's calibrated platform (ndv4-msccl): a window of the
# all-pairs LL plan (2 instances) covers no size where that run measured NCCL faster than it.
m="$shared/measurements"
cat >"$tmp/ap.sweep" <<EOF
gen.algorithm = allpairs
gen.gpus = 8
gen.instances = 2
protocol = LL
platform = $res/ndv4-msccl.xml
sizes = 128..32M x2
EOF
if "$collsim" sweep "$tmp/ap.sweep" -o "$tmp/ap.csv" >/dev/null 2>&1 &&
    "$collsim" tune "$tmp/ap.csv" --nccl 2.12.12 --nccl-channels 24 >"$tmp/plan" 2>"$tmp/err"; then
    awk 'FILENAME == ARGV[1] { if ($1 ~ /^[0-9]+$/) { lo[++n] = $1; hi[n] = $2 }; next }
         FNR == 1 { next }
         FILENAME == ARGV[2] { split($0, f, ","); nccl[f[1]] = f[2]; next }
         { split($0, f, ","); s = f[1]; ap = f[2]
           for (i = 1; i <= n; i++)
               if (s >= lo[i] && (hi[i] == 0 || s <= hi[i]) && (s in nccl)) {
                   checked++
                   if (ap >= nccl[s]) { print "window at " s " B: measured all-pairs " ap " us, NCCL " nccl[s] " us"; bad = 1 } } }
         END { if (n == 0 || checked == 0) { print n " windows, " checked " measured sizes in them"; bad = 1 }; exit bad }' \
        "$tmp/plan" "$m/msccl-leaderboard-ndv4-1node-8gpu-mscclrt-nccl.csv" \
        "$m/msccl-leaderboard-ndv4-1node-8gpu-mscclrt-allpairs2ll.csv" >"$tmp/why" ||
        fail "tune on ndv4-msccl.xml: $(cat "$tmp/why" "$tmp/plan")"
else
    fail "sweep or tune on ndv4-msccl.xml: $(cat "$tmp/err")"
fi
# The summary's rows against the targets: median <= 5% and max kept <= 15%, unless the row's
# fit is named in the summary's list of misses with the reason.
awk -F'|' '/^\| [a-z0-9-]+ \| / && $3 !~ /table/ {
        fit = $2; tab = $3; med = $6; kept = $8; gsub(/[ %]/, "", med); gsub(/[ %]/, "", kept)
        gsub(/ /, "", fit); gsub(/ /, "", tab)
        if (med + 0 > 5 || kept + 0 > 15) print fit "/" tab, med, kept }' "$res/summary.md" \
    >"$tmp/over"
while read -r row med kept; do
    line=$(grep "^- \`$row\`: " "$res/summary.md") ||
        { fail "$row: median $med%, max kept $kept%: over the targets, and the summary does not say why"; continue; }
    # the figures the reason quotes are the table's (to its one decimal)
    # shellcheck disable=SC2046 # the two figures, split
    set -- $(printf '%s\n' "$line" | sed -n 's/^[^:]*: median \([0-9.]*\)%, max\( kept\)\{0,1\} \([0-9.]*\)%.*/\1 \3/p')
    [ $# -eq 2 ] || { fail "$row: its reason in misses.md does not start with median X%, max Y%"; continue; }
    awk -v a="$1" -v b="$2" -v c="$med" -v d="$kept" \
        'BEGIN { exit !((a - c < 0.051 && c - a < 0.051) && (b - d < 0.051 && d - b < 0.051)) }' ||
        fail "$row: misses.md says median $1%, max $2%; the table has $med%, $kept%: update misses.md"
done <"$tmp/over"
[ "$fails" -eq 0 ]
