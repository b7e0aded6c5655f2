#!/bin/sh
# predict_corpus.sh: every reference XML of the shared corpus predicts without a crash (each size
# ok or deadlock), at two sizes to keep the suite short; scripts/predict-corpus sweeps 1K..1G.
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
shared=${CS_SHARED_DATA:-$srcdir/../shared/data}
if [ ! -d "$shared/msccl-xml" ]; then
    echo "shared data not found at $shared: skipped"
    exit 77
fi
# sanitized: the smallest sizes only (every file still runs through the reader, verify and replay)
max=64K
[ "${CS_SANITIZED:-0}" = 1 ] && max=4K
exec "$srcdir/scripts/predict-corpus" "$builddir/collsim" 1K "$max" "$shared"
