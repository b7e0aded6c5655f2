#!/bin/sh
# results_stale.sh: committed results that a rerun reproduces are what collsim writes today.
# Every `collsim sweep results/sweeps/NAME.sweep -o OUT.csv` command of results/sweeps/README is
# run again (all points, -j 2) and its CSV must equal results/sweeps/OUT.csv byte for byte, and
# every CSV there must have such a command; the measurements (results/perf.md, results/fuzz.md,
# results/predict-corpus.md)
# must name the commit or version they were made with (a commit that exists, where git can say).
# Checked elsewhere: README and docs examples (readme.sh), results/validation
# (validation_full.sh), results/sweeps/ndv4-plan.txt (tune.sh), the regression baseline
# (regress.sh, a subset). The figures (*.png) are not compared. Fix: scripts/refresh-results.
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
cs="$(cd "$CS_BUILDDIR" && pwd)/collsim"
. "$CS_SRCDIR/tests/lib.sh"

# 1. the example sweeps
grep -E '^ +collsim sweep results/sweeps/[A-Za-z0-9_.-]+\.sweep -o [A-Za-z0-9_.-]+\.csv *$' \
    "$CS_SRCDIR/results/sweeps/README" | awk '{ print $3, $5 }' >"$tmp/cmds"
[ -s "$tmp/cmds" ] || { echo "FAIL: no sweep command in results/sweeps/README" >&2; exit 1; }
while read -r spec csv; do
    name=$(basename "$csv" .csv)
    if ! (cd "$CS_SRCDIR" && "$cs" sweep "$spec" -j 2 --quiet --results "$tmp/$name.results" \
        -o "$tmp/$csv") 2>"$tmp/err"; then
        fail "collsim sweep $spec: $(cat "$tmp/err")"
        continue
    fi
    if ! cmp -s "$tmp/$csv" "$CS_SRCDIR/results/sweeps/$csv"; then
        nd=$(diff "$tmp/$csv" "$CS_SRCDIR/results/sweeps/$csv" | grep -c '^>')
        fail "results/sweeps/$csv is stale: $nd of its $(wc -l <"$CS_SRCDIR/results/sweeps/$csv") lines differ from a rerun of $spec (scripts/refresh-results):"
        diff "$tmp/$csv" "$CS_SRCDIR/results/sweeps/$csv" | head -6 >&2
    fi
done <"$tmp/cmds"
for f in "$CS_SRCDIR"/results/sweeps/*.csv; do
    awk -v c="$(basename "$f")" '$2 == c { found = 1 } END { exit !found }' "$tmp/cmds" ||
        fail "results/sweeps/$(basename "$f") has no command in results/sweeps/README"
done

# 2. measurements name what they measured
have_git=0
git -C "$CS_SRCDIR" rev-parse --git-dir >/dev/null 2>&1 && have_git=1
for m in perf.md fuzz.md predict-corpus.md; do
    f="$CS_SRCDIR/results/$m"
    shas=$(grep -oE '(commit|committed in|git) [0-9a-f]{7,40}' "$f" | awk '{ print $NF }')
    if [ -z "$shas" ]; then
        fail "results/$m names no commit (\"commit SHA\", \"git SHA\") it was made with"
        continue
    fi
    [ "$have_git" -eq 1 ] || continue
    for s in $shas; do
        git -C "$CS_SRCDIR" cat-file -e "$s^{commit}" 2>/dev/null ||
            fail "results/$m names commit $s, which this repository lacks"
    done
done

[ "$fails" -eq 0 ] && echo "results_stale: $(wc -l <"$tmp/cmds") sweeps and the measurements' versions current"
[ "$fails" -eq 0 ]
