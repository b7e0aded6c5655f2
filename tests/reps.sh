#!/bin/sh
# shellcheck disable=SC2086 # $big and $opt below are lists of words
# reps.sh: a --gen ring written by its representatives (its first GPUs only, each other GPU
# proven their image as it is generated, then dropped) predicts the CSV of the whole schedule to
# every digit: rings of 64 GPUs on 8 DGX nodes in every protocol, with channels, instances,
# per-node rotation, AllGather and ReduceScatter, at 1 KiB, 1 MiB and 1 GiB, and a 16-GPU LL128
# ring on a100-hier whose PCIe warning is the whole schedule's; a ring too large to write whole
# (1024 GPUs x 8 rings) goes by its representatives by itself, and refuses --no-fold; a platform
# that breaks the symmetry is refused with the reason; --representatives refuses what needs every
# GPU. (Time-independent: no wall clock is looked at.)
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
cs="$CS_BUILDDIR/collsim"
. "$CS_SRCDIR/tests/lib.sh"

"$cs" platform dgx-a100 --nodes 8 -o "$tmp/d64.xml" || exit 1
"$cs" platform a100-hier --rows 8 --columns 2 -o "$tmp/h16.xml" || exit 1

# WHAT FILE PATTERN: a fixed string in FILE.
has() {
    grep -qF -- "$3" "$2" || { fail "$1: no '$3' in:"; cat "$2" >&2; }
}

# same SPEC PLATFORM: the CSV and the warnings of the ring written whole and by representatives
same() {
    expect 0 "$cs" predict --gen "$1" -p "$2" -b 1K -e 1G -f 1024 --format csv
    mv "$tmp/out" "$tmp/whole.csv"
    grep -v '^# collsim' "$tmp/err" >"$tmp/whole.err"
    expect 0 "$cs" predict --gen "$1" -p "$2" -b 1K -e 1G -f 1024 --format csv --representatives
    grep -v '^# collsim' "$tmp/err" >"$tmp/reps.err"
    cmp -s "$tmp/out" "$tmp/whole.csv" || {
        fail "$1: the CSVs differ"
        diff "$tmp/whole.csv" "$tmp/out" >&2
    }
    cmp -s "$tmp/reps.err" "$tmp/whole.err" || {
        fail "$1: the notes differ"
        diff "$tmp/whole.err" "$tmp/reps.err" >&2
    }
}

for spec in ring:gpus=64,protocol=LL ring:gpus=64,channels=2,protocol=LL128 \
    ring:gpus=64,channels=2,instances=2,protocol=Simple \
    ring:gpus=64,channels=4,per_node=8,protocol=LL ring:gpus=64,coll=allgather,protocol=Simple \
    ring:gpus=64,coll=reducescatter,channels=2,protocol=LL; do
    same "$spec" "$tmp/d64.xml"
done
same ring:gpus=16,protocol=LL128 "$tmp/h16.xml"
has "LL128 on a100-hier" "$tmp/reps.err" "like 1 more of the 16 connections"

# --verbose says what was written and what was replayed
expect 0 "$cs" predict --gen ring:gpus=64,protocol=LL -p "$tmp/d64.xml" -b 1M -e 1M \
    --representatives --verbose
has "--verbose" "$tmp/err" "written by its representatives: GPUs 0-31 of 64, every GPU g proven the image of GPU g mod 1"
has "--verbose" "$tmp/err" "folded: ranks shifted by 8 (r -> r+8 mod 64, a group of 8): ranks 0-7 replayed"

# too large to write whole: 1024 GPUs x 8 rings x 2046 steps, over 2^23
"$cs" platform dgx-a100 --nodes 128 -o "$tmp/d1024.xml" || exit 1
big="--gen ring:gpus=1024,channels=8,protocol=LL -p $tmp/d1024.xml -b 1M -e 1M"
expect 0 "$cs" predict $big --verbose
has "1024 x 8 rings" "$tmp/err" "written by its representatives: GPUs 0-63 of 1024"
has "1024 x 8 rings" "$tmp/err" "folded: ranks shifted by 8 (r -> r+8 mod 1024, a group of 128)"
expect 2 "$cs" predict $big --no-fold
has "1024 x 8 rings --no-fold" "$tmp/err" "more than the 8388608 a generated schedule may have"

# one NIC on the ring's route (gpu31 sends to gpu32 through it) at half its bandwidth: the
# schedule written by its first 32 GPUs has no replay
sed 's/<link id="gpu31_nic" bandwidth="[^"]*"/<link id="gpu31_nic" bandwidth="1.2e+10Bps"/' \
    "$tmp/d64.xml" >"$tmp/slow.xml"
cmp -s "$tmp/d64.xml" "$tmp/slow.xml" && fail "the platform edit changed nothing"
expect 2 "$cs" predict --gen ring:gpus=64,protocol=LL -p "$tmp/slow.xml" -b 1M -e 1M \
    --representatives
has "slower NIC" "$tmp/err" "the schedule holds its first 32 GPUs only, for the folded replay, which did not run"
has "slower NIC" "$tmp/err" "the platform breaks every rank shift of the schedule"
# written whole, it replays in full
expect 0 "$cs" predict --gen ring:gpus=64,protocol=LL -p "$tmp/slow.xml" -b 1M -e 1M

# what needs every GPU
for opt in --no-fold --stats --verify "--trace $tmp/t.json"; do
    expect 2 "$cs" predict --gen ring:gpus=64,protocol=LL -p "$tmp/d64.xml" -b 1M -e 1M \
        --representatives $opt
    has "--representatives $opt" "$tmp/err" "--representatives: a --gen ring replayed folded only"
done
"$cs" gen ring --gpus 8 -o "$tmp/ring8.xml" || exit 1
expect 2 "$cs" predict "$tmp/ring8.xml" -p "$tmp/d64.xml" --representatives
has "a file" "$tmp/err" "--representatives: a --gen ring"
# above 8192 GPUs, and any other generator above 1024
expect 2 "$cs" predict --gen ring:gpus=8193 -p "$tmp/d64.xml"
has "8193 GPUs" "$tmp/err" "--gpus must be at most 8192"
expect 2 "$cs" predict --gen allpairs:gpus=2048 -p "$tmp/d64.xml"
has "allpairs 2048" "$tmp/err" "--gpus must be at most 1024"

[ "$fails" -eq 0 ]
