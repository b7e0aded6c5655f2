#!/bin/sh
# predict_cli.sh: `collsim predict` refuses link parameters in --set (they live in the platform's
# <link>s) and schedules that verify finds structurally invalid, prints each row as it comes,
# reports a size the executor cannot run as unsupported, and a killed predict takes its
# simulating child with it.
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
cs="$builddir/collsim"
plat="$srcdir/platforms/a100-hier-4x2.xml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

"$cs" predict --gen ring:gpus=8 -p "$plat" -b 1M -e 1M --set cs.link_Bps.nvlink=1e9 \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q "collsim platform FAMILY --set cs.link_Bps.nvlink" "$tmp/err"; then
    echo "FAIL: --set cs.link_Bps.nvlink: exit $rc, want 2 naming collsim platform --set"
    cat "$tmp/err"
    fail=$((fail + 1))
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
    echo "FAIL: predict $f: exit $rc, want the catalogue's '$f:$line: ... $msg'"
    cat "$tmp/out" "$tmp/err"
    echo x >>"$tmp/failed"
done
[ -f "$tmp/failed" ] && fail=$((fail + $(wc -l <"$tmp/failed")))

# nccl-tests' shape: a pasted nccl-tests command line runs (its simulation-free options accepted),
# busbw is field 8 of each row and equals the CSV's, the footer averages it, -d all predicts
# every type, and bad values of the accepted options still exit 2.
"$cs" predict --gen ring:gpus=8,channels=1 -p "$plat" -b 8 -e 128M -f 2 -g 1 -t 1 -n 20 -w 5 \
    -c 1 -o sum -d float -a 3 -m 1 -G 0 -z 0 >"$tmp/nt" 2>"$tmp/err" ||
    { echo "FAIL: a pasted nccl-tests command line: $(cat "$tmp/err")"; fail=$((fail + 1)); }
"$cs" predict --gen ring:gpus=8,channels=1 -p "$plat" -b 8 -e 128M -f 2 --format csv >"$tmp/ntc"
awk '!/^#/ { print $1, $8 }' "$tmp/nt" >"$tmp/a"
awk -F, 'NR > 1 { printf "%s %.2f\n", $1, $6 }' "$tmp/ntc" >"$tmp/b"
[ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b" ||
    { echo "FAIL: field 8 of the table is not the CSV's busbw"; diff "$tmp/a" "$tmp/b"; fail=$((fail + 1)); }
avg=$(awk -F, 'NR > 1 { s += $6; n++ } END { printf "%.4f", s / n }' "$tmp/ntc")
got=$(sed -n 's/^# Avg bus bandwidth *: \([0-9.]*\).*/\1/p' "$tmp/nt")
awk -v a="$avg" -v g="$got" 'BEGIN { d = a - g; exit !(g != "" && d < 0.001 && d > -0.001) }' ||
    { echo "FAIL: footer $got, average busbw $avg"; fail=$((fail + 1)); }
n=$("$cs" predict --gen ring:gpus=8 -p "$plat" -b 1K -e 2K -d all --format csv | sed 1d | wc -l)
[ "$n" -eq 24 ] || { echo "FAIL: -d all gave $n rows, want 12 types x 2 sizes"; fail=$((fail + 1)); }
"$cs" --version | grep -q "^SimGrid 3\.[0-9]*\.[0-9]*, libxml2 2\." ||
    { echo "FAIL: --version names no SimGrid and libxml2 versions"; fail=$((fail + 1)); }
# -g G: one thread launches G GPUs in turn; an 8-GPU ring waits for the last, 7 launches later.
t1=$("$cs" predict --gen ring:gpus=8,channels=1 -p "$plat" -b 1K -e 1K --format csv | awk -F, 'NR == 2 { print $4 }')
t8=$("$cs" predict --gen ring:gpus=8,channels=1 -p "$plat" -b 1K -e 1K -g 8 --format csv | awk -F, 'NR == 2 { print $4 }')
tset=$("$cs" predict --gen ring:gpus=8,channels=1 -p "$plat" -b 1K -e 1K --format csv \
    --set cs.gpus_per_process=8 | awk -F, 'NR == 2 { print $4 }')
lg=$(sed -n 's/.*<prop id="cs.launch_gpu_s" value="\([^"]*\)".*/\1/p' "$plat")
awk -v a="$t1" -v b="$t8" -v c="$tset" -v l="$lg" 'BEGIN { d = b - a - 7 * l * 1e6;
    exit !(a > 0 && l > 0 && b == c && d > -0.01 && d < 0.01) }' ||
    { echo "FAIL: -g 8: $t1 -> $t8 us (--set: $tset), want + 7 x $lg s"; fail=$((fail + 1)); }
for bad in "-o xor" "-n many" "-i 1M" "-d int7" "-g 0"; do
    # shellcheck disable=SC2086
    "$cs" predict --gen ring:gpus=8 -p "$plat" $bad >/dev/null 2>&1
    [ $? -eq 2 ] || { echo "FAIL: predict $bad does not exit 2"; fail=$((fail + 1)); }
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
    echo "FAIL: the 1 KiB row did not appear while the 1 GiB replay ran"
    cat "$tmp/rows"
    fail=$((fail + 1))
fi
child=""
for _ in $(seq 100); do
    child=$(pgrep -P "$pid" | head -n 1)
    [ -n "$child" ] && break
    sleep 0.1
done
if [ -z "$child" ]; then
    echo "FAIL: predict started no simulating child"
    fail=$((fail + 1))
else
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    for _ in $(seq 20); do
        kill -0 "$child" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$child" 2>/dev/null; then
        echo "FAIL: the simulating child $child outlived its killed predict"
        kill -9 "$child"
        fail=$((fail + 1))
    fi
fi

# A size the executor cannot run (65,536 loop iterations of an LL ring) is an unsupported row,
# the other rows stay, and predict exits 2 with the reason.
"$cs" predict --gen ring:gpus=8,channels=1,protocol=LL -p "$plat" -b 8G -e 16G --format csv \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q '^8589934592,.*,ok$' "$tmp/out" ||
    ! grep -q '^17179869184,.*,unsupported$' "$tmp/out" ||
    ! grep -q '17179869184 bytes: unsupported: .*65536 loop iterations' "$tmp/err"; then
    echo "FAIL: an unsupported size: exit $rc"
    cat "$tmp/out" "$tmp/err"
    fail=$((fail + 1))
fi

[ "$fail" -eq 0 ] && echo "predict_cli: ok"
exit "$fail"
