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
exec "$srcdir/scripts/predict-corpus" "$builddir/collsim" 1K 64K "$shared"
