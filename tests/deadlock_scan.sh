#!/bin/sh
# deadlock_scan.sh: collsim predict must agree with the shared DEADLOCK_SCAN.tsv (an untimed replay
# of the executor's flow control): for every row the last size that completes completes and the
# first size that hangs deadlocks. Rows that never hang are checked up to CS_SCAN_MAX bytes
# (default 16 MiB; the full sweep is scripts/predict-corpus). Without the shared data, the
# tests/data copy of the seed checks the 4-GPU rows (its protocol overridden), then exits 77 (SKIP).
set -u
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
cs="$builddir/collsim"
shared=${CS_SHARED_DATA:-$srcdir/../shared/data}
max=${CS_SCAN_MAX:-16777216}
. "$srcdir/tests/lib.sh"
n=0

platform() { # GPUS -> path of an a100-hier platform with that many GPUs
    p="$tmp/plat$1.xml"
    if [ ! -f "$p" ]; then
        if [ $(($1 % 2)) -eq 0 ]; then
            "$cs" platform a100-hier --rows $(($1 / 2)) --columns 2 -o "$p" || exit 99
        else
            "$cs" platform a100-hier --rows "$1" --columns 1 -o "$p" || exit 99
        fi
    fi
    echo "$p"
}

check() { # FILE PROTO LAST_OK FIRST_DEADLOCK|none
    file=$1 proto=$2 ok=$3 dead=$4
    g=$(sed -n 's/.*<algo [^>]*ngpus="\([0-9]*\)".*/\1/p' "$file" | head -n 1)
    plat=$(platform "$g")
    if [ "$dead" = none ]; then
        [ "$ok" -gt "$max" ] && ok=$max
        out=$("$cs" predict "$file" --platform "$plat" --protocol "$proto" -b "$ok" -e "$ok" --format csv 2>"$tmp/err")
        want="ok"
    else
        out=$("$cs" predict "$file" --platform "$plat" --protocol "$proto" -b "$ok" -e "$dead" -f "$((dead / ok))" --format csv 2>"$tmp/err")
        want="ok deadlock"
    fi
    got=$(printf '%s\n' "$out" | sed -n '2,$p' | awk -F, '{print $7}' | tr '\n' ' ' | sed 's/ $//')
    n=$((n + 1))
    if [ "$got" != "$want" ]; then
        fail "$file $proto sizes $ok/$dead: want '$want', got '$got'"
        printf '%s\n' "$out" | head -n 5
        head -n 5 "$tmp/err"
    fi
}

if [ -f "$shared/msccl-xml/DEADLOCK_SCAN.tsv" ]; then
    while IFS="$(printf '\t')" read -r f proto ok dead; do
        case "$f" in '#'* | filename) continue ;; esac
        case "$dead" in none*) dead=none ;; esac
        check "$shared/msccl-xml/$f" "$proto" "$ok" "$dead"
    done <"$shared/msccl-xml/DEADLOCK_SCAN.tsv"
else
    echo "shared data not found at $shared: checking the tests/data copies of the 4-GPU seed only"
    for f in allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml \
        allreduce_a100_pcie_hierarchical_fixed.4gpu.1inst.LL.xml; do
        check "$srcdir/tests/data/msccl-xml/$f" Simple 4194304 16777216
        check "$srcdir/tests/data/msccl-xml/$f" LL 4194304 none
        check "$srcdir/tests/data/msccl-xml/$f" LL128 4194304 none
    done
fi
echo "$n rows checked, $fails failed"
[ "$fails" -eq 0 ] || exit 1
if [ ! -f "$shared/msccl-xml/DEADLOCK_SCAN.tsv" ]; then
    echo "deadlock_scan.sh: SKIP: $shared/msccl-xml/DEADLOCK_SCAN.tsv absent"
    exit 77
fi
