#!/bin/sh
# plot.sh: `collsim plot` writes gnuplot scripts with labelled log-log axes and one series per
# variant, and (when gnuplot is installed) PNG and SVG files.
set -u
src=${CS_SRCDIR:?}
cs=${CS_BUILDDIR:?}/collsim
csv=$src/tests/data/tune/sweep.csv
. "$src/tests/lib.sh"

"$cs" plot "$csv" -o "$tmp/a.png" --script "$tmp/a.gp" || fail "plot --script"
s=$tmp/a.gp
grep -q "set logscale x 2" "$s" || fail "x not logarithmic"
grep -q "set logscale y 10" "$s" || fail "y not logarithmic"
grep -q "set xlabel 'Buffer size (bytes" "$s" || fail "x label"
grep -q "set ylabel 'Time (us)'" "$s" || fail "time label"
grep -q "set ylabel 'Bus bandwidth (GB/s)'" "$s" || fail "busbw label"
# three variants (schedule x protocol), named by the columns that vary
grep -q "title 'allreduce_a100_ncv4.4gpu.1inst.LL.xml LL'" "$s" || fail "legend 1"
grep -q "title 'allreduce_a100_pcie_hierarchical_fixed.4gpu.1inst.LL.xml LL128'" "$s" || fail "legend 2"
[ "$(grep -c '^\$d[0-9]* << EOD' "$s")" -eq 3 ] || fail "not three data blocks"
# deadlocked sizes are no line points but marks: variant 0 has 4 finished sizes of 6
[ "$(sed -n '/^\$d0 << EOD/,/^EOD/p' "$s" | grep -c '^[0-9]')" -eq 4 ] || fail "deadlocks drawn"
[ "$(sed -n '/^\$f0 << EOD/,/^EOD/p' "$s" | grep -c '^[0-9]* 2$')" -eq 2 ] || fail "deadlocks not marked"
grep -q "title 'deadlock (no time, 0 GB/s)'" "$s" || fail "no deadlock legend"
# the title says the platform all rows share, not the file; bus bandwidth linear by default
grep -q "multiplot layout 1,2 title 'dgx-a100'" "$s" || fail "title"
grep -q "unset logscale y" "$s" || fail "busbw not linear"
"$cs" plot "$csv" --busbw-scale log -o "$tmp/a.png" --script "$tmp/log.gp" || fail "--busbw-scale log"
grep -q "unset logscale y" "$tmp/log.gp" && fail "--busbw-scale log: linear axis"
"$cs" plot "$csv" --busbw-scale ln -o "$tmp/a.png" --script "$tmp/x.gp" 2>/dev/null
[ $? -eq 2 ] || fail "--busbw-scale ln accepted"

"$cs" plot "$csv" --best protocol -o "$tmp/b.png" --script "$tmp/b.gp" || fail "plot --best"
grep -q "set ylabel 'protocol'" "$tmp/b.gp" || fail "best: y label"
grep -q "set ytics ('LL' 0, 'LL128' 1, 'Simple' 2)" "$tmp/b.gp" || fail "best: y tics"

# plain prediction CSVs (predict --format csv): one line per file, named by the file
for p in 0 1; do
    { echo "size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status"
      grep "^$p," "$csv" | cut -d, -f5-; } >"$tmp/pred$p.csv"
done
"$cs" plot "$tmp/pred0.csv" "$tmp/pred1.csv" -o "$tmp/p.png" --script "$tmp/p.gp" || fail "plot of predict CSVs"
grep -q "title 'pred0.csv'" "$tmp/p.gp" && grep -q "title 'pred1.csv'" "$tmp/p.gp" || fail "predict CSV legends"

# attached values: the same script
"$cs" plot "$csv" -o"$tmp/a.png" --script="$tmp/a2.gp" || fail "plot with attached values"
cmp -s "$tmp/a.gp" "$tmp/a2.gp" || fail "-oFILE --script=FILE writes another script"

"$cs" plot "$csv" --best nosuch -o "$tmp/c.png" 2>/dev/null
[ $? -eq 2 ] || fail "--best on a missing column accepted"
# a map must not compare 4 and 8 GPUs
hier=$src/results/sweeps/hier-pcie.csv
"$cs" plot "$hier" --best scale.cs.link_Bps.pcie -o "$tmp/c.png" --script "$tmp/c.gp" 2>"$tmp/err"
[ $? -eq 2 ] || fail "--best over mixed GPU counts accepted"
grep -q "mix GPU counts (gen.gpus: 4, 8)" "$tmp/err" || fail "mixed GPU counts not named"
"$cs" plot "$hier" --best scale.cs.link_Bps.pcie --where gen.gpus=8 -o "$tmp/c.png" \
    --script "$tmp/c.gp" || fail "--best with one GPU count"
printf 'a,b\n1,2\n' >"$tmp/bad.csv"
"$cs" plot "$tmp/bad.csv" -o "$tmp/d.png" 2>/dev/null
[ $? -eq 2 ] || fail "a CSV without predictions accepted"

# A hostile cell (a newline ending gnuplot's string, then a system() call): the script holds it
# as one string, gnuplot runs nothing of it; an output path with a control byte is refused.
printf 'point,gen.algorithm,platform,size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status,nominal_bytes\n' >"$tmp/evil.csv"
for s in 1024 4096; do
    printf '0,"ring\nsystem(""touch %s"")\n#",p.xml,%s,256,float,10,0.1,0.1,ok,%s\n' \
        "$tmp/pwned" $s $s >>"$tmp/evil.csv"
done
"$cs" plot "$tmp/evil.csv" -o "$tmp/evil.svg" --script "$tmp/evil.gp" 2>"$tmp/err" ||
    fail "plot of a hostile cell: $(cat "$tmp/err")"
[ ! -e "$tmp/pwned" ] || fail "a CSV cell ran a command through gnuplot"
grep -q '^system' "$tmp/evil.gp" && fail "a CSV cell's newline reached the gnuplot script"
"$cs" plot "$csv" -o "$tmp/a
b.svg" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'control character' "$tmp/err" || fail "an output path with a newline"

# gnuplot exiting 0 with an empty image (a full disk): refused, the earlier image kept.
printf '#!/bin/sh\nout=$(sed -n "s/^set output .\\(.*\\).$/\\1/p" "$1"); : >"$out"; exit 0\n' \
    >"$tmp/fakegp"
chmod +x "$tmp/fakegp"
echo 'an earlier figure' >"$tmp/keep.svg"
cp "$tmp/keep.svg" "$tmp/k.svg"
GNUPLOT="$tmp/fakegp" "$cs" plot "$csv" -o "$tmp/k.svg" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'empty or cut' "$tmp/err" && cmp -s "$tmp/k.svg" "$tmp/keep.svg" ||
    fail "an empty image from gnuplot: $(cat "$tmp/err")"

if command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
    "$cs" plot "$csv" -o "$tmp/a.png" 2>/dev/null || fail "png"
    head -c 8 "$tmp/a.png" | od -An -c | grep -q 'P   N   G' || fail "not a PNG"
    "$cs" plot "$csv" --metric time -o "$tmp/a.svg" 2>/dev/null || fail "svg"
    grep -q '<svg' "$tmp/a.svg" || fail "not an SVG"
    grep -q 'Time (us)' "$tmp/a.svg" || fail "svg lacks the axis label"
    "$cs" plot "$csv" --best protocol -o "$tmp/b.png" 2>/dev/null || fail "best png"
    "$cs" plot "$csv" -o "$tmp/a.pdf" 2>/dev/null || fail "pdf"
    head -c 5 "$tmp/a.pdf" | grep -q '%PDF-' || fail "not a PDF"
else
    echo "gnuplot not installed: scripts checked, images not drawn"
fi
[ "$fails" -eq 0 ] || exit 1
echo "plot: ok"
