#!/bin/sh
# fold.sh: predict folds a symmetric run and says so (--verbose, the `#` line after the table),
# with the CSV of --no-fold to every digit: a 128-GPU ring on 16 DGX nodes at 1 KiB and 1 MiB,
# an 8-GPU ring on one node; a platform edited to one slower NIC on a route the ring uses, or
# to one whose bandwidth changes in time (a profile), and a schedule with one step missing on
# one rank, are replayed in full with the reason; the hierarchical schedule folds by a column
# onto the quotient network, and not with one slower PCIe link; --trace replays every rank.
# (Time-independent: no wall clock is looked at.)
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
cs="$CS_BUILDDIR/collsim"
. "$CS_SRCDIR/tests/lib.sh"

"$cs" platform dgx-a100 --nodes 16 -o "$tmp/d128.xml" || exit 1
ring="--gen ring:gpus=128,channels=1,instances=1,protocol=LL"

# WHAT FILE PATTERN: a fixed string in FILE.
has() {
    grep -qF -- "$3" "$2" || { fail "$1: no '$3' in:"; cat "$2" >&2; }
}

# same WHAT ARGS...: predict ARGS folded and with --no-fold gives the same CSV
same() {
    what=$1
    shift
    expect 0 "$cs" predict "$@" --format csv --verbose
    mv "$tmp/out" "$tmp/folded.csv"
    mv "$tmp/err" "$tmp/folded.err"
    expect 0 "$cs" predict "$@" --format csv --no-fold
    cmp -s "$tmp/out" "$tmp/folded.csv" || {
        fail "$what: folded and full CSVs differ"
        diff "$tmp/folded.csv" "$tmp/out" >&2
    }
}

same "128-GPU ring" $ring -p "$tmp/d128.xml" -b 1K -e 1M -f 1024
has "128-GPU ring" "$tmp/folded.err" "folded: ranks shifted by 8 (r -> r+8 mod 128, a group of 16): ranks 0-7 replayed"
has "128-GPU ring notes" "$tmp/folded.err" "# folded replay (every size): ranks shifted by 8"

# the table names the symmetry after the table
expect 0 "$cs" predict $ring -p "$tmp/d128.xml" -b 1M -e 1M
has "table" "$tmp/out" "# folded replay (every size): ranks shifted by 8"
expect 0 "$cs" predict $ring -p "$tmp/d128.xml" -b 1M -e 1M --no-fold
grep -q "folded replay" "$tmp/out" && fail "--no-fold: a folded replay is named"

# one NIC on the ring's route (gpu63 sends to gpu64 through it) at half its bandwidth
sed 's/<link id="gpu63_nic" bandwidth="[^"]*"/<link id="gpu63_nic" bandwidth="1.2e+10Bps"/' \
    "$tmp/d128.xml" >"$tmp/slow.xml"
cmp -s "$tmp/d128.xml" "$tmp/slow.xml" && fail "the platform edit changed nothing"
same "slower NIC" $ring -p "$tmp/slow.xml" -b 1M -e 1M
has "slower NIC" "$tmp/folded.err" "not folded: the platform breaks every rank shift of the schedule"
grep -q "folded replay" "$tmp/folded.csv" && fail "slower NIC: a folded replay is named"
# and the slower NIC shows: the time is not the symmetric platform's
expect 0 "$cs" predict $ring -p "$tmp/d128.xml" -b 1M -e 1M --format csv
cmp -s "$tmp/out" "$tmp/folded.csv" && fail "slower NIC: the same time as the symmetric platform"

# the same NIC at its bandwidth, then half of it 10 us on (a bandwidth profile): the proof
# compares links as they start, so a link that changes in time is not folded
printf '0 2.4e10\n0.00001 1.2e10\n' >"$tmp/bw.txt"
sed 's|<link id="gpu63_nic" |<link id="gpu63_nic" bandwidth_file="bw.txt" |' "$tmp/d128.xml" \
    >"$tmp/varying.xml"
cmp -s "$tmp/d128.xml" "$tmp/varying.xml" && fail "the profile edit changed nothing"
same "bandwidth profile" $ring -p "$tmp/varying.xml" -b 1M -e 1M
has "bandwidth profile" "$tmp/folded.err" "changes in time or is a WIFI link, which the proof does not compare"
expect 0 "$cs" predict $ring -p "$tmp/d128.xml" -b 1M -e 1M --format csv
cmp -s "$tmp/out" "$tmp/folded.csv" && fail "bandwidth profile: the same time as the constant link"

# one step missing on rank 5 of an 8-GPU ring: its last receive (from rank 4), which rank 4 then
# no longer sends (its last rcs becomes an r): a valid structure, no longer the same from every rank
"$cs" gen ring --gpus 8 --channels 1 --instances 1 --protocol LL -o "$tmp/ring8.xml" || exit 1
awk '
    /<gpu id=/ { match($0, /id="[0-9]+"/); g = substr($0, RSTART + 4, RLENGTH - 5) + 0 }
    g == 5 && /<step s="14" type="r"/ { next }
    g == 4 && /<step s="13" type="rcs"/ { sub(/type="rcs"/, "type=\"r\"") }
    { print }
' "$tmp/ring8.xml" >"$tmp/ring8-less.xml"
[ "$(grep -c '<step ' "$tmp/ring8-less.xml")" -eq $(($(grep -c '<step ' "$tmp/ring8.xml") - 1)) ] ||
    fail "the schedule edit did not remove one step"
same "one step missing" "$tmp/ring8-less.xml" -p "$CS_SRCDIR/platforms/dgx-a100.xml" -b 1M -e 1M
has "one step missing" "$tmp/folded.err" "not folded: no rank shift maps the schedule onto itself"
# the unedited ring folds to one rank there
same "8-GPU ring" "$tmp/ring8.xml" -p "$CS_SRCDIR/platforms/dgx-a100.xml" -b 1M -e 1M
has "8-GPU ring" "$tmp/folded.err" "folded: ranks shifted by 1"

# the hierarchical AllReduce on 8 columns of 8: each GPU's PCIe link carries flows from every
# column, so the shift by a column folds onto the quotient network (one link per orbit)
"$cs" platform a100-hier --rows 8 --columns 8 -o "$tmp/h64.xml" || exit 1
hier="--gen hierarchical:gpus=64,columns=8,protocol=LL"
same "64-GPU hierarchical" $hier -p "$tmp/h64.xml" -b 1K -e 1G -f 1024
has "64-GPU hierarchical" "$tmp/folded.err" "folded: ranks shifted by 8 (r -> r+8 mod 64, a group of 8): ranks 0-7 replayed, on the quotient network"
# one GPU's PCIe link slower: no shift maps the routes onto themselves
sed 's/<link id="gpu19_pcie" bandwidth="[^"]*"/<link id="gpu19_pcie" bandwidth="1.2e+10Bps"/' \
    "$tmp/h64.xml" >"$tmp/h64-slow.xml"
cmp -s "$tmp/h64.xml" "$tmp/h64-slow.xml" && fail "the hierarchical platform edit changed nothing"
same "slower PCIe link" $hier -p "$tmp/h64-slow.xml" -b 1M -e 1M
has "slower PCIe link" "$tmp/folded.err" "not folded: the platform breaks every rank shift of the schedule"

# a trace records every rank
expect 0 "$cs" predict $ring -p "$tmp/d128.xml" -b 1K -e 1K --verbose --trace "$tmp/t.json"
has "--trace" "$tmp/err" "not folded: the trace records every rank"

[ "$fails" -eq 0 ]
