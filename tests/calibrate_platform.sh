#!/bin/sh
# calibrate_platform.sh: `collsim calibrate platform` recovers the parameters of tables the model
# itself predicted from a platform of known parameters (one table, and several at once with
# --cases: an NCCL run and an MSCCL run of one machine), reports each key with its interval and
# verdict and the tables' residuals, names the sizes where a table contradicts itself, and
# rejects bad input with exit 2. The committed calibrations of the shared tables
# (results/calibration) are checked by tests/calibration_results.sh.
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
collsim="$CS_BUILDDIR/collsim"
. "$CS_SRCDIR/tests/lib.sh"

value() { # KEY FILE: the value of <prop id="KEY" .../> in FILE
    sed -n "s/.*<prop id=\"$1\" value=\"\\([^\"]*\\)\".*/\\1/p" "$2" | tail -n 1
}
near() { # WHAT GOT WANT RELTOL
    awk -v g="$2" -v w="$3" -v t="$4" \
        'BEGIN { d = (g - w) / w; if (d < 0) d = -d; exit !(g != "" && d <= t) }' ||
        fail "$1: got '$2', want $3 within $4"
}
# fix_all_but KEY...: --fix for every key the fits below could move, but those named.
fix_all_but() {
    for k in cs.launch_s cs.launch_gpu_s cs.link_lat_s.nvlink cs.link_Bps.nvlink \
        cs.tb_Bps.LL cs.pass_s.LL cs.link_eff.LL.nvlink cs.tb_Bps.LL128 cs.call_s.LL128.nvlink \
        cs.link_eff.LL128.nvlink cs.tb_Bps.Simple cs.call_s.Simple.nvlink cs.reduce_Bps \
        cs.copy_Bps cs.prologue_s cs.dep_s cs.barrier_s cs.flag_s; do
        case " $* " in *" $k "*) ;; *) printf ' --fix %s' "$k" ;; esac
    done
}

# --- one table the model predicted: the fit finds the launch and bandwidth it was made with,
# from priors a factor 1.2 off, every other key fixed (Simple's per-step cost at the table's
# own value: --set, then --fix).
spec=ring:gpus=8,channels=24,instances=1,protocol=Simple
"$collsim" platform dgx-a100 --set cs.launch_s=7e-6 --set cs.link_Bps.nvlink=200e9 \
    --set cs.call_s.Simple.nvlink=5e-6 -o "$tmp/truth.xml" || fail "platform for the table"
"$collsim" predict --gen "$spec" --platform "$tmp/truth.xml" --protocol Simple -b 1K -e 8G -f 8 \
    --format csv >"$tmp/table.csv" 2>/dev/null || fail "predict the table to fit"
# shellcheck disable=SC2046
"$collsim" calibrate platform --family dgx-a100 "$tmp/table.csv" --gen "$spec" \
    --protocols Simple --set cs.call_s.Simple.nvlink=5e-6 \
    $(fix_all_but cs.launch_s cs.link_Bps.nvlink) \
    --jobs 2 --quiet -o "$tmp/fit.xml" --props "$tmp/fit.props" --report "$tmp/fit.md" ||
    fail "calibrate platform on a predicted table"
near cs.launch_s "$(value cs.launch_s "$tmp/fit.xml")" 7e-6 3e-3
near cs.link_Bps.nvlink "$(value cs.link_Bps.nvlink "$tmp/fit.xml")" 200e9 3e-3
# the report: each key with its prior, value, interval around the truth and verdict; the
# residual line; a key fixed is no row of it
grep -q '^| `cs.launch_s` | 8.400 us | 7.0[0-9]* us | [0-9.]* us \.\. [0-9.]* us | fitted |' \
    "$tmp/fit.md" &&
    grep -q '^| `cs.link_Bps.nvlink` | 240 GB/s | 20[0-9.]* GB/s |.* | fitted |' "$tmp/fit.md" &&
    grep -q "^Residual over $(($(wc -l <"$tmp/table.csv") - 1)) of [0-9]* sizes: median |error| 0\.[0-9]*%, max |error| [01]\.[0-9]*%\.\$" \
        "$tmp/fit.md" &&
    ! grep -q 'cs.tb_Bps.LL`' "$tmp/fit.md" ||
    { fail "the report's keys and residual:"; cat "$tmp/fit.md" >&2; }
awk -F'|' '/^\| `cs.link_Bps.nvlink`/ { split($5, r, " .. "); lo = r[1] + 0; hi = r[2] + 0
    exit !(lo < 200 && hi > 200) }' "$tmp/fit.md" ||
    fail "the bandwidth's interval does not hold the truth: $(grep link_Bps "$tmp/fit.md")"
# The props file holds the keys the fit moved or was given; the platform written from it has
# them too.
[ "$(grep -c '^<prop' "$tmp/fit.props")" -eq 3 ] ||
    { fail "want 3 props:"; cat "$tmp/fit.props" >&2; }
"$collsim" platform dgx-a100 --params "$tmp/fit.props" -o "$tmp/again.xml" ||
    fail "platform --params fit.props"
for k in cs.launch_s cs.link_Bps.nvlink cs.call_s.Simple.nvlink; do
    [ "$(value $k "$tmp/again.xml")" = "$(value $k "$tmp/fit.xml")" ] ||
        fail "$k differs through --props"
done

# --- Simple's per-step cost free too: on one GPU count the table fixes the launch plus the
# steps' costs, not each; the report names the pair, and the fit still reproduces the table.
# shellcheck disable=SC2046
"$collsim" calibrate platform --family dgx-a100 "$tmp/table.csv" --gen "$spec" \
    --protocols Simple $(fix_all_but cs.launch_s cs.link_Bps.nvlink cs.call_s.Simple.nvlink) \
    --jobs 2 --quiet -o "$tmp/pair.xml" --report "$tmp/pair.md" ||
    fail "calibrate platform with the per-step cost free"
grep -q '^Pairs the data cannot tell apart.*`cs.launch_s` and `cs.call_s.Simple.nvlink`' \
    "$tmp/pair.md" &&
    grep -q '^Residual over [0-9]* of [0-9]* sizes: median |error| 0\.[0-9]*%, max |error| 0\.[0-9]*%\.$' \
        "$tmp/pair.md" ||
    { fail "the pair launch / per-step cost:"; cat "$tmp/pair.md" >&2; }

# --- a key no size depends on is left as given (insensitive): LL's line rate under a Simple
# schedule; a table of large sizes only fits the bandwidth and leaves the launch at its prior.
# shellcheck disable=SC2046
"$collsim" calibrate platform --family dgx-a100 "$tmp/table.csv" --gen "$spec" \
    --protocols Simple --set cs.call_s.Simple.nvlink=5e-6 --fit cs.tb_Bps.LL $(fix_all_but cs.link_Bps.nvlink cs.tb_Bps.LL \
        cs.launch_s) --jobs 2 --quiet -o "$tmp/ins.xml" --report "$tmp/ins.md" ||
    fail "calibrate platform with an insensitive key"
grep -q '^| `cs.tb_Bps.LL` | 12 GB/s | 12 GB/s |.*| insensitive' "$tmp/ins.md" ||
    { fail "an insensitive key:"; grep tb_Bps "$tmp/ins.md" >&2; }
awk -F, 'NR == 1 || $1 >= 268435456' "$tmp/table.csv" >"$tmp/large.csv"
# shellcheck disable=SC2046
"$collsim" calibrate platform --family dgx-a100 "$tmp/large.csv" --gen "$spec" \
    --protocols Simple --set cs.call_s.Simple.nvlink=5e-6 \
    $(fix_all_but cs.launch_s cs.link_Bps.nvlink) --jobs 2 --quiet -o "$tmp/large.xml" --report "$tmp/large.md" ||
    fail "calibrate platform on large sizes only"
grep -q '^| `cs.launch_s` | 8.400 us | 8.[34][0-9]* us |.*stayed at its prior' "$tmp/large.md" &&
    grep -q '^| `cs.link_Bps.nvlink` |.* | fitted |' "$tmp/large.md" &&
    grep -q '^Only rates and shares are fitted: no size of these tables pins a latency' "$tmp/large.md" ||
    { fail "a table of large sizes:"; cat "$tmp/large.md" >&2; }
# the whole table pins both kinds: no such line
grep -q '^Only ' "$tmp/fit.md" && fail "a table of every size says only one kind is fitted"
near cs.link_Bps.nvlink "$(value cs.link_Bps.nvlink "$tmp/large.xml")" 200e9 1e-2

# --- --cases: an NCCL run (LL, NCCL's own protocol per size) and an MSCCL run (all-pairs LL,
# whose executor adds its prologue) of one machine, made from known values, fitted at once: the
# LL line rate and pass from the NCCL table, the prologue from the MSCCL one.
"$collsim" platform dgx-a100 --set cs.tb_Bps.LL=5e9 --set cs.pass_s.LL=0.45e-6 \
    --set cs.prologue_s=3e-6 -o "$tmp/truth3.xml" || fail "platform for the cases"
echo "size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status,nominal_bytes" >"$tmp/n1.csv"
for s in 4096 16384 65536 262144 1048576; do # NCCL at each size on its own channels and threads
    "$collsim" predict --gen "nccl:gpus=8,channels=24,nccl=2.12.12,protocol=LL,size=$s" \
        --platform "$tmp/truth3.xml" -b "$s" -e "$s" --format csv 2>/dev/null | sed 1d \
        >>"$tmp/n1.csv" || fail "predict the NCCL table at $s"
done
"$collsim" gen allpairs --gpus 8 --protocol LL -o "$tmp/ap.xml" || fail "gen allpairs"
"$collsim" predict "$tmp/ap.xml" --platform "$tmp/truth3.xml" -b 1K -e 64K -f 2 --format csv \
    >"$tmp/ap.csv" 2>/dev/null || fail "predict the MSCCL table"
cat >"$tmp/cases.txt" <<EOF
# an NCCL run and an MSCCL run of one machine
nccl $tmp/n1.csv gen:nccl:gpus=8,channels=24,nccl=2.12.12 - nccl
ap   $tmp/ap.csv $tmp/ap.xml - LL
EOF
# shellcheck disable=SC2046
"$collsim" calibrate platform --family dgx-a100 --cases "$tmp/cases.txt" \
    $(fix_all_but cs.tb_Bps.LL cs.pass_s.LL cs.prologue_s) --jobs 2 --quiet \
    -o "$tmp/cases.xml" --report "$tmp/cases.md" || fail "calibrate platform --cases"
near cs.tb_Bps.LL "$(value cs.tb_Bps.LL "$tmp/cases.xml")" 5e9 1e-2
near cs.pass_s.LL "$(value cs.pass_s.LL "$tmp/cases.xml")" 0.45e-6 1e-2
near cs.prologue_s "$(value cs.prologue_s "$tmp/cases.xml")" 3e-6 1e-2
grep -q '^### nccl$' "$tmp/cases.md" && grep -q '^### ap$' "$tmp/cases.md" &&
    [ "$(grep -c '^Residual over' "$tmp/cases.md")" -eq 2 ] ||
    { fail "the --cases report:"; cat "$tmp/cases.md" >&2; }

# --- raw nccl-tests output that names its NCCL (nccl-tests' nccl-library= header): a version past
# the rule's sources (2.21.5) is taken with 2.18's rule, NCCL's own pick per size, and the warning
# and the report say so; the pre-2.9 code form (2804) reads as 2.8.4. The table is the LL rows of
# n1.csv (NCCL 2.12.12's rule, the same as 2.18's there) in nccl-tests' layout.
awk -F, 'NR == 1 { print "size_bytes,time_us,algbw_GBps,busbw_GBps,placement"; next }
         { a = sprintf("%.2f,%.2f", $8 / $4 / 1e3, $8 / $4 / 1e3 * 1.75)
           print $8 "," $4 "," a ",out_of_place"; print $8 "," $4 "," a ",in_place" }' \
    "$tmp/n1.csv" >"$tmp/n1s.csv"
for lib in 22105 2804; do
    { echo "# nccl-tests version 2.13.9 nccl-headers=$lib nccl-library=$lib"
      sh "$CS_SRCDIR/tests/data/nccl-tests/to-nccl-tests.sh" "$tmp/n1s.csv"; } >"$tmp/raw$lib.out"
    # shellcheck disable=SC2046
    "$collsim" calibrate platform --family dgx-a100 "$tmp/raw$lib.out" --ranks 8 \
        $(fix_all_but cs.launch_s) --max-iter 3 --jobs 2 --quiet -o "$tmp/raw$lib.xml" \
        --report "$tmp/raw$lib.md" 2>"$tmp/raw$lib.err" ||
        { fail "calibrate platform on raw output of NCCL $lib:"; cat "$tmp/raw$lib.err" >&2; }
done
grep -q "schedule \`gen:nccl:log=$tmp/raw22105.out,nccl=2.21.5\`; protocol NCCL's own pick per size" \
    "$tmp/raw22105.md" &&
    grep -q "^Note: NCCL 2.21.5 is newer than the versions whose channel and thread rule and tuning model" \
        "$tmp/raw22105.md" &&
    grep -q "warning: NCCL 2.21.5 is newer than the versions.*taken with 2.18's" "$tmp/raw22105.err" ||
    { fail "raw output of NCCL 2.21.5:"; cat "$tmp/raw22105.md" "$tmp/raw22105.err" >&2; }
grep -q "schedule \`gen:nccl:log=$tmp/raw2804.out,nccl=2.8.4\`; protocol NCCL's own pick" \
    "$tmp/raw2804.md" && ! grep -q "^Note:" "$tmp/raw2804.md" && ! grep -q warning "$tmp/raw2804.err" ||
    { fail "raw output of NCCL 2.8.4:"; cat "$tmp/raw2804.md" "$tmp/raw2804.err" >&2; }

# --- a table that contradicts itself: in-place and out-of-place 20% apart at 2 MiB, and the time
# falling by half as the size doubles from 8 MiB; the report names both, keeps them in the median
# and gives the max without them.
"$collsim" predict --gen "$spec" --platform "$tmp/truth.xml" --protocol Simple -b 1M -e 32M \
    --format csv 2>/dev/null |
    awk -F, 'NR == 1 { print "size_bytes,time_us,algbw_GBps,busbw_GBps,placement"; next }
             { t = $4; if ($8 == 8388608) t *= 2; print $8 "," t ",0,0,out_of_place"
               if ($8 == 2097152) t *= 1.2; print $8 "," t ",0,0,in_place" }' >"$tmp/contra.csv" ||
    fail "the contradicting table"
# shellcheck disable=SC2046
"$collsim" calibrate platform --family dgx-a100 --ranks 8 "$tmp/contra.csv" --gen "$spec" \
    --protocols Simple --set cs.call_s.Simple.nvlink=5e-6 \
    $(fix_all_but cs.launch_s cs.link_Bps.nvlink) --jobs 2 --quiet -o "$tmp/contra.xml" --report "$tmp/contra.md" ||
    fail "calibrate platform on a table that contradicts itself"
grep -q '^| 2097152 |.* contradicts: in place .*(20% apart) |$' "$tmp/contra.md" &&
    grep -q '^| 8388608 |.*contradicts: the time falls by [0-9]*% from 8388608 B to 16777216 B' \
        "$tmp/contra.md" &&
    grep -q '^| 16777216 |.*contradicts: the time falls by' "$tmp/contra.md" &&
    grep -q '^Left out of the max where the table contradicts itself (3 sizes, named above)' \
        "$tmp/contra.md" ||
    { fail "the contradictions:"; cat "$tmp/contra.md" >&2; }

# --- a machine of 8 PCIe cards: the platform holds as many GPUs as the table's ranks (not the
# family's default 4), from a table alone and from a case file (its generator's gpus=); the
# launch and the link between the CPU sockets come back.
pspec=ring:gpus=8,channels=2,instances=1,protocol=Simple
"$collsim" platform a100-pcie-4gpu --gpus-per-node 8 --set cs.launch_s=7e-6 --set cs.sys_Bps=8e9 \
    -o "$tmp/pcie8.xml" || fail "platform of 8 PCIe cards"
"$collsim" predict --gen "$pspec" --platform "$tmp/pcie8.xml" --protocol Simple -b 1K -e 8G -f 8 \
    --format csv >"$tmp/pcie8.csv" 2>/dev/null || fail "predict the 8-card table"
printf 'pcie8 %s gen:%s - Simple\n' "$tmp/pcie8.csv" "$pspec" >"$tmp/pcie8.cases"
for how in table cases; do
    if [ $how = table ]; then set -- "$tmp/pcie8.csv" --gen "$pspec" --protocols Simple; else
        set -- --cases "$tmp/pcie8.cases"; fi
    "$collsim" calibrate platform --family a100-pcie-4gpu "$@" --fix cs.tb_Bps.Simple \
        --fix cs.call_s.Simple.pcie --fix cs.prologue_s --fix cs.link_lat_s.pcie \
        --fix cs.link_Bps.pcie --jobs 2 --quiet \
        -o "$tmp/pfit.xml" --report "$tmp/pfit.md" 2>"$tmp/err" ||
        fail "calibrate a100-pcie-4gpu on 8 cards ($how): $(head -c 300 "$tmp/err")"
    [ "$(grep -c '<host id="gpu' "$tmp/pfit.xml")" -eq 8 ] || fail "8 cards ($how): not 8 GPUs"
    near "cs.launch_s ($how)" "$(value cs.launch_s "$tmp/pfit.xml")" 7e-6 3e-3
    near "cs.sys_Bps ($how)" "$(value cs.sys_Bps "$tmp/pfit.xml")" 8e9 3e-3
done

# ... and DGX nodes enough for a case file's 16 GPUs (no --nodes)
"$collsim" platform dgx-a100 --nodes 2 -o "$tmp/d16.xml" || fail "platform of 2 DGX nodes"
"$collsim" predict --gen ring:gpus=16,channels=2,protocol=Simple --platform "$tmp/d16.xml" \
    --protocol Simple -b 1M -e 64M -f 8 --format csv >"$tmp/d16.csv" 2>/dev/null ||
    fail "predict the 16-GPU table"
printf 'd16 %s gen:ring:gpus=16,channels=2,protocol=Simple - Simple\n' "$tmp/d16.csv" >"$tmp/d16.cases"
"$collsim" calibrate platform --family dgx-a100 --cases "$tmp/d16.cases" --max-iter 1 --quiet \
    -o "$tmp/d16fit.xml" 2>"$tmp/err" || fail "calibrate --cases on 16 GPUs: $(head -c 300 "$tmp/err")"
[ "$(grep -c '<host id="gpu' "$tmp/d16fit.xml")" -eq 16 ] || fail "--cases on 16 GPUs: not 16 GPUs"

# --- bad input: exit 2 with the reason (file:line where there is one).
expect_error() { # PATTERN ARGS...
    pat=$1
    shift
    "$collsim" calibrate platform "$@" >/dev/null 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 2 ] && grep -q -- "$pat" "$tmp/err" ||
        fail "calibrate platform $* exited $rc: $(cat "$tmp/err")"
}
expect_error "needs --family" "$tmp/table.csv" -o "$tmp/x.xml"
expect_error "needs TABLE... or --cases FILE" --family dgx-a100 "$tmp/table.csv"
expect_error "needs TABLE... or --cases FILE" --family dgx-a100 "$tmp/table.csv" \
    --cases "$tmp/cases.txt" -o "$tmp/x.xml"
expect_error "unknown platform family 'dgx'" --family dgx "$tmp/table.csv" -o "$tmp/x.xml"
expect_error "exclude each other" --family dgx-a100 "$tmp/table.csv" --gen "$spec" \
    --schedule x.xml -o "$tmp/x.xml"
expect_error "--cases names each case's schedule" --family dgx-a100 --cases "$tmp/cases.txt" \
    --gen "$spec" -o "$tmp/x.xml"
printf 'size_bytes,time_us\n64,1\n128,x\n' >"$tmp/bad.csv"
expect_error "bad.csv:3: column time_us" --family dgx-a100 --ranks 8 "$tmp/bad.csv" -o "$tmp/x.xml"
expect_error "cannot infer the number of ranks" --family dgx-a100 "$tmp/bad.csv" -o "$tmp/x.xml"
expect_error "--fit takes a parameter's key" --family dgx-a100 "$tmp/table.csv" \
    --fit cs.launch_s=1M:2M -o "$tmp/x.xml"
expect_error "--fit: 'cs.nope' is not a parameter key" --family dgx-a100 "$tmp/table.csv" \
    --fit cs.nope -o "$tmp/x.xml"
expect_error "--fit cs.gpu_sms: not a parameter the fit moves" --family dgx-a100 \
    "$tmp/table.csv" --gen "$spec" --protocols Simple --fit cs.gpu_sms -o "$tmp/x.xml"
printf 'x %s gen:%s platforms/dgx-a100.xml Simple\n' "$tmp/table.csv" "$spec" >"$tmp/plat.txt"
expect_error "plat.txt:1: case x: calibrate fits one platform" --family dgx-a100 \
    --cases "$tmp/plat.txt" -o "$tmp/x.xml"
printf 'x %s gen:%s - Slow\n' "$tmp/table.csv" "$spec" >"$tmp/proto.txt"
expect_error "proto.txt:1: protocol 'Slow'" --family dgx-a100 --cases "$tmp/proto.txt" \
    -o "$tmp/x.xml"
[ ! -e "$tmp/x.xml" ] || fail "a failed fit wrote its platform"
[ "$fails" -eq 0 ]
