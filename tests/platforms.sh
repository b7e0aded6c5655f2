#!/bin/sh
# platforms.sh: the committed platforms/*.xml are what platforms/README's commands write (so they
# carry the committed fitted parameters of platforms/dgx-a100.props), and dgx-a100.props is the
# committed pooled fit of results/calibration; the
# generator's NIC types (--nic) and GPU-NIC paths across CPU sockets (--nic-socket other, the
# a100-pcie-net family) write the links and routes they should.
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
collsim="$CS_BUILDDIR/collsim"
. "$CS_SRCDIR/tests/lib.sh"
cd "$CS_SRCDIR" || exit 1

# Every line "  NAME.xml   collsim platform ARGS" of the README, run and compared byte for byte.
n=0
grep -E '^  [a-z0-9-]+\.xml +collsim platform ' platforms/README >"$tmp/lines"
while read -r name _ _ args; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    if ! "$collsim" platform $args -o "$tmp/$name"; then
        fail "collsim platform $args"
    elif ! cmp -s "$tmp/$name" "platforms/$name"; then
        fail "platforms/$name differs from \`collsim platform $args\`:"
        diff "platforms/$name" "$tmp/$name" | head -20 >&2
    fi
done <"$tmp/lines"
nxml=$(ls platforms/*.xml | wc -l)
[ "$n" -eq "$nxml" ] || fail "README regenerates $n of $nxml platforms"

# dgx-a100.props is the pooled fit of results/calibration (scripts/calibrate-shared
# dgx-a100-pooled writes it; scripts/refresh-results copies it), byte for byte, and each of its
# keys names that fit in the DGX platforms.
props=platforms/dgx-a100.props
pooled=results/calibration/dgx-a100-pooled.props
cmp -s "$props" "$pooled" || fail "$props is not $pooled (scripts/refresh-results copies it)"
nk=0
for k in $(sed -n 's/.*<prop id="\([^"]*\)".*/\1/p' "$props"); do
    nk=$((nk + 1))
    for p in platforms/dgx-a100.xml platforms/dgx-a100-2node.xml platforms/dgx-a100-2node-2x100.xml; do
        grep -B1 "<prop id=\"$k\"" "$p" | grep -q 'fit through the model: collsim calibrate platform on ' ||
            fail "$p: $k does not name its fit"
    done
done
[ "$nk" -ge 6 ] || fail "$props: $nk keys"
value() { # KEY FILE
    sed -n "s/.*<prop id=\"$1\" value=\"\([^\"]*\)\".*/\1/p" "$2" | tail -n 1
}

# A platform that disagrees with the fit is caught: change one fitted value and compare.
"$collsim" platform dgx-a100 --params "$props" --set cs.launch_s=8.4e-6 -o "$tmp/moved.xml" &&
    ! cmp -s "$tmp/moved.xml" platforms/dgx-a100.xml ||
    fail "a changed fitted value goes unnoticed"

# --params errors: file:line, exit 2.
printf '<!-- x -->\n<prop id="cs.nope" value="1"/>\n' >"$tmp/bad.props"
"$collsim" platform dgx-a100 --params "$tmp/bad.props" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "bad.props:2: unknown platform parameter 'cs.nope'" "$tmp/err" ||
    fail "bad key: $(cat "$tmp/err")"
printf '<prop id="cs.launch_s" value="-1"/>\n' >"$tmp/bad.props"
"$collsim" platform dgx-a100 --params "$tmp/bad.props" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "bad.props:1: .*not a non-negative number" "$tmp/err" ||
    fail "bad value: $(cat "$tmp/err")"
printf '<prop id="cs.link_eff.LL.nvlink" value="1.5"/>\n' >"$tmp/bad.props"
"$collsim" platform dgx-a100 --params "$tmp/bad.props" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "bad.props:1: .*not a share (above 0, at most 1)" "$tmp/err" ||
    fail "a share above 1: $(cat "$tmp/err")"
printf 'launch 1\n' >"$tmp/bad.props"
"$collsim" platform dgx-a100 --params "$tmp/bad.props" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "bad.props:1: expected" "$tmp/err" ||
    fail "bad line: $(cat "$tmp/err")"
"$collsim" platform dgx-a100 --params "$tmp/none.props" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "none.props" "$tmp/err" ||
    fail "missing file: $(cat "$tmp/err")"
# The last setting wins, and --set names itself as the source.
"$collsim" platform dgx-a100 --params "$props" --set cs.launch_s=7e-6 -o "$tmp/s.xml"
[ "$(value cs.launch_s "$tmp/s.xml")" = "7e-06" ] &&
    grep -q 'set cs.launch_s=7e-6 on the command line' "$tmp/s.xml" ||
    fail "--set after --params"

# --- NIC types and the GPU-NIC path across CPU sockets ---
route() { # FILE SRC DST: the route's link_ctn as "id:DIR ..."
    awk -v s="$2" -v d="$3" '
        index($0, "<route src=\"" s "\" dst=\"" d "\">") { on = 1; next }
        on && /<\/route>/ { exit }
        on { match($0, /id="[^"]*"/); id = substr($0, RSTART + 4, RLENGTH - 5)
             match($0, /direction="[^"]*"/); printf "%s%s:%s", n++ ? " " : "", id, substr($0, RSTART + 11, RLENGTH - 12) }
        END { print "" }' "$1"
}
links() { # FILE SUFFIX: "bandwidth latency class" of every link gpuN_SUFFIX, one line per distinct
    awk -v sfx="$2" '
        $0 ~ "<link id=\"gpu[0-9]+_" sfx "\"" { match($0, /bandwidth="[^"]*"/); b = substr($0, RSTART + 11, RLENGTH - 12)
             match($0, /latency="[^"]*"/); l = substr($0, RSTART + 9, RLENGTH - 10); n++; getline
             match($0, /value="[^"]*"/); v[b " " l " " substr($0, RSTART + 7, RLENGTH - 8)]++ }
        END { for (k in v) print n, k }' "$1"
}
expect_eq() { # WHAT GOT WANT
    [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}
gen() { # OUT ARGS...: collsim platform ARGS -o $tmp/OUT, which must succeed
    out=$1
    shift
    "$collsim" platform "$@" -o "$tmp/$out" || fail "collsim platform $*"
}
# The body of a platform file without its first comment (the command line that wrote it).
body() { grep -v 'written by `collsim platform' "$1"; }

gen hdr.xml dgx-a100 --nodes 2
gen roce.xml dgx-a100 --nodes 2 --nic roce100
gen 2x100.xml dgx-a100 --nodes 2 --nic 2x100
gen hdr2.xml dgx-a100 --nodes 2 --nic hdr --nic-socket same
expect_eq "hdr NICs" "$(links "$tmp/hdr.xml" nic)" "16 2.4e+10Bps 2.7e-06s net"
expect_eq "roce100 NICs" "$(links "$tmp/roce.xml" nic)" "16 1.2e+10Bps 2.7e-06s net"
expect_eq "2x100 NICs" "$(links "$tmp/2x100.xml" nic)" "16 2.4e+10Bps 2.7e-06s net"
expect_eq "roce100 prop" "$(value cs.link_Bps.net "$tmp/roce.xml")" "1.2e+10"
grep -B1 '<prop id="cs.link_Bps.net"' "$tmp/roce.xml" | grep -qF 'NCCL NET_BW 12.0 GB/s "100Gbit" (topo.h' ||
    fail "--nic roce100 does not name NET_BW"
grep -B1 '<prop id="cs.link_Bps.net"' "$tmp/2x100.xml" | grep -qF 'OCI BM.GPU4.8: 16 x 100 Gb/s for 8 GPUs' ||
    fail "--nic 2x100 does not name BM.GPU4.8"
grep -qF 'one 100 Gb/s RoCE NIC per GPU' "$tmp/roce.xml" ||
    fail "--nic roce100 header"
# hdr and the same socket are the defaults: only the command line in the header differs
body "$tmp/hdr.xml" >"$tmp/a"
body "$tmp/hdr2.xml" >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || fail "--nic hdr --nic-socket same is not the default"
# the NIC changes nothing else: the RoCE file is the HDR one but for the NIC links' bandwidth,
# cs.link_Bps.net and its source, and the header
norm() {
    body "$1" | grep -v -e 'cs.link_Bps.net' -e 'HDR IB ~24' -e 'RoCE NIC' -e 'node(s) of 8 A100' |
        sed 's/bandwidth="1.2e+10Bps"/bandwidth="2.4e+10Bps"/'
}
norm "$tmp/hdr.xml" >"$tmp/a"
norm "$tmp/roce.xml" >"$tmp/c"
[ "$(wc -l <"$tmp/a")" -gt 100 ] && cmp -s "$tmp/a" "$tmp/c" ||
    { fail "--nic roce100 changed more than the NICs"; diff "$tmp/a" "$tmp/c" | head >&2; }
# --nic is a setting of cs.link_Bps.net: the last of --nic and --set wins
gen s1.xml dgx-a100 --nodes 2 --nic roce100 --set cs.link_Bps.net=5e9
gen s2.xml dgx-a100 --nodes 2 --set cs.link_Bps.net=5e9 --nic roce100
expect_eq "--set after --nic" "$(links "$tmp/s1.xml" nic)" "16 5e+09Bps 2.7e-06s net"
expect_eq "--nic after --set" "$(links "$tmp/s2.xml" nic)" "16 1.2e+10Bps 2.7e-06s net"
gen hn.xml a100-hier --rows 2 --columns 2 --between net --nic roce100
expect_eq "a100-hier net --nic roce100" "$(links "$tmp/hn.xml" nic)" "4 1.2e+10Bps 2.7e-06s net"

# The NIC on the other socket: a GPU's route to its NIC crosses the sockets (gpuN_sys, cs.sys_Bps
# and cs.sys_lat_s, class pcie) on both ends; NVLink routes inside a node are unchanged.
gen sys.xml dgx-a100 --nodes 2 --nic-socket other
expect_eq "sys links" "$(links "$tmp/sys.xml" sys)" "16 1e+10Bps 0s pcie"
expect_eq "sys route across nodes" "$(route "$tmp/sys.xml" gpu3 gpu11)" \
    "gpu3_pcie:UP gpu3_sys:UP gpu3_nic:UP gpu11_nic:DOWN gpu11_sys:DOWN gpu11_pcie:DOWN"
expect_eq "same-socket route across nodes" "$(route "$tmp/hdr.xml" gpu3 gpu11)" \
    "gpu3_pcie:UP gpu3_nic:UP gpu11_nic:DOWN gpu11_pcie:DOWN"
expect_eq "sys route in a node" "$(route "$tmp/sys.xml" gpu3 gpu5)" "gpu3_nvl:UP gpu5_nvl:DOWN"
gen sys1.xml dgx-a100 --nic-socket other --set cs.sys_Bps=7.7e9
expect_eq "one node: no NIC path" "$(grep -c '_sys"' "$tmp/sys1.xml")" "0"
gen sys5.xml dgx-a100 --nodes 2 --nic-socket other --set cs.sys_Bps=7.7e9 --set cs.sys_lat_s=1e-7
expect_eq "sys links follow cs.sys_*" "$(links "$tmp/sys5.xml" sys)" "16 7.7e+09Bps 1e-07s pcie"

# a100-pcie-net: one PCIe card and one NIC per server; every pair crosses the network.
gen pn.xml a100-pcie-net
gen pn3.xml a100-pcie-net --nodes 3 --nic-socket other --nic roce100
expect_eq "a100-pcie-net GPUs" "$(grep -c '<host id="gpu' "$tmp/pn.xml") $(grep -c '<route ' "$tmp/pn.xml")" "2 1"
expect_eq "a100-pcie-net route" "$(route "$tmp/pn.xml" gpu0 gpu1)" \
    "gpu0_pcie:UP gpu0_nic:UP gpu1_nic:DOWN gpu1_pcie:DOWN"
expect_eq "a100-pcie-net 3 GPUs" "$(grep -c '<host id="gpu' "$tmp/pn3.xml") $(grep -c '<route ' "$tmp/pn3.xml")" "3 3"
expect_eq "a100-pcie-net other-socket route" "$(route "$tmp/pn3.xml" gpu1 gpu2)" \
    "gpu1_pcie:UP gpu1_sys:UP gpu1_nic:UP gpu2_nic:DOWN gpu2_sys:DOWN gpu2_pcie:DOWN"
expect_eq "a100-pcie-net NICs" "$(links "$tmp/pn3.xml" nic)" "3 1.2e+10Bps 2.7e-06s net"
expect_eq "a100-pcie-net PCIe" "$(links "$tmp/pn3.xml" pcie)" "3 2.4e+10Bps 1e-06s pcie"
expect_eq "a100-pcie-net sys" "$(links "$tmp/pn3.xml" sys)" "3 1e+10Bps 0s pcie"
expect_eq "a100-pcie-net links" "$(grep -c '<link id=' "$tmp/pn3.xml")" "9"

# Bad NIC options exit 2 naming the option.
bad() { # MESSAGE ARGS...
    msg=$1
    shift
    "$collsim" platform "$@" -o "$tmp/bad.xml" 2>"$tmp/err"
    [ $? -eq 2 ] && grep -qF -- "$msg" "$tmp/err" ||
        fail "collsim platform $*: $(cat "$tmp/err")"
}
bad "--nic takes hdr, roce100 or 2x100, not 'ndr'" dgx-a100 --nic ndr
bad "--nic-socket takes same or other, not 'far'" dgx-a100 --nic-socket far
bad "--nic applies to platforms with NICs" a100-pcie-4gpu --nic roce100
bad "--nic applies to platforms with NICs" a100-hier --nic roce100
bad "--nic-socket applies to dgx-a100 / ndv4 and a100-pcie-net only" a100-hier --between net --nic-socket other
bad "a100-pcie-net has one GPU per server" a100-pcie-net --gpus-per-node 2
bad "--nodes applies to dgx-a100 / ndv4 and a100-pcie-net only" a100-pcie-4gpu --nodes 2
[ "$fails" -eq 0 ]
