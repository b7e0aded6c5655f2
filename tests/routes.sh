#!/bin/sh
# routes.sh: the ways `collsim platform` writes routes (Full: every pair listed; zones, the default
# above 256 GPUs: a zone per node or column, joined pair by pair; Floyd and Dijkstra: each GPU's
# routes to its switch and to the network) give every GPU pair the same links, with the same
# bandwidth, latency and sharing, as SimGrid loads them (tests/route_dump), and the same
# predictions to the last digit. About 40 s.
set -u
cs=${CS_BUILDDIR:-.}/collsim
dump=${CS_BUILDDIR:-.}/tests/route_dump
srcdir=${CS_SRCDIR:-..}
. "$srcdir/tests/lib.sh"

# dump NAME ROUTING PLATFORM-ARGS...: $tmp/NAME.xml written with --routing ROUTING (or the
# default when ROUTING is -) and its links and routes in $tmp/NAME.routes
dump() {
    name=$1 r=$2
    shift 2
    if [ "$r" = - ]; then
        expect 0 "$cs" platform "$@" -o "$tmp/$name.xml"
    else
        expect 0 "$cs" platform "$@" --routing "$r" -o "$tmp/$name.xml"
    fi
    "$dump" "$tmp/$name.xml" >"$tmp/$name.routes" 2>"$tmp/err" || fail "route_dump $name: $(head -c 300 "$tmp/err")"
}

# The FATPIPE links fabricA_B that join the zones of groups A and B (--routing zones, the default
# above 256 GPUs for a100-hier and dgx-a100): never limiting, no latency, one per pair of groups,
# in the middle of the pair's route, absent from the pair-by-pair routes.
no_fabric() {
    sed -e '/^link fabric[0-9]*_[0-9]* /d' -e 's/ fabric[0-9]*_[0-9]*//g' "$1"
}

# The FATPIPE links gpuG_between that keep a100-hier's paths apart when routed through switches
# (Floyd, Dijkstra): never limiting (each at the bandwidth of a GPU link the same transfer
# crosses, no latency), absent from the pair-by-pair routes.
no_between() {
    sed -e '/^link gpu[0-9]*_between /d' -e 's/ gpu[0-9]*_between//g' "$1"
}

no_between_fabric() {
    no_between "$1" >"$1.nb"
    no_fabric "$1.nb"
}

# Each route's links as a set: Dijkstra walks a path back from its end, so it lists a GPU's own
# links in another order than the pair-by-pair routes; the links are what the replay uses.
sorted() {
    awk '$1 == "route" { n = split(substr($0, index($0, ":") + 2), l, " ");
                         for (i = 2; i <= n; i++) { v = l[i]; j = i - 1;
                             while (j > 0 && l[j] > v) { l[j + 1] = l[j]; j-- } l[j + 1] = v }
                         s = $1 " " $2 " " $3; for (i = 1; i <= n; i++) s = s " " l[i]; print s; next }
         { print }' "$1"
}

# same WHAT NGPUS A B [FILTER]: the dumps of A and B are equal (after FILTER), hold NGPUS GPUs and
# NGPUS x (NGPUS - 1) routes, none empty.
same() {
    what=$1 g=$2 a=$3 b=$4 filter=${5:-cat}
    $filter "$tmp/$a.routes" >"$tmp/a.cmp"
    $filter "$tmp/$b.routes" >"$tmp/b.cmp"
    grep -q "^gpus $g$" "$tmp/a.cmp" && grep -q "^link " "$tmp/a.cmp" || fail "$what: $(tail -n 1 "$tmp/a.cmp")"
    [ "$(grep -c '^route gpu[0-9]* gpu[0-9]*: gpu' "$tmp/a.cmp")" -eq $((g * (g - 1))) ] ||
        fail "$what: not $((g * (g - 1))) routes with links"
    cmp -s "$tmp/a.cmp" "$tmp/b.cmp" ||
        { fail "$what: $a and $b differ"; diff "$tmp/a.cmp" "$tmp/b.cmp" | head -n 6 >&2; }
}

# Full against Floyd, link by link in order: one node, two nodes (NIC on either socket), 32 nodes
dump d8-full - dgx-a100
dump d8-floyd floyd dgx-a100
same "dgx-a100 1 node" 8 d8-full d8-floyd
for sock in same other; do
    dump d16-full - dgx-a100 --nodes 2 --nic-socket $sock
    dump d16-floyd floyd dgx-a100 --nodes 2 --nic-socket $sock
    same "dgx-a100 2 nodes, NIC socket $sock" 16 d16-full d16-floyd
done
dump h256-full - hgx-h100 --nodes 32
dump h256-floyd floyd hgx-h100 --nodes 32
same "hgx-h100 32 nodes" 256 h256-full h256-floyd
# Full against zones, link by link in order, the fabric links aside
dump d8-zones zones dgx-a100
same "dgx-a100 1 node by zones" 8 d8-full d8-zones no_fabric
for sock in same other; do
    dump d16-full - dgx-a100 --nodes 2 --nic-socket $sock
    dump d16-zones zones dgx-a100 --nodes 2 --nic-socket $sock
    same "dgx-a100 2 nodes by zones, NIC socket $sock" 16 d16-full d16-zones no_fabric
done
grep -q '^route gpu0 gpu9: gpu0_pcie_UP gpu0_sys_UP gpu0_nic_UP fabric0_1 gpu9_nic_DOWN gpu9_sys_DOWN gpu9_pcie_DOWN$' \
    "$tmp/d16-zones.routes" || fail "dgx-a100 2 nodes by zones gpu0 -> gpu9: $(grep '^route gpu0 gpu9:' "$tmp/d16-zones.routes")"
grep -q '^link fabric0_1 .* 0 s fatpipe$' "$tmp/d16-zones.routes" || fail "fabric0_1: $(grep '^link fabric' "$tmp/d16-zones.routes")"
dump h256-zones zones hgx-h100 --nodes 32
same "hgx-h100 32 nodes by zones" 256 h256-full h256-zones no_fabric
# a100-hier: 4 x 2, 16 x 16, columns over the network; the same links but the FATPIPEs
dump a8-full - a100-hier
dump a8-floyd floyd a100-hier
same "a100-hier 4x2" 8 a8-full a8-floyd no_between
dump a256-full - a100-hier --rows 16 --columns 16 --gpu h100
dump a256-floyd floyd a100-hier --rows 16 --columns 16 --gpu h100
same "a100-hier 16x16" 256 a256-full a256-floyd no_between
dump a16n-full - a100-hier --rows 4 --columns 4 --between net
dump a16n-floyd floyd a100-hier --rows 4 --columns 4 --between net
same "a100-hier 4x4 over net" 16 a16n-full a16n-floyd no_between
dump a8-zones zones a100-hier
same "a100-hier 4x2 by zones" 8 a8-full a8-zones no_fabric
dump a256-zones zones a100-hier --rows 16 --columns 16 --gpu h100
same "a100-hier 16x16 by zones" 256 a256-full a256-zones no_fabric
dump a16n-zones zones a100-hier --rows 4 --columns 4 --between net
same "a100-hier 4x4 over net by zones" 16 a16n-full a16n-zones no_fabric
grep -q '^link gpu0_between ' "$tmp/a8-floyd.routes" || fail "a100-hier 4x2 Floyd: no FATPIPE gpu0_between"
grep -q '^link gpu0_between .* fatpipe$' "$tmp/a8-floyd.routes" || fail "gpu0_between is not a FATPIPE"
# one server per GPU
dump p8-full - a100-pcie-net --nodes 8 --nic-socket other
dump p8-floyd floyd a100-pcie-net --nodes 8 --nic-socket other
same "a100-pcie-net 8 servers" 8 p8-full p8-floyd
# Above 256 GPUs the default (zones) against Floyd, the default before, and Floyd against
# Dijkstra, the default before that: the same links per pair; 64 DGX nodes, a100-hier 12 x 32
dump d512 - dgx-a100 --nodes 64
dump d512-floyd floyd dgx-a100 --nodes 64
dump d512-dijkstra dijkstra dgx-a100 --nodes 64
grep -q '<zone id="node63" routing="Full">' "$tmp/d512.xml" || fail "512 GPUs not routed by zones"
same "dgx-a100 64 nodes" 512 d512-floyd d512 no_fabric
same "dgx-a100 64 nodes Dijkstra" 512 d512-floyd d512-dijkstra sorted
# ... and Floyd keeps the pair-by-pair order (GPU a's links up, then b's down), zones too
grep -q '^route gpu0 gpu8: gpu0_pcie_UP gpu0_nic_UP gpu8_nic_DOWN gpu8_pcie_DOWN$' "$tmp/d512-floyd.routes" ||
    fail "dgx-a100 64 nodes gpu0 -> gpu8: $(grep '^route gpu0 gpu8:' "$tmp/d512-floyd.routes")"
[ "$(grep -c '^link fabric' "$tmp/d512.routes")" -eq 2016 ] || fail "dgx-a100 64 nodes: not 2016 fabric links"
dump a384 - a100-hier --rows 12 --columns 32
dump a384-floyd floyd a100-hier --rows 12 --columns 32
dump a384-dijkstra dijkstra a100-hier --rows 12 --columns 32
same "a100-hier 12x32" 384 a384-floyd a384 "no_between_fabric"
same "a100-hier 12x32 Dijkstra" 384 a384-floyd a384-dijkstra sorted
# families of one machine and machines from their files keep pair-by-pair routes (Full)
for fam in a100-pcie-4gpu a100-pcie-nvbridge "virtual --ranks 4"; do
    # shellcheck disable=SC2086
    dump one - $fam
    grep -q 'routing="Full"' "$tmp/one.xml" || fail "$fam: not Full"
done
topo=$srcdir/tests/data/topology
for f in "$topo"/*.xml; do
    [ -f "$f" ] || continue
    if "$cs" platform from "$f" --nodes 2 -o "$tmp/topo.xml" 2>"$tmp/err"; then
        grep -q 'routing="Full"' "$tmp/topo.xml" || fail "from $(basename "$f"): not Full"
        "$dump" "$tmp/topo.xml" >/dev/null 2>"$tmp/err" || fail "route_dump from $(basename "$f"): $(head -c 200 "$tmp/err")"
        break
    fi
done

# Predictions: a few schedules of the corpus on Full, Floyd, Dijkstra and zones routes, CSV
# equal to every digit at 1 KiB, 1 MiB and 1 GiB
pred() { # SCHEDULE-OR-GEN PLATFORM OUT
    case $1 in
    *.xml) "$cs" predict "$1" -p "$2" -b 1K -e 1G -f 1024 --format csv >"$3" 2>"$tmp/err" ;;
    *) "$cs" predict --gen "$1" -p "$2" -b 1K -e 1G -f 1024 --format csv >"$3" 2>"$tmp/err" ;;
    esac
    [ $? -le 1 ] || fail "predict $1 on $2: $(head -c 300 "$tmp/err")"
}
cmp_pred() { # WHAT SCHEDULE PLATFORM-ARGS...
    what=$1 sched=$2
    shift 2
    for r in full floyd dijkstra zones; do
        expect 0 "$cs" platform "$@" --routing $r -o "$tmp/p-$r.xml"
        pred "$sched" "$tmp/p-$r.xml" "$tmp/p-$r.csv"
    done
    [ "$(grep -c ',ok,\|,deadlock,' "$tmp/p-full.csv")" -eq 3 ] || fail "$what: $(cat "$tmp/p-full.csv")"
    for r in floyd dijkstra zones; do
        sed 's/platform FNV-1a 64 [0-9a-f]*//' "$tmp/p-full.csv" >"$tmp/a.csv"
        sed 's/platform FNV-1a 64 [0-9a-f]*//' "$tmp/p-$r.csv" >"$tmp/b.csv"
        cmp -s "$tmp/a.csv" "$tmp/b.csv" ||
            { fail "$what: Full and $r predict differently"; diff "$tmp/a.csv" "$tmp/b.csv" | head -n 6 >&2; }
    done
}
sdir=$srcdir/schedules
cmp_pred "hierarchical 16 GPUs on a100-hier 8x2" "$sdir/hierarchical.16gpu.1inst.LL.xml" a100-hier --rows 8 --columns 2
cmp_pred "allpairs 8 GPUs LL128 on a100-hier 4x2" "$sdir/allpairs.8gpu.1inst.LL128.xml" a100-hier
cmp_pred "ring 8 GPUs Simple on dgx-a100" "$sdir/ring.8gpu.4ch.Simple.xml" dgx-a100
cmp_pred "ring 16 GPUs LL across 2 nodes" ring:gpus=16,channels=2,protocol=LL dgx-a100 --nodes 2
cmp_pred "hierarchical 16 GPUs over net" "$sdir/hierarchical-seed.16gpu.1inst.Simple.xml" a100-hier --rows 4 --columns 4 --between net

[ "$fails" -eq 0 ] || exit 1
exit 0
