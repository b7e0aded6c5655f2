#!/bin/sh
# hier_nodes.sh: the hierarchical AllReduce on multi-node shapes: columns = nodes and rows = GPUs
# per node put rank c*8+i on GPU i of node c, as `collsim platform dgx-a100 --nodes N` numbers its
# GPUs (gpu n*8+i), so the column phases run on NVSwitch and the row phases over the NICs. On 2
# and 4 DGX nodes predict says ok for LL, LL128 and Simple from 1 KiB to 1 GiB (x32) and verify
# accepts the schedule (also under the executor).
set -u
cs=${CS_BUILDDIR:-.}/collsim
. "${CS_SRCDIR:-..}/tests/lib.sh"

for nodes in 2 4; do
    g=$((nodes * 8))
    spec="hierarchical:gpus=$g,columns=$nodes"
    "$cs" platform dgx-a100 --nodes $nodes -o "$tmp/dgx.xml" 2>"$tmp/err" ||
        fail "platform dgx-a100 --nodes $nodes: $(cat "$tmp/err")"
    # the shape: gpu 8 (node 1, GPU 0) is rank 8, row 0 of column 1
    "$cs" gen hierarchical --gpus $g --columns $nodes -o "$tmp/h.xml" 2>"$tmp/err" ||
        fail "gen $spec: $(cat "$tmp/err")"
    "$cs" verify --runtime executor "$tmp/h.xml" >"$tmp/out" 2>&1 ||
        fail "verify $spec: $(head -c 300 "$tmp/out")"
    for proto in LL LL128 Simple; do
        "$cs" predict --gen "$spec,protocol=$proto" --platform "$tmp/dgx.xml" -b 1K -e 1G -f 32 \
            --format csv >"$tmp/out" 2>"$tmp/err"
        rc=$?
        [ "$rc" -eq 0 ] || fail "$spec $proto: predict exited $rc: $(head -c 300 "$tmp/err")"
        # 1K 32K 1M 32M 1G, every one ok
        got=$(awk -F, 'NR > 1 && $7 == "ok" { n++ } END { print n + 0 }' "$tmp/out")
        [ "$got" -eq 5 ] || fail "$spec $proto: $got of 5 sizes ok: $(grep -v ',ok,' "$tmp/out" | head -3)"
        grep -q "warning" "$tmp/err" && fail "$spec $proto: $(grep warning "$tmp/err")"
    done
done

[ "$fails" -eq 0 ] || exit 1
exit 0
