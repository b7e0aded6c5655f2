#!/bin/sh
# tune.sh: `collsim tune` picks the known fastest variant per size range of a constructed sweep
# and writes executor-selectable schedules (minBytes/maxBytes windows, protocol of the variant),
# kept below the FIFO credit limit, compared at nominal sizes, and for the legacy runtime (those
# with --no-nccl: the constructed times are not a machine's); against NCCL's own choice on the
# sweep's platform, a window only where a variant beats it by the margin.
set -u
src=${CS_SRCDIR:?}
cs=${CS_BUILDDIR:?}/collsim
. "$src/tests/lib.sh"

"$cs" tune --no-nccl "$src/tests/data/tune/sweep.csv" --schedule-dir "$src/tests/data/msccl-xml" \
    -o "$tmp/plan" >"$tmp/out" || fail "tune exited $?"
cat "$tmp/out"
# the table: three windows, each with its winner
grep -Eq '^ +1024 +16383 +1024\.\.4096 +allreduce_a100_ncv4\.4gpu\.1inst\.LL LL ' "$tmp/out" || fail "range 1"
grep -Eq '^ +16384 +262143 .*hierarchical_fixed\.4gpu\.1inst\.LL LL128 ' "$tmp/out" || fail "range 2"
grep -Eq '^ +262144 +1048576 .*hierarchical_fixed\.4gpu\.1inst\.LL Simple ' "$tmp/out" || fail "range 3"
[ "$(grep -Ec '^ +[0-9]' "$tmp/out")" -eq 3 ] || fail "not three ranges"
cmp -s "$tmp/out" "$tmp/plan.plan.txt" || fail "plan.plan.txt differs from the printed plan"
grep -q "^# deploy: MSCCL_ALGO_DIR=$tmp/plan for the MSCCL executor" "$tmp/out" || fail "no deploy line"
# the schedules: windows and protocols set, still valid schedules, and nothing else in the folder
# (the executor reads every file of MSCCL_ALGO_DIR), each one the executor loads
set -- "$tmp"/plan/*.xml
[ $# -eq 3 ] || fail "$# schedules, want 3"
[ "$(ls -A "$tmp/plan" | wc -l)" -eq 3 ] || fail "the plan folder holds more than its schedules"
"$cs" verify --runtime executor -q "$@" >/dev/null || fail "a planned schedule fails verify --runtime executor"
head -1 "$1" | grep -q 'proto="LL" .*outofplace="0" minBytes="1024" maxBytes="16383"' || fail "$1 head"
head -1 "$2" | grep -q 'proto="LL128" .*minBytes="16384" maxBytes="262143"' || fail "$2 head"
head -1 "$3" | grep -q 'proto="Simple" .*minBytes="262144" maxBytes="1048576"' || fail "$3 head"
for f in "$@"; do "$cs" info "$f" >/dev/null || fail "$f does not read back"; done

# --extend opens the outer windows
"$cs" tune --no-nccl "$src/tests/data/tune/sweep.csv" --schedule-dir "$src/tests/data/msccl-xml" --extend \
    -o "$tmp/ext" >/dev/null || fail "tune --extend"
head -1 "$tmp"/ext/00-*.xml | grep -q 'minBytes="0" maxBytes="16383"' || fail "extend first"
# the last variant, hierarchical Simple, sends cnt=8 of 16 chunks per loop: 2 calls of 4 slots
# fill a connection up to 16 x 2 MiB / 4 = 8 MiB, and the mirrored send/receive order deadlocks
# above (predict: ok at 8388608 B, deadlock at 8388672 B, the next size it takes)
head -1 "$tmp"/ext/02-*.xml | grep -q 'minBytes="262144" maxBytes="8388608"' || fail "extend last: $(head -1 "$tmp"/ext/02-*.xml)"
grep -q '^#   window 2 stops below 8388609 bytes: from there the FIFO credits deadlock (gpu 0 tb 6 step 0, cnt=8' \
    "$tmp/ext.plan.txt" || fail "credit note: $(cat "$tmp/ext.plan.txt")"
# a prediction that finished above the limit is left out: the closed form rules
awk -F, 'BEGIN { OFS = "," } NR > 1 && $2 ~ /fixed/ && $3 == "Simple" && $5 == 1048576 { print; $1 = 9; $5 = 16777216 } { print }' \
    "$src/tests/data/tune/sweep.csv" | awk '!seen[$0]++' >"$tmp/big.csv"
"$cs" tune --no-nccl "$tmp/big.csv" --schedule-dir "$src/tests/data/msccl-xml" >"$tmp/bout" || fail "tune big"
grep -Eq '^ +262144 +1048576 +262144\.\.1048576 ' "$tmp/bout" || fail "capped: $(cat "$tmp/bout")"
grep -q '^# allreduce_a100_pcie_hierarchical_fixed.4gpu.1inst.LL Simple: 1 prediction at or above 8388609 bytes left out: the FIFO credits deadlock' \
    "$tmp/bout" || fail "capped note: $(cat "$tmp/bout")"
# ... but not across a size where every variant deadlocked: there it stops one byte short
awk -F, 'BEGIN { OFS = "," } NR > 1 && $5 == 1048576 { $8 = ""; $9 = ""; $10 = ""; $11 = "deadlock" } { print }' \
    "$src/tests/data/tune/sweep.csv" >"$tmp/dead.csv"
printf '0,allreduce_a100_ncv4.4gpu.1inst.LL.xml,LL,dgx-a100,512,128,float,,,,deadlock\n' >>"$tmp/dead.csv"
"$cs" tune --no-nccl "$tmp/dead.csv" --schedule-dir "$src/tests/data/msccl-xml" --extend -o "$tmp/dext" \
    >"$tmp/dout" || fail "tune --extend with deadlocks: $(cat "$tmp/dout")"
head -1 "$tmp"/dext/00-*.xml | grep -q 'minBytes="513" maxBytes="16383"' || fail "extend first past a deadlock"
last=$(ls "$tmp"/dext/*.xml | tail -n 1)
head -1 "$last" | grep -q 'maxBytes="1048575"' || fail "extend last across a deadlock: $(head -1 "$last")"
# --plan puts the plan elsewhere; a schedule the executor refuses (coll="custom") is not written
"$cs" tune --no-nccl "$src/tests/data/tune/sweep.csv" --schedule-dir "$src/tests/data/msccl-xml" \
    -o "$tmp/p2" --plan "$tmp/my-plan.txt" >/dev/null && [ -s "$tmp/my-plan.txt" ] || fail "--plan"
[ ! -e "$tmp/p2.plan.txt" ] || fail "--plan also wrote DIR.plan.txt"
# the committed plan of results/sweeps/ndv4-plan.csv is what tune writes today
mkdir "$tmp/rs"
ln -s "$src/results/sweeps/ndv4-plan.csv" "$tmp/rs/ndv4-plan.csv"
(cd "$tmp/rs" && "$cs" tune ndv4-plan.csv -o ndv4-plan/ >/dev/null) || fail "tune ndv4-plan.csv"
cmp -s "$tmp/rs/ndv4-plan.plan.txt" "$src/results/sweeps/ndv4-plan.txt" ||
    fail "results/sweeps/ndv4-plan.txt is stale: $(diff "$tmp/rs/ndv4-plan.plan.txt" "$src/results/sweeps/ndv4-plan.txt")"
printf 'point,schedule,protocol,platform.family,size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status\n0,simple_custom_collective.prog1.xml,Simple,a100-pcie-4gpu,4096,1024,float,5.0,0.8,0.8,ok\n' >"$tmp/custom.csv"
"$cs" tune --no-nccl "$tmp/custom.csv" --schedule-dir "$src/tests/data/msccl-xml" -o "$tmp/cust" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'would not load it.*coll="custom"' "$tmp/err" || fail "custom planned: $(cat "$tmp/err")"
[ -z "$(ls -A "$tmp/cust" 2>/dev/null)" ] || fail "a refused schedule was written"

# LL128 where NCCL refuses it: on four PCIe cards the LL128 variant competes on no size, and the
# plan says why (the same predictions on NVSwitch above made it win range 2)
sed 's/dgx-a100/a100-pcie-4gpu/' "$src/tests/data/tune/sweep.csv" >"$tmp/pcie.csv"
"$cs" tune --no-nccl "$tmp/pcie.csv" --schedule-dir "$src/tests/data/msccl-xml" >"$tmp/pout" ||
    fail "tune on PCIe: $(cat "$tmp/pout")"
! grep -Eq '^ +[0-9].* LL128 ' "$tmp/pout" || fail "LL128 planned over PCIe: $(cat "$tmp/pout")"
grep -q '^# allreduce_a100_pcie_hierarchical_fixed.4gpu.1inst.LL LL128 left out: LL128 where NCCL refuses it (LL128 over a path that is not NVLink: connection gpu 0 -> gpu 1' \
    "$tmp/pout" || fail "LL128 note: $(cat "$tmp/pout")"

# two platforms in one CSV: refused until --where picks one
sed 's/dgx-a100,1048576/a100-hier,1048576/' "$src/tests/data/tune/sweep.csv" >"$tmp/two.csv"
"$cs" tune --no-nccl "$tmp/two.csv" --schedule-dir "$src/tests/data/msccl-xml" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "two platforms accepted"
grep -q "more than one platform.*--where platform.family" "$tmp/err" || fail "message: $(cat "$tmp/err")"
"$cs" tune --no-nccl "$tmp/two.csv" --schedule-dir "$src/tests/data/msccl-xml" \
    --where platform.family=dgx-a100 >"$tmp/w" || fail "--where"
grep -Eq '^ +262144 +262144 .*Simple' "$tmp/w" || fail "--where plan: $(cat "$tmp/w")"
"$cs" tune --no-nccl "$tmp/two.csv" --where nosuch=1 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--where on an unknown column accepted"
# not a sweep CSV
printf 'a,b\n1,2\n' >"$tmp/bad.csv"
"$cs" tune --no-nccl "$tmp/bad.csv" >/dev/null 2>&1
[ $? -eq 2 ] || fail "a non-sweep CSV accepted"
# schedules not found: without -o a warning, and the plan says the credits went unchecked
"$cs" tune --no-nccl "$src/tests/data/tune/sweep.csv" >"$tmp/nf" 2>"$tmp/err" || fail "tune without schedules"
grep -q 'warning: .*not found.*FIFO credit limit is not checked' "$tmp/err" || fail "no warning: $(cat "$tmp/err")"
grep -q '^# window 0: the FIFO credits of .* are not checked' "$tmp/nf" || fail "no unchecked note"

# nominal sizes: two variants whose chunk multiples round 1000..30000 B apart compete at the size
# asked for (2 windows); without the column each rounded size is its own (8 windows, a warning)
nom=$src/tests/data/tune/nominal.csv
"$cs" tune --no-nccl "$nom" --schedule-dir "$src/tests/data/msccl-xml" >"$tmp/nom" 2>"$tmp/err" || fail "nominal"
[ ! -s "$tmp/err" ] || fail "nominal warned: $(cat "$tmp/err")"
grep -Eq '^ +1000 +9999 +1000\.\.3000 +allreduce_a100_ncv4' "$tmp/nom" || fail "nominal 1: $(cat "$tmp/nom")"
grep -Eq '^ +10000 +30000 +10000\.\.30000 +allreduce_a100_pcie_hierarchical_fixed' "$tmp/nom" || fail "nominal 2"
[ "$(grep -Ec '^ +[0-9]' "$tmp/nom")" -eq 2 ] || fail "nominal: not two windows"
cut -d, -f6 --complement "$nom" >"$tmp/nonom.csv"
"$cs" tune --no-nccl "$tmp/nonom.csv" --schedule-dir "$src/tests/data/msccl-xml" >"$tmp/nonom" 2>"$tmp/err" || fail "no nominal"
[ "$(grep -Ec '^ +[0-9]' "$tmp/nonom")" -eq 8 ] || fail "without nominal_bytes: $(cat "$tmp/nonom")"
grep -q 'warning: .*8 predictions are at sizes not every variant' "$tmp/err" || fail "uneven warning: $(cat "$tmp/err")"
printf 'point,schedule,size_bytes,nominal_bytes,time_us,status\n0,a.xml,1024,x,5,ok\n' >"$tmp/badnom.csv"
"$cs" tune --no-nccl "$tmp/badnom.csv" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "badnom.csv:2: bad nominal_bytes 'x'" "$tmp/err" || fail "bad nominal: $(cat "$tmp/err")"

# the legacy runtime: half-open windows, a name, listed in MSCCL_XML_FILES, at most 4 algorithms
"$cs" tune --no-nccl "$src/tests/data/tune/sweep.csv" --schedule-dir "$src/tests/data/msccl-xml" --extend \
    --runtime legacy -o "$tmp/leg" >"$tmp/lout" || fail "legacy: $(cat "$tmp/lout")"
set -- "$tmp"/leg/*.xml
[ $# -eq 3 ] || fail "legacy: $# schedules"
"$cs" verify --runtime legacy -q "$@" >/dev/null || fail "a legacy schedule fails verify --runtime legacy"
head -1 "$1" | grep -q '^<algo name="[^"]*" .*minBytes="0" maxBytes="16384"' || fail "legacy $1: $(head -1 "$1")"
head -1 "$2" | grep -q 'minBytes="16384" maxBytes="262144"' || fail "legacy $2"
head -1 "$3" | grep -q 'minBytes="262144" maxBytes="8388609"' || fail "legacy $3"
grep -q "^# MSCCL_XML_FILES=$1:$2:$3\$" "$tmp/lout" || fail "legacy deploy: $(cat "$tmp/lout")"
grep -q 'NCCL_ALGO must name MSCCL' "$tmp/leg.plan.txt" || fail "legacy plan"
grep -q 'minBytes <= nBytes < maxBytes' "$tmp/lout" || fail "legacy header"
"$cs" tune --no-nccl "$tmp/nonom.csv" --schedule-dir "$src/tests/data/msccl-xml" --runtime legacy \
    -o "$tmp/leg8" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q '8 windows, but the legacy runtime loads at most 4 algorithms' "$tmp/err" ||
    fail "legacy with 8 windows: $(cat "$tmp/err")"
[ ! -e "$tmp/leg8" ] || fail "legacy with 8 windows wrote a folder"
"$cs" tune --no-nccl "$nom" --runtime nosuch >/dev/null 2>&1
[ $? -eq 2 ] || fail "--runtime nosuch accepted"

# out-of-place: an in-place schedule that reads only its input and writes only its output serves
# out-of-place calls too (outofplace="1"); the msccl-tools ones, which reduce into the input, not
printf 'point,schedule,size_bytes,time_us,status\n0,allreduce_2gpu_io.xml,1024,5,ok\n' >"$tmp/io.csv"
"$cs" tune --no-nccl "$tmp/io.csv" --schedule-dir "$src/tests/data/tune" -o "$tmp/io" >"$tmp/ioout" || fail "io"
grep -q '00-allreduce_2gpu_io.xml (+out-of-place)' "$tmp/ioout" || fail "io plan: $(cat "$tmp/ioout")"
head -1 "$tmp"/io/00-*.xml | grep -q 'inplace="1" outofplace="1"' || fail "io outofplace"
"$cs" verify --runtime executor -q "$tmp"/io/00-*.xml >/dev/null || fail "io verify"
head -1 "$tmp"/plan/00-*.xml | grep -q 'inplace="1" outofplace="0"' || fail "ncv4 made out-of-place"
# -o DIR is tune's own: a second plan into it replaces the first whole (a schedule the new plan
# does not write is gone), a folder holding a file no plan wrote is refused, so is a --plan that
# is the sweep CSV itself.
"$cs" tune --no-nccl "$src/tests/data/tune/sweep.csv" --schedule-dir "$src/tests/data/msccl-xml" \
    -o "$tmp/own" >/dev/null || fail "tune -o own"
[ "$(ls "$tmp/own" | wc -l)" -eq 3 ] || fail "first plan: $(ls "$tmp/own")"
"$cs" tune --no-nccl "$src/tests/data/tune/sweep.csv" --schedule-dir "$src/tests/data/msccl-xml" \
    --where protocol=LL -o "$tmp/own" >/dev/null || fail "tune -o own, again"
[ "$(ls "$tmp/own")" = 00-allreduce_a100_ncv4.4gpu.1inst.LL-LL.xml ] ||
    fail "the second plan left the first's schedules: $(ls "$tmp/own")"
touch "$tmp/own/mine.xml"
"$cs" tune --no-nccl "$src/tests/data/tune/sweep.csv" --schedule-dir "$src/tests/data/msccl-xml" \
    -o "$tmp/own" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "holds mine.xml, which no earlier plan of this folder wrote" "$tmp/err" &&
    [ -f "$tmp/own/mine.xml" ] && [ "$(ls "$tmp/own" | wc -l)" -eq 2 ] ||
    fail "a folder with a file tune did not write: $(cat "$tmp/err")"
cp "$src/tests/data/tune/sweep.csv" "$tmp/sw.csv"
"$cs" tune --no-nccl "$tmp/sw.csv" --schedule-dir "$src/tests/data/msccl-xml" -o "$tmp/own2" \
    --plan "$tmp/sw.csv" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && cmp -s "$tmp/sw.csv" "$src/tests/data/tune/sweep.csv" ||
    fail "--plan equal to the sweep: $(cat "$tmp/err")"
# NCCL's own choice as the baseline: all-pairs LL (2 instances) on the NDv4 platform calibrated
# on the MSCCL run (results/calibration/ndv4-msccl.xml) against what NCCL runs there. A window only where the variant beats NCCL by the margin (5%) at
# each of its sizes, as predict --vs-nccl computes it; every other size left to NCCL, listed with
# both times; --no-nccl windows every size; --margin moves the line.
cat >"$tmp/ap.sweep" <<EOF
gen.algorithm = allpairs
gen.gpus = 8
gen.instances = 2
protocol = LL
platform = $src/results/calibration/ndv4-msccl.xml
sizes = 4K..16M x4
EOF
"$cs" sweep "$tmp/ap.sweep" --results "$tmp/ap.results" -o "$tmp/ap.csv" >/dev/null 2>"$tmp/err" || fail "sweep of all-pairs: $(cat "$tmp/err")"
"$cs" tune "$tmp/ap.csv" >"$tmp/apout" 2>"$tmp/err" || fail "tune against NCCL: $(cat "$tmp/err")"
"$cs" predict --gen allpairs:gpus=8,instances=2,protocol=LL -p "$src/results/calibration/ndv4-msccl.xml" \
    -b 4K -e 16M -f 4 --vs-nccl --format csv 2>/dev/null >"$tmp/vs.csv" || fail "predict --vs-nccl"
grep -q '^# vs NCCL: ' "$tmp/apout" || fail "no baseline header: $(cat "$tmp/apout")"
# sizes in a window against sizes left to NCCL, with predict's speed-up at each
awk 'NR == FNR { if ($1 ~ /^[0-9]+$/) { split($3, r, /\.\./); lo[++n] = r[1]; hi[n] = r[2] }
                 else if ($0 ~ /^#   [0-9]+ bytes: NCCL/) left[$2] = 1; next }
     FNR > 1 { nf = split($0, f, ","); s = f[1]; sp = f[nf] + 0; in_w = 0
               for (i = 1; i <= n; i++) if (s >= lo[i] && s <= hi[i]) in_w = 1
               if (in_w && sp <= 1 / 0.95) { print "window at " s " with speed-up " sp; bad = 1 }
               if (!in_w && !(s in left)) { print "size " s " neither windowed nor left"; bad = 1 }
               if ((s in left) && sp > 1 / 0.95) { print "left " s " with speed-up " sp; bad = 1 }
               nw += in_w; nl += (s in left) }
     END { if (nw == 0 || nl == 0) { print nw " windowed, " nl " left"; bad = 1 }; exit bad }' \
    "$tmp/apout" "$tmp/vs.csv" >"$tmp/why" || fail "the NCCL baseline: $(cat "$tmp/why" "$tmp/apout")"
grep -Eq '^ +[0-9]+ +[0-9]+ .*allpairs gpus=8 instances=2 LL +[0-9.]+x-[0-9.]+x ' "$tmp/apout" ||
    fail "no speed-up column: $(cat "$tmp/apout")"
# NCCL faster at every size (the 64 KiB-256 KiB all-pairs window taken out by a larger margin):
# a plan of no window, exit 0, and -o writes no schedule.
"$cs" tune --margin 90 "$tmp/ap.csv" -o "$tmp/none" >"$tmp/apnone" 2>"$tmp/err" ||
    fail "tune with NCCL faster everywhere: $(cat "$tmp/err")"
grep -q "^# no window: NCCL's own choice is faster at every size" "$tmp/apnone" &&
    [ -z "$(ls -A "$tmp/none" 2>/dev/null)" ] || fail "no window: $(cat "$tmp/apnone")"
"$cs" tune --no-nccl "$tmp/ap.csv" >"$tmp/apno" || fail "tune --no-nccl"
grep -q '^# no NCCL baseline compared (--no-nccl)' "$tmp/apno" &&
    ! grep -q 'left to NCCL' "$tmp/apno" || fail "--no-nccl: $(cat "$tmp/apno")"
"$cs" tune --no-nccl --nccl 2.12 "$tmp/ap.csv" >/dev/null 2>&1
[ $? -eq 2 ] || fail "--no-nccl with --nccl accepted"

[ "$fails" -eq 0 ] || exit 1
echo "tune: ok"
