#!/bin/sh
# validation_full.sh: results/validation is what `collsim validate results/validation/cases.txt
# --before results/validation/summary-before.csv` writes today (summary.md, summary.csv and each
# case's CSV, byte for byte; the SVGs depend on gnuplot's version and are not compared). Needs
# the shared measurements (../shared/data or CS_SHARED_DATA): SKIP without them.
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
shared=${CS_SHARED_DATA:-$CS_SRCDIR/../shared/data}
if [ ! -d "$shared/measurements" ]; then
    echo "validation_full.sh: SKIP: $shared/measurements absent"
    exit 77
fi
if [ "${CS_SANITIZED:-0}" = 1 ]; then
    echo "validation_full.sh: SKIP under sanitizers (the default and clang builds compare the outputs)"
    exit 77
fi
. "$CS_SRCDIR/tests/lib.sh"
cd "$CS_SRCDIR" || exit 1
"$CS_BUILDDIR/collsim" validate results/validation/cases.txt -o "$tmp" \
    --before results/validation/summary-before.csv >"$tmp/out" 2>&1
[ $? -le 1 ] || { cat "$tmp/out" >&2; echo "FAIL: validate failed" >&2; exit 1; }
for f in "$tmp"/*.csv "$tmp/summary.md"; do
    name=$(basename "$f")
    # summary.md names the folder it was written to; compare it as committed
    if [ "$name" = summary.md ]; then
        sed "s#$tmp#results/validation#g" "$f" >"$tmp/summary.md.cmp"
        f="$tmp/summary.md.cmp"
    fi
    cmp -s "$f" "results/validation/$name" || {
        fail "results/validation/$name is stale; rerun the command above:"
        diff "results/validation/$name" "$f" | head -10 >&2
    }
done
[ "$fails" -eq 0 ]
