#!/bin/sh
# platform_set.sh: the link parameters (cs.link_Bps.*, cs.sys_Bps, cs.sys_lat_s), which only
# `collsim platform` turns into <link> attributes, are refused with exit 2 naming
# `collsim platform --set` by predict --set and by validate's set= and params= (SimGrid reads a
# loaded platform's links from the file: setting them there would change nothing); other keys
# still apply, cs.link_lat_s.* (each hop's latency, which the replay reads itself) among them.
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
cs="$CS_BUILDDIR/collsim"
. "$CS_SRCDIR/tests/lib.sh"
cd "$CS_SRCDIR" || exit 1
plat=platforms/dgx-a100.xml
meas=tests/data/validation/oci-bmgpu48-a100sxm40-1node-8gpu.csv
case_line="x $meas gen:ring:gpus=8,channels=1,instances=1,protocol=Simple $plat Simple sizes=:2K"

# WHAT WANT_RC FILE PATTERN: the last command's exit status and a fixed string in FILE.
check() {
    [ "$rc" -eq "$2" ] && grep -qF -- "$4" "$3" ||
        { fail "$1: exit $rc, want $2 and '$4'"; cat "$3" >&2; }
}

for kv in cs.link_Bps.pcie=1e9 cs.link_Bps.nvlink=1e9 cs.sys_Bps=1e9 cs.sys_lat_s=1e-6; do
    key=${kv%%=*}
    "$cs" predict --gen ring:gpus=8 -p "$plat" -b 1M -e 1M --set "$kv" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "predict --set $kv" 2 "$tmp/err" "collsim platform FAMILY --set $key="
    printf '# a comment line\n%s set=%s\n' "$case_line" "$kv" >"$tmp/cases.txt"
    "$cs" validate "$tmp/cases.txt" -o "$tmp/v" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "validate set=$kv" 2 "$tmp/err" \
        "cases.txt:2: set=$key is a link parameter: SimGrid reads bandwidths from the platform's <link>s, so set it when writing the platform (\`collsim platform FAMILY --set $key=VALUE\`"
    [ -e "$tmp/v/summary.md" ] && fail "validate set=$kv predicted"
done

# cs.link_lat_s applies: one more microsecond per hop moves a 1 KiB 8-GPU ring by 14 hops.
"$cs" predict --gen ring:gpus=8,channels=1 -p "$plat" -b 1K -e 1K --format csv >"$tmp/a" 2>&1
lat=$(sed -n 's/.*<prop id="cs.link_lat_s.nvlink" value="\([^"]*\)".*/\1/p' "$plat" |
    awk '{ printf "%.9g", $1 + 1e-6 }')
"$cs" predict --gen ring:gpus=8,channels=1 -p "$plat" -b 1K -e 1K --format csv \
    --set cs.link_lat_s.nvlink="$lat" >"$tmp/b" 2>&1
a=$(awk -F, 'NR == 2 { print $4 }' "$tmp/a")
b=$(awk -F, 'NR == 2 { print $4 }' "$tmp/b")
awk -v a="$a" -v b="$b" 'BEGIN { d = b - a - 14; exit !(a > 0 && d < 1e-3 && d > -1e-3) }' ||
    fail "--set cs.link_lat_s.nvlink: $a -> $b us, want +14"

# params=: a calibrate fit output with a link bandwidth is refused, naming the file and key;
# without that prop the same file applies.
{
    echo '<!-- fit: launch -->'
    echo '<prop id="cs.launch_s" value="0.5"/>'
    echo '<!-- fit: bandwidth -->'
    echo '<prop id="cs.link_Bps.nvlink" value="2.34e11"/>'
} >"$tmp/fit.props"
printf '%s params=%s\n' "$case_line" "$tmp/fit.props" >"$tmp/cases.txt"
"$cs" validate "$tmp/cases.txt" -o "$tmp/v" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "validate params= with a link key" 2 "$tmp/err" \
    "cases.txt:1: params file $tmp/fit.props: cs.link_Bps.nvlink is a link parameter"
grep -qF -- "--params FILE" "$tmp/err" || fail "params=: no --params"
head -n 2 "$tmp/fit.props" >"$tmp/launch.props"
printf '%s params=%s\n' "$case_line" "$tmp/launch.props" >"$tmp/cases.txt"
"$cs" validate "$tmp/cases.txt" -o "$tmp/v" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "validate params= without a link key" 0 "$tmp/out" "wrote $tmp/v/summary.md"
# the 0.5 s launch reached the prediction
awk -F, 'NR > 1 && !($3 > 500000) { bad = 1 } NR > 1 { n++ } END { exit bad || !n }' \
    "$tmp/v/x.csv" || fail "params= launch not applied"
# and set= of a key the replay reads still applies
printf '%s set=cs.launch_s=0.25\n' "$case_line" >"$tmp/cases.txt"
"$cs" validate "$tmp/cases.txt" -o "$tmp/w" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "validate set=cs.launch_s" 0 "$tmp/out" "wrote $tmp/w/summary.md"
awk -F, 'NR > 1 && !($3 > 250000 && $3 < 500000) { bad = 1 } NR > 1 { n++ } END { exit bad || !n }' \
    "$tmp/w/x.csv" || fail "set= launch not applied"
[ "$fails" -eq 0 ]
