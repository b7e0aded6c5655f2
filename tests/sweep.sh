#!/bin/sh
# sweep.sh: `collsim sweep` end to end: a parallel run, resume after the sweep is killed mid-run
# (its worker dies with it; no point lost or duplicated, finished points not redone), shards
# listed, run by GNU parallel and merged, and the refusals (foreign results directory, bad point
# number, conflicting or missing shards). The kill is deterministic: point 3's platform is a FIFO that
# blocks its worker until the sweep is killed.
set -u
src=${CS_SRCDIR:?}
cs=${CS_BUILDDIR:?}/collsim
if ! "$cs" help predict >/dev/null 2>&1; then
    echo "collsim predict is not built in: skipped"
    exit 77
fi
tmp=$(mktemp -d)
pg=""
opener=""
cleanup() {
    [ -n "$pg" ] && kill -KILL "-$pg" 2>/dev/null
    [ -n "$opener" ] && kill -KILL "$opener" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp" || exit 1

cat >s.sweep <<EOS
schedule = $src/tests/data/msccl-xml/allreduce_a100_pcie_hierarchical_fixed.4gpu.1inst.LL.xml
platform.family = a100-pcie-4gpu
protocol = LL LL128 Simple
scale.cs.link_Bps.pcie = 1 2
sizes = 1K..64K x8
EOS
npoints=6

# 1. the whole sweep, two at a time
"$cs" sweep s.sweep -j 2 --results full.d -o full.csv 2>err || fail "sweep: $(cat err)"
head -1 full.csv | grep -qx 'point,schedule,platform.family,protocol,scale.cs.link_Bps.pcie,size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status,nominal_bytes' \
    || fail "header: $(head -1 full.csv)"
[ "$(tail -n +2 full.csv | cut -d, -f1 | sort -un | wc -l)" -eq $npoints ] || fail "points in full.csv"
[ "$(tail -n +2 full.csv | wc -l)" -eq $((npoints * 3)) ] || fail "rows in full.csv"
grep -q '^5,.*,Simple,2,65536,' full.csv || fail "point 5 is not Simple at x2"
# the same bandwidth scaled up never makes the large size slower
t1=$(grep '^4,.*,65536,' full.csv | cut -d, -f9)
t2=$(grep '^5,.*,65536,' full.csv | cut -d, -f9)
awk -v a="$t1" -v b="$t2" 'BEGIN { exit !(b <= a) }' || fail "x2 PCIe slower ($t2 > $t1 us)"

# 2. killed while point 3 runs (-j 1: points 0-2 finished, 4-5 not started). Point 3's worker
# blocks opening its platform, a FIFO, until the test opens the other end (then it knows the
# point runs) and keeps it open. Only the sweep process is killed: its worker must die with it,
# freeing the results directory's lock that it inherited.
"$cs" platform a100-pcie-4gpu -o plat.xml || fail "platform"
for k in 0 1 2 4 5; do cp plat.xml p$k.xml; done
mkfifo p3.xml
cat >k.sweep <<EOS
schedule = $src/tests/data/msccl-xml/allreduce_a100_pcie_hierarchical_fixed.4gpu.1inst.LL.xml
platform = p0.xml p1.xml p2.xml p3.xml p4.xml p5.xml
sizes = 1K..64K x8
EOS
(exec 3>p3.xml; : >blocked; exec sleep 100000) &
opener=$!
setsid sh -c 'echo $$ >pgid; exec "$0" sweep k.sweep -j 1 --results r.d -o r.csv 2>/dev/null' "$cs" &
sweep=$!
i=0
while [ ! -e blocked ]; do
    i=$((i + 1))
    [ $i -lt 6000 ] || fail "point 3 never started"
    sleep 0.1
done
pg=$(cat pgid)
kill -KILL "$pg"
wait "$sweep" 2>/dev/null
i=0
until flock -n r.d/.lock true; do
    i=$((i + 1))
    [ $i -lt 100 ] || fail "the worker of point 3 outlived its sweep"
    sleep 0.1
done
pg=""
kill -KILL "$opener"
wait "$opener" 2>/dev/null
opener=""
rm p3.xml
cp plat.xml p3.xml
[ ! -e r.csv ] || fail "a killed sweep wrote its output"
ls r.d/point-*.csv | sort >done.txt
[ "$(cat done.txt | tr '\n' ' ')" = "r.d/point-0.csv r.d/point-1.csv r.d/point-2.csv " ] || fail "after the kill: $(cat done.txt)"
# what point 3's killed worker had created is in the manifest, and is there
left=$(grep '^\.point-3\.......$' r.d/.written 2>/dev/null)
[ -n "$left" ] && [ -d "r.d/$left" ] ||
    fail "the killed worker's work directory, noted: '$left', there: $(ls -A r.d | tr '\n' ' ')"
before=$(stat -c '%i %Y' r.d/point-0.csv r.d/point-1.csv r.d/point-2.csv)
"$cs" sweep k.sweep -j 2 --results r.d -o r.csv 2>err || fail "resume: $(cat err)"
grep -q "3 of 6 points already done" err || fail "resume message: $(cat err)"
[ "$(stat -c '%i %Y' r.d/point-0.csv r.d/point-1.csv r.d/point-2.csv)" = "$before" ] || fail "finished points redone"
"$cs" sweep k.sweep -j 2 --results kfull.d -o kfull.csv 2>err || fail "sweep k: $(cat err)"
[ "$(tail -n +2 kfull.csv | wc -l)" -eq $((npoints * 3)) ] || fail "rows in kfull.csv"
cmp -s r.csv kfull.csv || fail "resumed result differs from the full run"
[ -z "$(ls -A r.d | grep -v -e '^point-[0-9]*\.csv$' -e '^sweep.sig$' -e '^\.lock$')" ] || fail "leftovers: $(ls -A r.d)"
# a rerun of a finished sweep runs nothing and gives the same file
# progress lines when stderr is not a terminal: with a tiny interval at least the last one
COLLSIM_PROGRESS_INTERVAL=1e-9 "$cs" sweep k.sweep --results r.d -o r3.csv 2>err || fail "rerun with progress"
grep -Eq "^sweep: $npoints/$npoints points \(100%\), elapsed [0-9:]+, ETA [0-9:?]+, 0 running, 0 failed$" err || fail "sweep progress: $(cat err)"
COLLSIM_PROGRESS_INTERVAL=1e-9 "$cs" sweep k.sweep --results r.d -o r3.csv --quiet 2>err && [ ! -s err ] || fail "sweep --quiet: $(cat err)"
"$cs" sweep k.sweep --results r.d -o r2.csv 2>/dev/null && cmp -s r2.csv kfull.csv || fail "rerun"

# 3. shards: listed commands, run by hand and by GNU parallel, merged
"$cs" sweep --list s.sweep --shard-dir sh >list.txt || fail "--list"
[ "$(wc -l <list.txt)" -eq $npoints ] || fail "--list lines"
grep -q -- "sweep $tmp/s.sweep --point 0 --out sh/shard-0.csv\$" list.txt || fail "--list form: $(head -1 list.txt)"
mkdir sh
sh -e list.txt || fail "running the listed commands"
"$cs" sweep --merge m.csv sh/shard-*.csv 2>/dev/null || fail "merge"
cmp -s m.csv full.csv || fail "merged shards differ from the full run"
# a shard given twice is kept once; shards that disagree are refused
"$cs" sweep --merge m2.csv sh/shard-*.csv sh/shard-1.csv 2>/dev/null && cmp -s m2.csv full.csv || fail "duplicate shard"
sed 's/,ok,\([0-9]*\)$/,deadlock,\1/' sh/shard-1.csv >bad-1.csv
"$cs" sweep --merge m3.csv sh/shard-*.csv bad-1.csv 2>/dev/null
[ $? -eq 2 ] || fail "conflicting shards accepted"
[ ! -e m3.csv ] || fail "output written despite a conflict"
# missing shards are refused, naming the points: inside the range, and at its end (each shard
# carries the sweep's point count in its npoints column)
head -1 sh/shard-0.csv | grep -q '^point,npoints,' || fail "shard header: $(head -1 sh/shard-0.csv)"
last=$((npoints - 1))
"$cs" sweep --merge m4.csv $(ls sh/shard-*.csv | grep -v "shard-$last.csv") 2>err
[ $? -eq 2 ] && grep -q "1 of points 0..$last missing: $last\$" err || fail "last shard missing: $(cat err)"
[ ! -e m4.csv ] || fail "output written with a shard missing"
"$cs" sweep --merge m4.csv sh/shard-0.csv sh/shard-2.csv 2>err
[ $? -eq 2 ] && grep -q "$((npoints - 2)) of points 0..$last missing: 1, 3-$last\$" err || fail "shards missing: $(cat err)"
# shards of another sweep (another point count) are refused
sed 's/^\([0-9]*\),[0-9]*,/\1,99,/' sh/shard-1.csv >other-1.csv
"$cs" sweep --merge m5.csv sh/shard-0.csv other-1.csv 2>err
[ $? -eq 2 ] && grep -q "other-1.csv:2: npoints 99 differs from sh/shard-0.csv's $npoints" err || fail "npoints differ: $(cat err)"
if command -v parallel >/dev/null 2>&1; then
    mkdir par
    "$cs" sweep --list s.sweep --shard-dir par | parallel --will-cite -j 2 || fail "GNU parallel"
    "$cs" sweep --merge p.csv par/shard-*.csv 2>/dev/null || fail "merge after parallel"
    cmp -s p.csv full.csv || fail "GNU parallel shards differ from the full run"
else
    echo "GNU parallel not installed: that part skipped"
fi

# 4. the result feeds tune and plot (--no-nccl: windows among the variants alone; tests/tune.sh
# checks the comparison with NCCL, which this schedule beats by less than tune's margin here)
"$cs" tune full.csv --where scale.cs.link_Bps.pcie=2 --no-nccl -o plan >tune.txt 2>err || fail "tune: $(cat err)"
[ "$(grep -Ec '^ +[0-9]+ +[0-9]+ ' tune.txt)" -ge 1 ] || fail "tune found no range: $(cat tune.txt)"
for f in plan/*.xml; do "$cs" info "$f" >/dev/null || fail "tune wrote an unreadable $f"; done
"$cs" tune full.csv >/dev/null 2>err
[ $? -eq 2 ] && grep -q "more than one platform" err || fail "tune over two PCIe factors accepted"
"$cs" plot full.csv --script plot.gp -o plot.png || fail "plot"
[ "$(grep -c '^\$d[0-9]* << EOD' plot.gp)" -eq $npoints ] || fail "plot: not one line per point"

# 5. refusals
"$cs" sweep s.sweep --point 6 --out x.csv 2>/dev/null
[ $? -eq 2 ] || fail "--point 6 of 6 accepted"
sed 's/^sizes = .*/sizes = 4K/' s.sweep >t.sweep
"$cs" sweep t.sweep --results r.d -o t.csv 2>err
[ $? -eq 2 ] && grep -q "other keys or sizes" err || fail "foreign results dir: $(cat err)"
# sizes that predict refuses are refused with the sweep file's line, before any point runs; a
# byte order mark (as some editors write) is not part of the first key
for z in 0 -4K 2T 1K..4T 1.5K; do
    sed "s/^sizes = .*/sizes = $z/" s.sweep >z.sweep
    "$cs" sweep z.sweep -o z.csv 2>err
    [ $? -eq 2 ] && grep -q "^collsim: z.sweep:5: sizes: '$z' is not a size" err || fail "sizes = $z: $(cat err)"
    [ ! -e z.csv ] || fail "sizes = $z: output written"
done
# The results folder: only what a killed run's workers noted in its manifest (.point-N.XXXXXX
# work directories, point temporaries) is removed; names of that form that no worker wrote, a
# symbolic link among them (never followed), and other files are kept. A folder holding anything
# and no sweep.sig is not a sweep's: refused, untouched.
mkdir -p own.d victim
echo precious >victim/keep.txt
echo mine >own.d/notes.txt
"$cs" sweep s.sweep --results own.d -o own.csv --quiet 2>err
[ $? -eq 2 ] && grep -q "own.d holds notes.txt, and no sweep.sig" err && [ ! -e own.csv ] &&
    [ "$(ls -A own.d | tr '\n' ' ')" = ".lock notes.txt " ] ||
    fail "a foreign folder as results: $(cat err) $(ls -A own.d | tr '\n' ' ')"
rm own.d/notes.txt
"$cs" sweep s.sweep --results own.d -o own.csv --quiet 2>err || fail "sweep into own.d: $(cat err)"
ln -s ../victim own.d/.point-0.abcdef
echo mine >own.d/notes.tmp.txt
echo x >own.d/point-0.csv.tmp.123
mkdir own.d/.point-1.qwerty
touch own.d/.point-1.qwerty/platform.xml
"$cs" sweep s.sweep --results own.d -o own.csv --quiet 2>err || fail "rerun into own.d: $(cat err)"
[ -f victim/keep.txt ] && [ -f own.d/notes.tmp.txt ] && [ -L own.d/.point-0.abcdef ] &&
    [ -f own.d/point-0.csv.tmp.123 ] && [ -f own.d/.point-1.qwerty/platform.xml ] ||
    fail "the results folder's cleaning removed what no sweep wrote: $(ls -a own.d victim | tr '\n' ' ')"
printf '\357\273\277' | cat - s.sweep >bom.sweep
"$cs" sweep bom.sweep --list >bom.txt 2>err || fail "byte order mark: $(cat err)"
"$cs" sweep s.sweep --list | sed 's|/s\.sweep |/bom.sweep |' | cmp -s - bom.txt ||
    fail "byte order mark: other points: $(cat bom.txt)"
echo "sweep: ok"
