#!/bin/sh
# validation.sh: the validation subset (tests/data/validation/cases.txt) against its committed
# baseline: fails when a case's median or max |error| in any size band grows by more than 2 points.
# Rewrite the baseline after a reviewed model change with:
#   collsim validate tests/data/validation/cases.txt -o DIR && cp DIR/summary.csv tests/data/validation/baseline.csv
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$CS_SRCDIR" || exit 1
"$CS_BUILDDIR/collsim" validate tests/data/validation/cases.txt -o "$tmp" \
    --baseline tests/data/validation/baseline.csv --tolerance 0.02
rc=$?
[ $rc -eq 0 ] || cat "$tmp/summary.md" >&2
# The summary names every case and band it measured.
grep -q '^### oci-8gpu-small' "$tmp/summary.md" && grep -q '^### ring-latency' "$tmp/summary.md" ||
    { echo "FAIL: summary.md misses a case" >&2; rc=1; }
exit $rc
