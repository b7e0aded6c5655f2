#!/bin/sh
# fold_corpus.sh: every schedule of schedules/ and of the shared corpus (msccl-xml, when present)
# predicts the same CSV to every digit folded and with --no-fold, at 1 KiB, 1 MiB and 1 GiB (1 KiB
# only when sanitized), on a platform of its size: a100-pcie-4gpu for 4 GPUs, a DGX node up to 8,
# two for 16, four for 24 and 32. At least one of them must fold, and the corpus's files are
# counted. (Time-independent: no wall clock is looked at.)
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
cs="$CS_BUILDDIR/collsim"
. "$CS_SRCDIR/tests/lib.sh"
shared=${CS_SHARED_DATA:-$CS_SRCDIR/../shared/data}

"$cs" platform dgx-a100 --nodes 4 -o "$tmp/d32.xml" || exit 1
max=1G
[ "${CS_SANITIZED:-0}" = 1 ] && max=1K
files="$CS_SRCDIR/schedules/*.xml"
if [ -d "$shared/msccl-xml" ]; then
    files="$files $shared/msccl-xml/*.xml"
else
    echo "fold_corpus.sh: shared data not found at $shared: schedules/ only"
fi
n=0 folded=0
for f in $files; do
    g=$(grep -o 'ngpus="[0-9]*"' "$f" | head -1 | tr -dc 0-9)
    case "$g" in
    4) plat=$CS_SRCDIR/platforms/a100-pcie-4gpu.xml ;;
    [1-8]) plat=$CS_SRCDIR/platforms/dgx-a100.xml ;;
    16) plat=$CS_SRCDIR/platforms/dgx-a100-2node.xml ;;
    24 | 32) plat=$tmp/d32.xml ;;
    *)
        fail "$f: $g GPUs, no platform chosen"
        continue
        ;;
    esac
    "$cs" predict "$f" -p "$plat" -b 1K -e $max -f 1024 --format csv --verbose \
        >"$tmp/folded.csv" 2>"$tmp/folded.err"
    rf=$?
    "$cs" predict "$f" -p "$plat" -b 1K -e $max -f 1024 --format csv --no-fold \
        >"$tmp/full.csv" 2>"$tmp/full.err"
    ru=$?
    n=$((n + 1))
    if [ $rf -ne $ru ] || ! cmp -s "$tmp/folded.csv" "$tmp/full.csv"; then
        fail "$(basename "$f") on $(basename "$plat"): folded (exit $rf) and full (exit $ru) differ"
        diff "$tmp/folded.csv" "$tmp/full.csv" >&2
        head -3 "$tmp/folded.err" "$tmp/full.err" >&2
    fi
    grep -q "folded: ranks shifted" "$tmp/folded.err" && folded=$((folded + 1))
done
echo "fold_corpus.sh: $n schedules, $folded folded at some size"
[ "$n" -ge 27 ] || fail "only $n schedules compared"
[ "$folded" -gt 0 ] || fail "no schedule folded"
[ "$fails" -eq 0 ]
