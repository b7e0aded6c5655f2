#!/bin/sh
# to-nccl-tests.sh TABLE.csv: print a measurement table of the shared schema (rows of
# size_bytes,time_us,algbw_GBps,busbw_GBps,placement; out_of_place then in_place per size, float
# sums over 8 ranks) in the layout nccl-tests 2.13 prints, for the raw-output reader's tests.
# The numbers are the table's; the banner lines are a generic nccl-tests banner.
set -eu
echo "# nThread 1 nGpus 8 minBytes 64 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0"
echo "#"
echo "# Using devices"
r=0
while [ $r -lt 8 ]; do
    echo "#  Rank  $r Group  0 Pid   1234 on      node0 device  $r [0x07] NVIDIA A100-SXM4-40GB"
    r=$((r + 1))
done
echo "#"
echo "#                                                              out-of-place                       in-place          "
echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
echo "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "
awk -F, '{ sub(/\r$/, "") } NR > 1 && $5 == "out_of_place" { s = $1; t = $2; a = $3; b = $4; next }
         NR > 1 && $5 == "in_place" && $1 == s {
             printf "%12s  %12.0f     float     sum      -1  %7s  %6s  %6s      0  %7s  %6s  %6s    N/A\n",
                 s, s / 4, t, a, b, $2, $3, $4 }' "$1"
echo "# Out of bounds values : 0 OK"
echo "# Avg bus bandwidth    : 81.112 "
echo "#"
