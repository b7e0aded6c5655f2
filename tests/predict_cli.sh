#!/bin/sh
# predict_cli.sh: `collsim predict` refuses link parameters in --set (they live in the platform's
# <link>s) and schedules that verify finds structurally invalid, prints each row as it comes,
# reports a size the executor cannot run as unsupported, and a killed predict takes its
# simulating child with it. Sizes align down as nccl-tests aligns them, then to the schedule's
# granularity; --compare adds a log's measured times.
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
cs="$builddir/collsim"
plat="$srcdir/platforms/a100-hier-4x2.xml"
. "$srcdir/tests/lib.sh"

"$cs" predict --gen ring:gpus=8 -p "$plat" -b 1M -e 1M --set cs.link_Bps.nvlink=1e9 \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q "collsim platform FAMILY --set cs.link_Bps.nvlink" "$tmp/err"; then
    fail "--set cs.link_Bps.nvlink: exit $rc, want 2 naming collsim platform --set"
    cat "$tmp/err"
fi

# predict runs verify's structural checks first: every file of the bad-input catalogue exits 2
# with its FILE:LINE: message, except the static deadlocks, which predict as deadlocked (exit 1).
tail -n +4 "$srcdir/tests/data/bad/EXPECTED" | while IFS='	' read -r f line msg; do
    "$cs" predict "$srcdir/tests/data/bad/$f" -p "$plat" -b 1K -e 1K >"$tmp/out" 2>"$tmp/err"
    rc=$?
    case $msg in
    deadlock | "never signals" | *"FIFO slots"*)
        [ "$rc" -eq 1 ] && grep -q deadlock "$tmp/out" && continue ;;
    *)
        [ "$rc" -eq 2 ] && grep -qF -- "$f:$line: " "$tmp/err" && grep -qF -- "$msg" "$tmp/err" &&
            continue ;;
    esac
    echo "FAIL: predict $f: exit $rc, want the catalogue's '$f:$line: ... $msg'" >&2
    cat "$tmp/out" "$tmp/err"
    echo x >>"$tmp/failed"
done
[ -f "$tmp/failed" ] && fails=$((fails + $(wc -l <"$tmp/failed")))

# nccl-tests' shape: a pasted nccl-tests command line runs (its simulation-free options accepted),
# busbw is field 8 of each row and equals the CSV's, the footer averages it, -d all predicts
# every type, and bad values of the accepted options still exit 2.
"$cs" predict --gen ring:gpus=8,channels=1 -p "$plat" -b 8 -e 128M -f 2 -g 1 -t 1 -n 20 -w 5 \
    -c 1 -o sum -d float -a 3 -m 1 -G 0 -z 0 >"$tmp/nt" 2>"$tmp/err" ||
    fail "a pasted nccl-tests command line: $(cat "$tmp/err")"
"$cs" predict --gen ring:gpus=8,channels=1 -p "$plat" -b 8 -e 128M -f 2 --format csv >"$tmp/ntc"
awk '!/^#/ { print $1, $8 }' "$tmp/nt" >"$tmp/a"
awk -F, 'NR > 1 { printf "%s %.2f\n", $1, $6 }' "$tmp/ntc" >"$tmp/b"
[ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b" ||
    { fail "field 8 of the table is not the CSV's busbw"; diff "$tmp/a" "$tmp/b"; }
avg=$(awk -F, 'NR > 1 { s += $6; n++ } END { printf "%.4f", s / n }' "$tmp/ntc")
got=$(sed -n 's/^# Avg bus bandwidth *: \([0-9.]*\).*/\1/p' "$tmp/nt")
awk -v a="$avg" -v g="$got" 'BEGIN { d = a - g; exit !(g != "" && d < 0.001 && d > -0.001) }' ||
    fail "footer $got, average busbw $avg"
n=$("$cs" predict --gen ring:gpus=8 -p "$plat" -b 1K -e 2K -d all --format csv | sed 1d | wc -l)
[ "$n" -eq 24 ] || fail "-d all gave $n rows, want 12 types x 2 sizes"
"$cs" --version | grep -q "^SimGrid 3\.[0-9]*\.[0-9]*, libxml2 2\." ||
    fail "--version names no SimGrid and libxml2 versions"
# -g G: one thread launches G GPUs in turn; an 8-GPU ring waits for the last, 7 launches later
# (on one NVSwitch node, where a process per GPU ends together: no back-to-back gain).
dgx="$srcdir/platforms/dgx-a100.xml"
t1=$("$cs" predict --gen ring:gpus=8,channels=1 -p "$dgx" -b 1K -e 1K --format csv | awk -F, 'NR == 2 { print $4 }')
t8=$("$cs" predict --gen ring:gpus=8,channels=1 -p "$dgx" -b 1K -e 1K -g 8 --format csv | awk -F, 'NR == 2 { print $4 }')
tset=$("$cs" predict --gen ring:gpus=8,channels=1 -p "$dgx" -b 1K -e 1K --format csv \
    --set cs.gpus_per_process=8 | awk -F, 'NR == 2 { print $4 }')
lg=$(sed -n 's/.*<prop id="cs.launch_gpu_s" value="\([^"]*\)".*/\1/p' "$dgx")
awk -v a="$t1" -v b="$t8" -v c="$tset" -v l="$lg" 'BEGIN { d = b - a - 7 * l * 1e6;
    exit !(a > 0 && l > 0 && b == c && d > -0.01 && d < 0.01) }' ||
    fail "-g 8: $t1 -> $t8 us (--set: $tset), want + 7 x $lg s"
for bad in "-o xor" "-n many" "-i 1M" "-d int7" "-g 0"; do
    # shellcheck disable=SC2086
    "$cs" predict --gen ring:gpus=8 -p "$plat" $bad >/dev/null 2>&1
    [ $? -eq 2 ] || fail "predict $bad does not exit 2"
done

# Rows stream: with 1 KiB and then a replay of about 15 s (a 64-GPU LL ring at 1 GiB, in full),
# the 1 KiB row is on stdout while the 1 GiB replay runs. Then kill predict itself, never its
# child; the child (the simulation) must be gone within 2 s, long before it would have finished.
"$cs" predict --gen ring:gpus=64,protocol=LL -p "$srcdir/platforms/a100-hier-32x2.xml" --no-extrapolate \
    -b 1K -e 1G -f 1024 --format csv >"$tmp/rows" 2>/dev/null &
pid=$!
for _ in $(seq 600); do
    grep -q '^1024,' "$tmp/rows" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
if ! grep -q '^1024,' "$tmp/rows" || ! kill -0 "$pid" 2>/dev/null; then
    fail "the 1 KiB row did not appear while the 1 GiB replay ran"
    cat "$tmp/rows"
fi
child=""
for _ in $(seq 100); do
    child=$(pgrep -P "$pid" | head -n 1)
    [ -n "$child" ] && break
    sleep 0.1
done
if [ -z "$child" ]; then
    fail "predict started no simulating child"
else
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    for _ in $(seq 20); do
        kill -0 "$child" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$child" 2>/dev/null; then
        fail "the simulating child $child outlived its killed predict"
        kill -9 "$child"
    fi
fi

# A size the executor cannot run (65,536 loop iterations of an LL ring) is an unsupported row,
# the other rows stay, and predict exits 2 with the reason.
"$cs" predict --gen ring:gpus=8,channels=1,protocol=LL -p "$plat" -b 8G -e 16G --format csv \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q '^8589934592,.*,ok,8589934592$' "$tmp/out" ||
    ! grep -q '^17179869184,.*,unsupported,17179869184$' "$tmp/out" ||
    ! grep -q '17179869184 bytes: unsupported: .*65536 loop iterations' "$tmp/err"; then
    fail "an unsupported size: exit $rc"
    cat "$tmp/out" "$tmp/err"
fi

# Sizes align down: a 3-channel 8-GPU ring has nchunksperloop 24, so floats come in 96 bytes;
# 1024 runs as 960 (nominal 1024), 64 aligns to 0 and is skipped, with a note under the table.
dgx="$srcdir/platforms/dgx-a100.xml"
"$cs" predict --gen ring:gpus=8,channels=3,protocol=LL -p "$dgx" -b 64 -e 1K -f 16 --format csv \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ] || [ "$(wc -l <"$tmp/out")" -ne 2 ] || ! grep -q '^960,240,float,.*,ok,1024$' "$tmp/out" ||
    ! grep -q '^# collsim .* (git .*), SimGrid .*, libxml2 .*, platform FNV-1a 64 [0-9a-f]\{16\}$' "$tmp/err"; then
    fail "aligned CSV sizes: exit $rc"
    cat "$tmp/out" "$tmp/err"
fi
"$cs" predict --gen ring:gpus=8,channels=3,protocol=LL -p "$dgx" -b 64 -e 1K -f 16 >"$tmp/out" 2>&1
if ! grep -q '^ *960 .* ok$' "$tmp/out" ||
    ! grep -q '^# sizes .*down to a multiple of 96 bytes.*nchunksperloop (24).*1 size below that skipped$' "$tmp/out"; then
    fail "the table's alignment note"
    cat "$tmp/out"
fi
"$cs" predict --gen ring:gpus=8,channels=3,protocol=LL -p "$dgx" -b 8 -e 64 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q 'every size from -b 8 to -e 64 aligns down to 0: .*96 bytes' "$tmp/err"; then
    fail "sizes that all align to 0: exit $rc"
    cat "$tmp/out" "$tmp/err"
fi

# --compare: measured times by size (out of place), errors, a size the log lacks left empty,
# the summary; JSON carries the metadata and the compare object.
log="$srcdir/tests/data/validation/oci-bmgpu48-a100sxm40-1node-8gpu.csv"
"$cs" predict --gen ring:gpus=8,channels=1,protocol=Simple -p "$dgx" -b 64M -e 192M -f 3 \
    --compare "$log" --format csv >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ] || ! head -1 "$tmp/out" | grep -q ',status,nominal_bytes,measured_us,error_pct$' ||
    ! grep -q '^67108864,.*,ok,67108864,589.500000,-\{0,1\}[0-9.]*$' "$tmp/out" ||
    ! grep -q '^201326592,.*,ok,201326592,,$' "$tmp/out" ||
    ! grep -q '^# compared with .*oci-bmgpu48.*: 1 of 2 sizes measured, |error| median' "$tmp/err"; then
    fail "--compare CSV: exit $rc"
    cat "$tmp/out" "$tmp/err"
fi
"$cs" predict --gen ring:gpus=8,channels=1,protocol=Simple -p "$dgx" -b 64M -e 64M \
    --compare "$log" --format json >"$tmp/out" 2>"$tmp/err"
if ! grep -q '"metadata": {"collsim": ".*", "git": ".*", "simgrid": ".*", "libxml2": ".*", "platform_fnv1a64": "[0-9a-f]\{16\}"}' "$tmp/out" ||
    ! grep -q '"measured_us": 589.500000, "error_pct": .*, "measured_in_place_us": ' "$tmp/out" ||
    ! grep -q '^"compare": {"log": ".*", "sizes": 1, "measured": 1, ' "$tmp/out"; then
    fail "--compare JSON"
    cat "$tmp/out" "$tmp/err"
fi
# raw nccl-tests output of the same table: the same measured times and errors
sh "$srcdir/tests/data/nccl-tests/to-nccl-tests.sh" "$log" >"$tmp/raw.txt"
for l in "$log" "$tmp/raw.txt"; do
    "$cs" predict --gen ring:gpus=8,channels=1,protocol=Simple -p "$dgx" -b 1M -e 4M -f 4 \
        --compare "$l" --format csv 2>/dev/null | cut -d, -f1,9,10 >"$tmp/cmp.$(basename "$l")"
done
if ! grep -q '^1048576,76.710000,' "$tmp/cmp.raw.txt" ||
    ! cmp -s "$tmp/cmp.raw.txt" "$tmp/cmp.$(basename "$log")"; then
    fail "--compare with raw nccl-tests output"
    cat "$tmp/cmp.raw.txt" "$tmp/cmp.$(basename "$log")"
fi
# a log with a bad row: exit 2 naming FILE:LINE; a log that is not there: exit 2
printf 'size_bytes,time_us\n1024,10\n2048,x\n' >"$tmp/bad.csv"
"$cs" predict --gen ring:gpus=8,channels=1,protocol=Simple -p "$dgx" -b 1K -e 1K \
    --compare "$tmp/bad.csv" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q "bad.csv:3: " "$tmp/err" || [ -s "$tmp/out" ]; then
    fail "--compare with a bad log: exit $rc"
    cat "$tmp/out" "$tmp/err"
fi
"$cs" predict --gen ring:gpus=8,channels=1,protocol=Simple -p "$dgx" -b 1K -e 1K \
    --compare "$tmp/none.csv" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "none.csv" "$tmp/err" || fail "--compare with no log"

[ "$fails" -eq 0 ] && echo "predict_cli: ok"
[ "$fails" -eq 0 ]
