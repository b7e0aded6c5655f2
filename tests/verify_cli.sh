#!/bin/sh
# verify_cli.sh: `collsim verify` exit codes, messages, stdin, options, several files.
set -u

src=${CS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${CS_BUILDDIR:-$(pwd)}
collsim=$build/collsim
data=$src/tests/data/msccl-xml
seed=$data/allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml
fixed=$data/allreduce_a100_pcie_hierarchical_fixed.4gpu.1inst.LL.xml
custom=$data/simple_custom_collective.prog1.xml
bad=$src/tests/data/bad/dependency_cycle.xml
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cs-verify.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0

# run WANT_RC ARGS...: run collsim verify, check the exit status; output in $tmp/out, $tmp/err
run() {
    want=$1
    shift
    "$collsim" verify "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: collsim verify $*: exit $rc, expected $want" >&2
        sed 's/^/  /' "$tmp/err" "$tmp/out" | head -20 >&2
        fails=$((fails + 1))
    fi
}

# has FILE STRING: FILE contains STRING
has() {
    if ! grep -q -F -- "$2" "$1"; then
        echo "FAIL: $(basename "$1") lacks '$2'" >&2
        sed 's/^/  /' "$1" | head -20 >&2
        fails=$((fails + 1))
    fi
}

run 1 "$seed"
has "$tmp/err" "$seed:5: rank 0 output chunk 0 is wrong: expected the sum of input chunk 0 of all 4 ranks"
has "$tmp/err" "$seed: ... and 44 more problems"
has "$tmp/out" "$seed: wrong: 64 data errors, 64 wrong output chunks"

run 0 "$fixed"
has "$tmp/out" "$fixed: ok: allreduce on 4 gpus"

run 0 - <"$fixed"
has "$tmp/out" "<stdin>: ok"

run 1 --max-errors 1 "$seed"
has "$tmp/err" "... and 63 more problems"

run 0 "$custom"
has "$tmp/err" "note: coll=\"custom\" defines no result: structural checks only"
run 0 -q "$custom"
[ -s "$tmp/err" ] && { echo "FAIL: -q still prints notes" >&2; fails=$((fails + 1)); }

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
[ -s "$tmp/err" ] && { echo "FAIL: -q after the file still prints notes" >&2; fails=$((fails + 1)); }

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
    { echo "FAIL: an undecodable file: $(cat "$tmp/err")" >&2; fails=$((fails + 1)); }

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
    [ -s "$tmp/err" ] && { echo "FAIL: verify $args: $(cat "$tmp/err")" >&2; fails=$((fails + 1)); }
done
"$collsim" gen ring --gpus 16 --channels 1 --protocol LL128 -o "$tmp/r16.xml" || exit 99
run 0 --platform "$src/platforms/dgx-a100-2node.xml" "$tmp/r16.xml"
[ -s "$tmp/err" ] && { echo "FAIL: LL128 across nodes flagged: $(cat "$tmp/err")" >&2; fails=$((fails + 1)); }
run 2 --platform "$src/platforms/a100-hier-2x2.xml" "$tmp/r128.xml"
has "$tmp/err" "r128.xml: the schedule needs 8 GPUs but $src/platforms/a100-hier-2x2.xml has 4"

echo "verify_cli.sh: $fails failures"
[ "$fails" -eq 0 ]
