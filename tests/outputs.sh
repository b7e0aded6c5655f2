#!/bin/sh
# outputs.sh: where collsim's commands write: a full device as stdout or as an output file is an
# error (exit 2, a message naming it), /dev/null and a FIFO are written in place and stay what
# they are, a symlink is followed to its target and kept, a directory or a dangling symlink is
# refused, and neither a failure nor SIGTERM or SIGINT leaves a temporary file or a replaced file.
set -u
src=${CS_SRCDIR:?}
cs=${CS_BUILDDIR:?}/collsim
tmp=$(mktemp -d)
bg=""
cleanup() {
    [ -n "$bg" ] && kill -KILL $bg 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
bad() {
    echo "FAIL: $*" >&2
    fail=1
}
cd "$tmp" || exit 1

# expect2 PATTERN ARGS...: collsim ARGS exits 2 within 60 s with PATTERN on stderr (stdout is
# whatever the caller redirected).
expect2() {
    pat=$1
    shift
    timeout 60 "$cs" "$@" 2>err
    rc=$?
    [ "$rc" -eq 2 ] && grep -q -- "$pat" err || bad "collsim $* exited $rc (want 2, '$pat'): $(cat err)"
}

# expect0 ARGS...: collsim ARGS exits 0 within 60 s.
expect0() {
    timeout 60 "$cs" "$@" 2>err || bad "collsim $* exited $?: $(cat err)"
}

# no_temp DIR: DIR holds no temporary file or point work directory.
no_temp() {
    left=$(ls -A "$1" | grep -e '\.tmp\.' -e '\.point-')
    [ -z "$left" ] || bad "left in $1: $left"
}

# The devices written to: as root, private nodes of /dev/null and /dev/full (a regression must not
# replace the machine's /dev/null with a file, as sweep -o did); otherwise the real ones, which
# only root could replace.
mkdir dev
if mknod dev/null c 1 3 2>/dev/null && mknod dev/full c 1 7 2>/dev/null &&
    (: >dev/null) 2>/dev/null; then
    null=$tmp/dev/null devfull=$tmp/dev/full
else
    null=/dev/null devfull=/dev/full
fi
devices_ok() {
    [ -c "$null" ] && [ -c "$devfull" ] || bad "a device became a file: $(ls -l "$null" "$devfull")"
}

sched=$src/tests/data/msccl-xml/allreduce_a100_pcie_hierarchical_fixed.4gpu.1inst.LL.xml
fixture=$src/tests/data/calibration/synthetic-harness.csv
tunecsv=$src/tests/data/tune/sweep.csv
"$cs" platform a100-pcie-4gpu -o plat.xml || { echo "FAIL: platform" >&2; exit 1; }
cat >s.sweep <<EOS
schedule = $sched
platform = $tmp/plat.xml
protocol = LL Simple
sizes = 1K..4K x4
EOS
# shard-0.csv holds both points of the sweep (a merge refuses missing points); whole.csv is their
# merge, without the shards' npoints column
"$cs" sweep s.sweep --point 0 --out shard-0.csv && "$cs" sweep s.sweep --point 1 --out shard-1.csv &&
    tail -n +2 shard-1.csv >>shard-0.csv && cut -d, -f1,3- shard-0.csv >whole.csv ||
    { echo "FAIL: --point 0, 1" >&2; exit 1; }

# 1. stdout on a full device: every command says so and exits 2
full=": cannot write: "
expect2 "<stdout>$full" info "$sched" >/dev/full
expect2 "<stdout>$full" fmt "$sched" >/dev/full
expect2 "<stdout>$full" verify "$sched" >/dev/full
expect2 "<stdout>$full" predict "$sched" --platform plat.xml -b 1K -e 4K >/dev/full
expect2 "<stdout>$full" predict "$sched" --platform plat.xml -b 1K -e 1K --format csv >/dev/full
expect2 "<stdout>$full" calibrate fit "$fixture" >/dev/full
expect2 "<stdout>$full" tune --no-nccl "$tunecsv" >/dev/full
expect2 "<stdout>$full" regress "$src/results/regression/baseline.csv" --subset 1 >/dev/full
expect2 "<stdout>$full" platform a100-pcie-4gpu >/dev/full
expect2 "<stdout>$full" sweep s.sweep --results r1.d --quiet >/dev/full
expect2 "<stdout>$full" sweep --list s.sweep >/dev/full
expect2 "<stdout>$full" sweep --merge - shard-0.csv >/dev/full
expect2 "<stdout>$full" --help >/dev/full
expect2 "<stdout>$full" help sweep >/dev/full
expect2 "<stdout>$full" --version >/dev/full

# 2. a full device as the output file
expect2 "$devfull$full" platform a100-pcie-4gpu -o "$devfull"
expect2 "$devfull$full" calibrate fit "$fixture" -o "$devfull"
expect2 "$devfull$full" calibrate fit "$fixture" -o params.xml --report "$devfull"
expect2 "$devfull: cannot write the trace (No space left" \
    predict "$sched" --platform plat.xml -b 1K -e 1K --trace "$devfull" >/dev/null
expect2 "$devfull$full" sweep s.sweep --results r2.d --quiet -o "$devfull"
expect2 "$devfull$full" sweep --merge "$devfull" shard-0.csv
expect2 "$devfull$full" sweep s.sweep --point 1 --out "$devfull"
expect2 "$devfull" tune "$tunecsv" --schedule-dir "$src/tests/data/msccl-xml" -o "$devfull" \
    >/dev/null
devices_ok

# 3. a null device as the output file is written in place and stays a device
expect0 platform a100-pcie-4gpu -o "$null"
expect0 calibrate fit "$fixture" -o "$null" --report "$null"
expect0 predict "$sched" --platform plat.xml -b 1K -e 1K --trace "$null" >/dev/null
expect0 sweep s.sweep --results r3.d --quiet -o "$null"
expect0 sweep --merge "$null" shard-0.csv --quiet
expect0 sweep s.sweep --point 1 --out "$null"
devices_ok
no_temp "$(dirname "$null")"
# the point's work directory goes to $TMPDIR, not beside a device
mkdir ptmp
TMPDIR=$tmp/ptmp "$cs" sweep s.sweep --point 1 --out "$null" 2>err || bad "--point to $null: $(cat err)"
[ -z "$(ls -A ptmp)" ] || bad "left in \$TMPDIR: $(ls -A ptmp)"

# 4. a FIFO is written in place: its reader gets the whole CSV, and it stays a FIFO
mkfifo fifo
cat fifo >got.csv &
bg=$!
expect0 sweep --merge fifo shard-0.csv --quiet
# a replaced FIFO would leave its reader waiting for a writer
[ -p fifo ] || { bad "the FIFO was replaced"; kill $bg; }
wait $bg
bg=""
cmp -s got.csv whole.csv || bad "the FIFO's reader got: $(cat got.csv)"

# 5. a symlink is followed: its target is replaced whole, the link stays
mkdir sub
echo old >sub/real.csv
ln -s sub/real.csv link.csv
expect0 sweep --merge link.csv shard-0.csv --quiet
[ -L link.csv ] || bad "the symlink was replaced by a file"
cmp -s sub/real.csv whole.csv || bad "the symlink's target: $(cat sub/real.csv)"
no_temp sub
no_temp .
ln -s no/such/file dangling.csv
expect2 "dangling.csv: cannot write: symlink to a missing file" sweep --merge dangling.csv shard-0.csv
[ -L dangling.csv ] || bad "the dangling symlink was replaced"

# 6. a directory is refused, and nothing is written inside it
mkdir outdir
expect2 "outdir: cannot write: is a directory" sweep --merge outdir shard-0.csv
expect2 "outdir: cannot write: is a directory" platform a100-pcie-4gpu -o outdir
expect2 "outdir: cannot write: is a directory" calibrate fit "$fixture" -o outdir
[ -z "$(ls -A outdir)" ] || bad "written into the directory: $(ls -A outdir)"

# 7. a point that fails leaves the old file and no temporary file
echo old >keep.csv
echo 'not xml' >broken.xml
sed "s|^platform = .*|platform = $tmp/broken.xml|" s.sweep >broken.sweep
expect2 "point 0:" sweep broken.sweep --point 0 --out keep.csv
[ "$(cat keep.csv)" = old ] || bad "a failed point replaced its output: $(cat keep.csv)"
no_temp .

# 8. killed while writing: a point blocked reading its platform (a FIFO this shell holds open for
# writing and never writes: collsim opens a FIFO without waiting for a writer, so one nobody
# opens reads as empty), once alone and once in a sweep (its worker), leaves no temporary file or
# work directory after SIGTERM or SIGINT; the old output is untouched
mkfifo block.xml
exec 8<>block.xml
sed "s|^platform = .*|platform = $tmp/block.xml|" s.sweep >block.sweep
# wait_temp DIR: until a temporary file appears in DIR (the point runs), at most 30 s
wait_temp() {
    i=0
    until ls -A "$1" | grep -q '\.tmp\.'; do
        i=$((i + 1))
        [ $i -lt 300 ] || { bad "no temporary file appeared in $1"; return 1; }
        sleep 0.1
    done
}
# a background job of a script starts with SIGINT ignored: give it back its default when env can
if env --default-signal=INT true 2>/dev/null; then
    sigs="TERM INT" launch="env --default-signal=INT"
else
    sigs=TERM launch=""
fi
for sig in $sigs; do
    $launch "$cs" sweep block.sweep --point 0 --out keep.csv &
    bg=$!
    wait_temp .
    kill -$sig $bg
    wait $bg
    rc=$?
    bg=""
    [ $rc -gt 128 ] || bad "--point after SIG$sig exited $rc"
    [ "$(cat keep.csv)" = old ] || bad "SIG$sig replaced the output: $(cat keep.csv)"
    no_temp .

    mkdir "k$sig.d"
    $launch "$cs" sweep block.sweep -j 2 --quiet --results "k$sig.d" -o "k$sig.csv" &
    bg=$!
    wait_temp "k$sig.d"
    kill -$sig $bg
    wait $bg
    bg=""
    i=0
    until flock -n "k$sig.d/.lock" true; do
        i=$((i + 1))
        [ $i -lt 100 ] || { bad "a worker outlived its sweep (SIG$sig)"; break; }
        sleep 0.1
    done
    no_temp "k$sig.d"
    [ ! -e "k$sig.csv" ] || bad "a killed sweep wrote its output"
done

exec 8>&-

# regress: a worker blocked on its platform (a FIFO) and regress killed: its folder of worker
# CSVs in $TMPDIR goes with it
mkdir reg regtmp
cp "$sched" reg/s.xml
mkfifo reg/block.xml
exec 9<>reg/block.xml
printf 'schedule,platform,protocol,size_bytes,time_us,busbw_GBps,status\n' >reg/base.csv
printf 's.xml,block.xml,LL,1024,1.0,1.0,ok\n' >>reg/base.csv
for sig in $sigs; do
    TMPDIR=$tmp/regtmp $launch "$cs" regress reg/base.csv >/dev/null 2>&1 &
    bg=$!
    i=0
    until ls regtmp/*/group-0.csv >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -lt 300 ] || { bad "regress never started its worker"; break; }
        sleep 0.1
    done
    kill -$sig $bg
    wait $bg
    bg=""
    [ -z "$(ls -A regtmp)" ] || bad "a killed regress (SIG$sig) left $(ls -AR regtmp)"
done
exec 9>&-

# 9. gen -o, plot -o and validate -o go through the same rules: a full device fails with its
# name (the old file kept, no temporary file), a null device stays one, a file is replaced whole.
echo old >gen.xml
expect2 "$devfull: cannot write" gen ring --gpus 4 -o "$devfull"
expect0 gen ring --gpus 4 -o "$null"
expect0 gen ring --gpus 4 -o gen.xml
grep -q '<algo ' gen.xml || bad "gen -o did not replace gen.xml"
devices_ok
no_temp .
if command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
    echo old >plot.png
    expect0 plot "$src/results/sweeps/hier-pcie.csv" -o plot.png
    head -c 4 plot.png | od -An -c | grep -q 'P   N   G' || bad "plot -o plot.png is not a PNG"
    expect0 plot "$src/results/sweeps/hier-pcie.csv" -o "$null"
    devices_ok
    no_temp .
fi
mkdir val
: >val/summary.csv
ln -s "$devfull" val/summary.md
(cd "$src" && timeout 120 "$cs" validate tests/data/validation/cases.txt -o "$tmp/val") \
    >/dev/null 2>err
rc=$?
[ "$rc" -eq 2 ] && grep -q "summary.md: cannot write" err ||
    bad "validate with summary.md on a full device exited $rc: $(cat err)"
[ -f val/summary.csv ] && [ ! -s val/summary.csv ] || bad "a failed validate replaced summary.csv"
no_temp val
devices_ok

# -o /dev/stdout on a pipe (its link names "pipe:[N]", no path) writes to the pipe.
"$cs" gen ring --gpus 4 -o /dev/stdout 2>err | head -n 1 >out
grep -q '^<algo name="allreduce_ring_1ch"' out || bad "-o /dev/stdout on a pipe: $(cat err)"

# A closed stdout or stderr at start: exit 2, said on the other stream; no file opened lands on
# fd 1 (the sweep's lock file took it and received the joined CSV).
"$cs" --version >&- 2>err
rc=$?
[ "$rc" -eq 2 ] && grep -q 'standard output is closed' err || bad "closed stdout: exit $rc, $(cat err)"
"$cs" --version 2>&- >out
rc=$?
[ "$rc" -eq 2 ] && grep -q 'standard error is closed' out || bad "closed stderr: exit $rc, $(cat out)"

# An output that is one of the command's inputs is refused, the input intact (every command:
# the readers note what they read, the output files refuse it); regress --update rewrites its
# baseline on purpose (regress.sh).
cp "$src/tests/data/validation/oci-bmgpu48-a100sxm40-1node-8gpu.csv" m.csv
cp m.csv m.keep
"$cs" calibrate platform --family dgx-a100 m.csv -o m.csv --max-iter 1 --quiet >/dev/null 2>err
rc=$?
[ "$rc" -eq 2 ] && grep -q "m.csv: cannot write: it is one of this command's inputs" err &&
    cmp -s m.csv m.keep || bad "calibrate -o its table: exit $rc, $(cat err)"
"$cs" gen ring --gpus 4 -o r4.xml || bad "gen ring"
cp r4.xml r4.keep
"$cs" predict r4.xml -p "$src/platforms/a100-pcie-4gpu.xml" -b 1M -e 1M --trace r4.xml >/dev/null 2>err
rc=$?
[ "$rc" -eq 2 ] && grep -q "it is one of this command.s inputs" err &&
    cmp -s r4.xml r4.keep || bad "predict --trace over its schedule: exit $rc, $(cat err)"
printf '<prop id="cs.launch_s" value="5e-6"/>\n' >p.props
cp p.props p.keep
"$cs" platform dgx-a100 --params p.props -o p.props 2>err
rc=$?
[ "$rc" -eq 2 ] && cmp -s p.props p.keep || bad "platform -o its props: exit $rc, $(cat err)"

# An output that is an input: a case named like its measurement in the cases' folder (validate's
# default output) would overwrite the table; -o at the measurement's folder the same. Refused
# before anything is written, the table unchanged.
mkdir -p own
cp "$src/tests/data/validation/oci-bmgpu48-a100sxm40-1node-8gpu.csv" own/m.csv
cp own/m.csv own/m.keep
printf 'm m.csv gen:ring:gpus=8 %s Simple sizes=1M:4M\n' "$src/platforms/dgx-a100.xml" >own/cases.txt
(cd own && "$cs" validate cases.txt --quiet) >/dev/null 2>err
rc=$?
[ "$rc" -eq 2 ] && grep -q "cases.txt:1: case m: validate would write ./m.csv over m.csv" err ||
    bad "validate over its own measurement exited $rc: $(cat err)"
cmp -s own/m.csv own/m.keep && [ ! -e own/summary.md ] || bad "validate changed its input"
(cd own && "$cs" validate cases.txt --quiet -o out) >/dev/null 2>err ||
    bad "validate -o out: $(cat err)"
cmp -s own/m.csv own/m.keep && [ -s own/out/m.csv ] || bad "validate -o out"

[ -c /dev/null ] && [ -c /dev/full ] || bad "/dev/null or /dev/full is no longer a device"
[ "$fail" -eq 0 ] && echo "outputs: all passed"
exit "$fail"
