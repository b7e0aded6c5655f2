#!/bin/sh
# platforms.sh: the committed platforms/*.xml are what platforms/README's commands write (so they
# carry the committed fitted parameters of platforms/dgx-a100.props), and dgx-a100.props agrees
# with the committed `collsim calibrate fit` outputs in results/validation/ it names.
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
collsim="$CS_BUILDDIR/collsim"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
cd "$CS_SRCDIR" || exit 1

# Every line "  NAME.xml   collsim platform ARGS" of the README, run and compared byte for byte.
n=0
grep -E '^  [a-z0-9-]+\.xml +collsim platform ' platforms/README >"$tmp/lines"
while read -r name _ _ args; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    if ! "$collsim" platform $args -o "$tmp/$name"; then
        echo "FAIL: collsim platform $args" >&2
        fail=1
    elif ! cmp -s "$tmp/$name" "platforms/$name"; then
        echo "FAIL: platforms/$name differs from \`collsim platform $args\`:" >&2
        diff "platforms/$name" "$tmp/$name" | head -20 >&2
        fail=1
    fi
done <"$tmp/lines"
nxml=$(ls platforms/*.xml | wc -l)
[ "$n" -eq "$nxml" ] || { echo "FAIL: README regenerates $n of $nxml platforms" >&2; fail=1; }

# dgx-a100.props against the fits it names (the steps are those its comments state).
value() { # KEY FILE
    sed -n "s/.*<prop id=\"$1\" value=\"\([^\"]*\)\".*/\1/p" "$2" | tail -n 1
}
near() { # WHAT GOT WANT RELTOL
    awk -v g="$2" -v w="$3" -v t="$4" \
        'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= t * w) }' ||
        { echo "FAIL: $1: $2, want $3" >&2; fail=1; }
}
props=platforms/dgx-a100.props
lat=results/validation/fit-ring-latency.props
bw=results/validation/fit-oci-bandwidth.props
near cs.launch_s "$(value cs.launch_s "$props")" "$(value cs.launch_s "$lat")" 1e-8
want=$(awk -v s="$(value cs.call_s.LL.nvlink "$lat")" 'BEGIN { printf "%.6g", 2 * (s - 0.6e-6) }')
near cs.launch_gpu_s "$(value cs.launch_gpu_s "$props")" "$want" 1e-5
grep -q '<prop id="cs.link_lat_s.nvlink" value="6e-07"/>' platforms/dgx-a100.xml ||
    { echo "FAIL: dgx-a100.props assumes cs.link_lat_s.nvlink = 0.6 us" >&2; fail=1; }
want=$(awk -v b="$(value cs.link_Bps.nvlink "$bw")" 'BEGIN { printf "%.6g", b * 1.0316 }')
near cs.link_Bps.nvlink "$(value cs.link_Bps.nvlink "$props")" "$want" 1e-5
# Each fitted key of the props file is in both DGX platforms with its comment naming the fit.
for k in cs.launch_s cs.launch_gpu_s cs.link_Bps.nvlink; do
    for p in platforms/dgx-a100.xml platforms/dgx-a100-2node.xml; do
        grep -B1 "<prop id=\"$k\"" "$p" | grep -q 'fit: results/validation/fit-' ||
            { echo "FAIL: $p: $k does not name its fit" >&2; fail=1; }
    done
done

# A platform that disagrees with the fit is caught: change one fitted value and compare.
"$collsim" platform dgx-a100 --params "$props" --set cs.launch_s=8.4e-6 -o "$tmp/moved.xml" &&
    ! cmp -s "$tmp/moved.xml" platforms/dgx-a100.xml ||
    { echo "FAIL: a changed fitted value goes unnoticed" >&2; fail=1; }

# --params errors: file:line, exit 2.
printf '<!-- x -->\n<prop id="cs.nope" value="1"/>\n' >"$tmp/bad.props"
"$collsim" platform dgx-a100 --params "$tmp/bad.props" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "bad.props:2: unknown platform parameter 'cs.nope'" "$tmp/err" ||
    { echo "FAIL: bad key: $(cat "$tmp/err")" >&2; fail=1; }
printf '<prop id="cs.launch_s" value="-1"/>\n' >"$tmp/bad.props"
"$collsim" platform dgx-a100 --params "$tmp/bad.props" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "bad.props:1: .*not a non-negative number" "$tmp/err" ||
    { echo "FAIL: bad value: $(cat "$tmp/err")" >&2; fail=1; }
printf 'launch 1\n' >"$tmp/bad.props"
"$collsim" platform dgx-a100 --params "$tmp/bad.props" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "bad.props:1: expected" "$tmp/err" ||
    { echo "FAIL: bad line: $(cat "$tmp/err")" >&2; fail=1; }
"$collsim" platform dgx-a100 --params "$tmp/none.props" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "none.props" "$tmp/err" ||
    { echo "FAIL: missing file: $(cat "$tmp/err")" >&2; fail=1; }
# The last setting wins, and --set names itself as the source.
"$collsim" platform dgx-a100 --params "$props" --set cs.launch_s=7e-6 -o "$tmp/s.xml"
[ "$(value cs.launch_s "$tmp/s.xml")" = "7e-06" ] &&
    grep -q 'set cs.launch_s=7e-6 on the command line' "$tmp/s.xml" ||
    { echo "FAIL: --set after --params" >&2; fail=1; }
exit $fail
