#!/bin/sh
# predict_resid.sh: `collsim predict` on schedules the runtime cannot run as predicted: a GPU with
# more threadblocks than it keeps resident is a `hang` row at every size (exit 1, as a deadlock),
# in every format; an LL128 schedule over PCIe within a node is predicted with a warning.
builddir=${CS_BUILDDIR:-.}
srcdir=${CS_SRCDIR:-..}
cs="$builddir/collsim"
dgx="$srcdir/platforms/dgx-a100.xml"
hier="$srcdir/platforms/a100-hier-4x2.xml"
. "$srcdir/tests/lib.sh"

# check WHAT CONDITION...: count a failure, with the outputs, when the condition fails
check() {
    what=$1
    shift
    if ! "$@"; then
        fail "$what"
        sed 's/^/  /' "$tmp/out" "$tmp/err" | head -20
    fi
}

# predict WANT_RC ARGS...: run collsim predict; output in $tmp/out and $tmp/err
predict() {
    want=$1
    shift
    "$cs" predict "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "predict $*: exit $rc, want $want" [ "$rc" -eq "$want" ]
}

hang="gpu 0 has 128 threadblocks; at most 108 are co-resident on this GPU (108 SMs x 1 CTA per SM): the runtime would hang"

# runtime-audit.md section 0 row 2: 8 instances of the 8-GPU hierarchical schedule (v1), 128
# threadblocks per GPU, on an A100 (108 SMs): hang, no time; on 132 SMs (H100, H200) a time.
"$cs" gen hierarchical --gpus 8 --instances 8 --protocol LL --variant v1 --sms 128 -o "$tmp/h128.xml" || exit 99
predict 1 "$tmp/h128.xml" -p "$dgx" -b 64K -e 128K
check "table rows" [ "$(grep -c ' N/A        -       -       -     N/A  hang$' "$tmp/out")" -eq 2 ]
check "table note" grep -q -F "# hang (at every size): $hang" "$tmp/out"
predict 1 "$tmp/h128.xml" -p "$dgx" -b 64K -e 64K --format csv
check "csv row" grep -q '^65536,16384,float,,,,hang,65536$' "$tmp/out"
check "csv note" grep -q -F "# hang (at every size): $hang" "$tmp/err"
predict 1 "$tmp/h128.xml" -p "$dgx" -b 64K -e 64K --format json
check "json row" grep -q -F "\"status\": \"hang\", \"report\": \"$hang\"}" "$tmp/out"
predict 0 "$tmp/h128.xml" -p "$dgx" -b 64K -e 64K --set cs.gpu_sms=132
check "132 SMs: a time" grep -q ' ok$' "$tmp/out"
predict 0 --gen hierarchical:gpus=8,instances=8,protocol=LL,variant=v1,sms=128 -p "$dgx" -b 64K -e 64K \
    --set cs.gpu_sms=64 --set cs.ctas_per_sm=2
predict 1 "$tmp/h128.xml" -p "$dgx" -b 64K -e 64K --set cs.gpu_sms=127
check "127 SMs" grep -q -F "at most 127 are co-resident" "$tmp/out"
predict 2 "$tmp/h128.xml" -p "$dgx" -b 64K -e 64K --set cs.gpu_sms=1.5
check "a fraction of an SM" grep -q "cs.gpu_sms=\"1.5\" is not a whole number" "$tmp/err"
predict 1 "$tmp/h128.xml" -p "$dgx" -b 64K -e 64K --stats
check "--stats on a hang" grep -q "nothing replayed: the runtime would hang" "$tmp/err"

# LL128 over PCIe within a node (the two columns of a100-hier-4x2): a time, a warning on stderr
# and after the table; CSV's notes are on stderr (once); JSON rows carry it. LL, and LL128 on
# NVLink alone, get none.
warn="LL128 over a path that is not NVLink: connection gpu 3 -> gpu 4 channel 0 crosses gpu3_pcie"
predict 0 --gen ring:gpus=8,channels=1,protocol=LL128 -p "$hier" -b 64K -e 128K
check "stderr warning" grep -q -F "collsim: warning: $warn" "$tmp/err"
check "table note" grep -q -F "# warning: $warn" "$tmp/out"
check "one note" [ "$(grep -c '^# warning' "$tmp/out")" -eq 1 ]
check "times" [ "$(grep -c ' ok$' "$tmp/out")" -eq 2 ]
predict 0 --gen ring:gpus=8,channels=1,protocol=LL128 -p "$hier" -b 64K -e 128K --format csv
check "csv warning once" [ "$(grep -c -F "$warn" "$tmp/err")" -eq 1 ]
check "csv rows" [ "$(grep -c ',ok,[0-9]*$' "$tmp/out")" -eq 2 ]
predict 0 --gen ring:gpus=8,channels=1,protocol=LL128 -p "$hier" -b 64K -e 64K --format json
check "json warning" grep -q -F "\"status\": \"ok\", \"warning\": \"$warn" "$tmp/out"
predict 0 --gen ring:gpus=8,channels=1,protocol=LL -p "$hier" -b 64K -e 64K
check "LL: no warning" [ ! -s "$tmp/err" ]
predict 0 --gen ring:gpus=8,channels=1,protocol=LL -p "$hier" -b 64K -e 64K --protocol LL128
check "--protocol LL128: the warning" grep -q -F "$warn" "$tmp/err"
predict 0 --gen ring:gpus=8,channels=1,protocol=LL128 -p "$dgx" -b 64K -e 64K
check "NVSwitch: no warning" [ ! -s "$tmp/err" ]

[ "$fails" -eq 0 ] && echo "predict_resid: ok"
[ "$fails" -eq 0 ]
