#!/bin/sh
# verify_cli.sh: `collsim verify` exit codes, messages, stdin, options, several files; what
# `collsim info` and `collsim fmt` make of invalid schedules.
set -u

src=${CS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${CS_BUILDDIR:-$(pwd)}
collsim=$build/collsim
data=$src/tests/data/msccl-xml
seed=$data/allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml
fixed=$data/allreduce_a100_pcie_hierarchical_fixed.4gpu.1inst.LL.xml
custom=$data/simple_custom_collective.prog1.xml
bad=$src/tests/data/bad/dependency_cycle.xml
. "$src/tests/lib.sh"

# run WANT_RC ARGS...: run collsim verify, check the exit status; output in $tmp/out, $tmp/err
run() {
    want=$1
    shift
    "$collsim" verify "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "collsim verify $*: exit $rc, expected $want"
        sed 's/^/  /' "$tmp/err" "$tmp/out" | head -20 >&2
    fi
}

# has FILE STRING: FILE contains STRING
has() {
    if ! grep -q -F -- "$2" "$1"; then
        fail "$(basename "$1") lacks '$2'"
        sed 's/^/  /' "$1" | head -20 >&2
    fi
}

run 1 "$seed"
has "$tmp/err" "$seed:5: rank 0 output chunk 0 is wrong: expected the sum of input chunk 0 of all 4 ranks"
has "$tmp/err" "$seed: ... and 44 more problems"
has "$tmp/out" "$seed: wrong: 64 data errors (64 wrong output chunks)"

run 0 "$fixed"
has "$tmp/out" "$fixed: ok: allreduce on 4 gpus"

run 0 - <"$fixed"
has "$tmp/out" "<stdin>: ok"

run 1 --max-errors 1 "$seed"
has "$tmp/err" "... and 63 more problems"

run 0 "$custom"
has "$tmp/err" "note: coll=\"custom\" defines no result: structural checks only"
run 0 -q "$custom"
[ -s "$tmp/err" ] && fail "-q still prints notes"

# The worst verdict wins: one wrong file makes 1, one invalid file makes 2.
run 1 "$fixed" "$seed"
run 2 "$seed" "$bad" "$fixed"
has "$tmp/err" "deadlock"
has "$tmp/out" "$bad: invalid: 1 structural error"

# Usage errors.
run 2
run 2 --max-errors 0 "$fixed"
run 2 --max-errors "$fixed"
run 2 --bogus "$fixed"
run 0 -- "$fixed"
run 2 --max-errors 99999999999 "$fixed"
has "$tmp/err" "out of range"
run 2 --max-errors
has "$tmp/err" "option '--max-errors' needs a value"

# Attached values; options after the files.
run 1 --max-errors=1 "$seed"
has "$tmp/err" "... and 63 more problems"
run 0 "$custom" -q
[ -s "$tmp/err" ] && fail "-q after the file still prints notes"

# --runtime: what the executor and the legacy runtime load. The fixed schedule with the executor's
# three <algo> attributes passes both; without them the executor refuses it (the legacy runtime
# does not); a declaration, a tab in a tag, a single-quoted value, coll="custom" and 65 steps in
# a tb are refused by the executor, each at its line.
sed 's/<algo \([^>]*\)>/<algo \1 outofplace="0" minBytes="0" maxBytes="0">/' "$fixed" >"$tmp/exec.xml"
run 0 --runtime executor "$tmp/exec.xml"
run 0 --runtime=legacy "$tmp/exec.xml"
run 2 --runtime executor "$fixed"
has "$tmp/err" ":1: <algo> lacks minBytes maxBytes outofplace: the executor requires"
run 0 --runtime legacy "$fixed"
run 2 --runtime newest "$fixed"
has "$tmp/err" "--runtime takes executor or legacy, not 'newest'"
{ echo '<?xml version="1.0"?>'; sed "2s/<gpu id=\"0\"/<gpu\tid='0'/" "$tmp/exec.xml"; } >"$tmp/tok.xml"
run 2 --runtime executor "$tmp/tok.xml"
has "$tmp/err" "tok.xml:1: an <?xml ... ?> declaration"
has "$tmp/err" "tok.xml:3: a tab inside a tag"
has "$tmp/err" "tok.xml:3: a single-quoted attribute value"
run 0 "$tmp/tok.xml"
sed 's/<algo \([^>]*\)>/<algo \1 outofplace="1" minBytes="0" maxBytes="0">/' "$custom" >"$tmp/cust.xml"
run 2 --runtime executor "$tmp/cust.xml"
has "$tmp/err" 'coll="custom": the executor refuses it'
awk '/<tb / && !done { print; for (i = 0; i < 65; i++) printf "      <step s=\"%d\" type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n", i; done = 1; skip = 1; next }
     skip && /<\/tb>/ { skip = 0 } !skip { print }' "$tmp/exec.xml" >"$tmp/long.xml"
run 2 --runtime executor "$tmp/long.xml"
has "$tmp/err" "has 65 steps: over the executor's default limit of 64"

# A file whose bytes libxml2 cannot decode: one line on stderr, collsim's, with file and line
# (libxml2 printed its own "encoding error" lines there too).
printf '\377\376<\000a\000\000\330\000\000' >"$tmp/enc.xml"
run 2 "$tmp/enc.xml"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && has "$tmp/err" "enc.xml:1: malformed XML" ||
    fail "an undecodable file: $(cat "$tmp/err")"

# Co-residency: 128 threadblocks per GPU (runtime-audit.md section 0 row 2) do not fit an A100's
# 108 SMs at one CTA per SM: an error per GPU naming the count; --sms and a platform's
# cs.gpu_sms change the GPU (--sms wins); the count at the limit passes, one more fails.
"$collsim" gen hierarchical --gpus 8 --instances 8 --protocol LL --variant v1 --sms 128 -o "$tmp/h128.xml" || exit 99
run 2 "$tmp/h128.xml"
has "$tmp/err" "$tmp/h128.xml:2: gpu 0 has 128 threadblocks; at most 108 are co-resident on this GPU (108 SMs x 1 CTA per SM): the runtime would hang"
has "$tmp/err" "gpu 7 has 128 threadblocks"
has "$tmp/out" "h128.xml: invalid: 8 structural errors"
run 0 --sms 128 "$tmp/h128.xml"
run 2 --sms 127 "$tmp/h128.xml"
has "$tmp/err" "at most 127 are co-resident on this GPU (127 SMs x 1 CTA per SM)"
"$collsim" platform dgx-a100 --set cs.gpu_sms=132 -o "$tmp/h200.xml" || exit 99
run 0 --platform "$tmp/h200.xml" "$tmp/h128.xml"
run 2 --platform "$tmp/h200.xml" --sms 127 "$tmp/h128.xml"
"$collsim" platform dgx-a100 --set cs.gpu_sms=32 --set cs.ctas_per_sm=4 -o "$tmp/c4.xml" || exit 99
run 0 --platform "$tmp/c4.xml" "$tmp/h128.xml"
run 2 --sms 0 "$tmp/h128.xml"
has "$tmp/err" "--sms: '0' is out of range"
run 2 --platform "$tmp/none.xml" "$tmp/h128.xml"
has "$tmp/err" "none.xml"
"$collsim" help verify >"$tmp/help" 2>&1
has "$tmp/help" "--sms N         SMs per GPU for the co-residency check (default 108"

# LL128 off NVLink, with a platform: a warning on stderr (exit unchanged) when a connection's
# route within a node crosses PCIe; none without a platform, with -q, on NVLink alone, across the
# network, or for LL; a platform with too few GPUs is an error.
"$collsim" gen ring --gpus 8 --channels 1 --protocol LL128 -o "$tmp/r128.xml" || exit 99
"$collsim" gen ring --gpus 8 --channels 1 --protocol LL -o "$tmp/rll.xml" || exit 99
run 0 --platform "$src/platforms/a100-hier-4x2.xml" "$tmp/r128.xml"
has "$tmp/err" "$tmp/r128.xml: warning: LL128 over a path that is not NVLink: connection gpu 3 -> gpu 4 channel 0 crosses gpu3_pcie"
has "$tmp/err" "(pcie), like 1 more of the 8 connections; NCCL enables LL128 only where every path within a node is NVLink"
has "$tmp/out" "r128.xml: ok: allreduce on 8 gpus"
for args in "$tmp/r128.xml" "-q --platform $src/platforms/a100-hier-4x2.xml $tmp/r128.xml" \
    "--platform $src/platforms/a100-hier-4x2.xml $tmp/rll.xml" \
    "--platform $src/platforms/dgx-a100.xml $tmp/r128.xml"; do
    # shellcheck disable=SC2086
    run 0 $args
    [ -s "$tmp/err" ] && fail "verify $args: $(cat "$tmp/err")"
done
"$collsim" gen ring --gpus 16 --channels 1 --protocol LL128 -o "$tmp/r16.xml" || exit 99
run 0 --platform "$src/platforms/dgx-a100-2node.xml" "$tmp/r16.xml"
[ -s "$tmp/err" ] && fail "LL128 across nodes flagged: $(cat "$tmp/err")"
run 2 --platform "$src/platforms/a100-hier-2x2.xml" "$tmp/r128.xml"
has "$tmp/err" "r128.xml: the schedule needs 8 GPUs but $src/platforms/a100-hier-2x2.xml has 4"

# Unknown attributes (nthreads, which the legacy runtime reads on <algo>) are warnings at their
# line, and the schedule stays correct; -q hides them.
sed '1s/<algo /<algo nthreads="512" /; 3s/<tb /<tb nthreads="256" /' "$fixed" >"$tmp/nthreads.xml"
run 0 "$tmp/nthreads.xml"
has "$tmp/err" "$tmp/nthreads.xml:1: warning: <algo>: unknown attribute 'nthreads'"
has "$tmp/err" "$tmp/nthreads.xml:3: warning: <tb>: unknown attribute 'nthreads'"
has "$tmp/out" "nthreads.xml: ok: allreduce on 4 gpus"
run 0 -q "$tmp/nthreads.xml"
[ -s "$tmp/err" ] && fail "-q still prints reader warnings"

# The communicator's channels: nchannels above --channels is an error of the executor's report,
# at them none; --channels takes 1..32; a 48-channel file is over MAXCHANNELS (32).
"$collsim" gen ring --gpus 4 --channels 4 --protocol LL -o "$tmp/r4e.xml" || exit 99
run 0 --runtime executor "$tmp/r4e.xml"
run 0 --runtime executor --channels 4 "$tmp/r4e.xml"
run 2 --runtime executor --channels 2 "$tmp/r4e.xml"
has "$tmp/err" "$tmp/r4e.xml:1: <algo>: nchannels=\"4\" but the communicator has 2 channels"
has "$tmp/out" "r4e.xml: invalid: 1 structural error"
run 2 --channels 33 "$tmp/r4e.xml"
has "$tmp/err" "--channels: '33' is out of range"
run 2 --runtime executor "$src/tests/data/bad/nchannels_over_maxchannels.xml"
has "$tmp/err" "nchannels_over_maxchannels.xml:1: <algo>: nchannels=\"48\" is outside 1..32"
"$collsim" help verify >"$tmp/help" 2>&1
grep -q "Not checked: nchannels" "$tmp/help" && fail "usage still says nchannels is not checked"

# LL128 off NVLink in the executor's report (gen writes the executor's attributes): an error (wrong data, exit 1) before the verdict;
# without a platform a note says the routes were not checked.
cp "$tmp/r128.xml" "$tmp/r128e.xml"
run 1 --runtime executor --platform "$src/platforms/a100-hier-4x2.xml" "$tmp/r128e.xml"
has "$tmp/err" "$tmp/r128e.xml: LL128 over a path that is not NVLink: connection gpu 3 -> gpu 4"
has "$tmp/out" "r128e.xml: wrong: 1 data error (1 other, see the messages)"
run 0 --runtime executor "$tmp/r128e.xml"
has "$tmp/err" "$tmp/r128e.xml: note: LL128 routes not checked: --platform FILE"
run 0 --runtime executor --platform "$src/platforms/dgx-a100.xml" "$tmp/r128e.xml"

# A race: a copy out of scratch that does not wait for the copy into it. The report names the
# write (at its line), the read and the dependency that orders them; the verdict says what kinds
# of data errors there are.
cat >"$tmp/race.xml" <<'EOF'
<algo name="t" proto="LL" nchannels="1" nchunksperloop="2" ngpus="2" coll="alltoall" inplace="0">
<gpu id="0" i_chunks="2" o_chunks="2" s_chunks="1">
<tb id="0" send="1" recv="1" chan="0">
<step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
<step s="1" type="r" srcbuf="i" srcoff="0" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
</tb><tb id="1" send="-1" recv="-1" chan="0">
<step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="s" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
</tb><tb id="2" send="-1" recv="-1" chan="0">
<step s="0" type="cpy" srcbuf="s" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
</tb></gpu>
<gpu id="1" i_chunks="2" o_chunks="2" s_chunks="0">
<tb id="0" send="0" recv="0" chan="0">
<step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
<step s="1" type="r" srcbuf="i" srcoff="1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
</tb><tb id="1" send="-1" recv="-1" chan="0">
<step s="0" type="cpy" srcbuf="i" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
</tb></gpu>
</algo>
EOF
run 1 "$tmp/race.xml"
has "$tmp/err" "$tmp/race.xml:7: race on rank 0 scratch chunk 0: rank 0 tb 1 step 0 (cpy, line 7) writes it and rank 0 tb 2 step 0 (cpy, line 9) reads it"
has "$tmp/err" "missing dependency: rank 0 tb 2 step 0 must wait for the write: depid=\"1\" deps=\"0\" on it"
has "$tmp/out" "race.xml: wrong: 2 data errors (1 race between unordered steps, 1 output chunk that depends on the order of execution)"
sed '7s/hasdep="0"/hasdep="1"/; 9s/depid="-1" deps="-1"/depid="1" deps="0"/' "$tmp/race.xml" >"$tmp/norace.xml"
run 0 "$tmp/norace.xml"

# info and fmt read any file the reader parses, valid or not: a 48-channel schedule is summarised
# with verify's verdict and problems (exit 2), and printed back unchanged; info's exit status is
# verify's; unreadable files stay unreadable.
b48=$src/tests/data/bad/nchannels_over_maxchannels.xml
"$collsim" info "$b48" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] || fail "info on a 48-channel file: exit $rc, expected 2"
has "$tmp/out" "channels:        48"
has "$tmp/out" "verdict:         invalid: 2 structural errors"
has "$tmp/err" "$b48:1: <algo>: nchannels=\"48\" is outside 1..32"
"$collsim" fmt "$b48" >"$tmp/out" 2>"$tmp/err" && cmp -s "$tmp/out" "$b48" ||
    fail "fmt does not print a 48-channel file back"
"$collsim" info "$seed" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] || fail "info on the seed: exit $rc, expected 1"
has "$tmp/out" "verdict:         wrong: 64 data errors (64 wrong output chunks); the first on stderr"
"$collsim" info "$fixed" >"$tmp/out" 2>"$tmp/err" || fail "info on the fixed schedule"
has "$tmp/out" "verdict:         ok (collsim verify)"
"$collsim" info "$tmp/nthreads.xml" >"$tmp/out" 2>"$tmp/err" || fail "info with nthreads"
has "$tmp/err" "$tmp/nthreads.xml:3: warning: <tb>: unknown attribute 'nthreads'"
"$collsim" fmt "$tmp/nthreads.xml" >"$tmp/out" 2>"$tmp/err" && cmp -s "$tmp/out" "$fixed" ||
    fail "fmt does not drop nthreads"
has "$tmp/err" "$tmp/nthreads.xml:1: warning: <algo>: unknown attribute 'nthreads'"
# predict says so too, and predicts
"$collsim" predict "$tmp/nthreads.xml" --platform "$src/platforms/a100-pcie-4gpu.xml" -b 1M -e 1M \
    >"$tmp/out" 2>"$tmp/err" || fail "predict with nthreads"
has "$tmp/err" "$tmp/nthreads.xml:3: warning: <tb>: unknown attribute 'nthreads'"
"$collsim" info "$src/tests/data/bad/truncated.xml" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] && [ ! -s "$tmp/out" ] || fail "info on a truncated file: exit $rc"
has "$tmp/err" "truncated.xml:5: malformed XML"

echo "verify_cli.sh: $fails failures"
[ "$fails" -eq 0 ]
