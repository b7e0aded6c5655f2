#!/bin/sh
# cases.sh: writes the rows of baseline.csv (times left empty); `collsim regress --update` fills
# them. The default platforms of platforms/, the generated schedules (corrected hierarchical, the
# seed as msccl-tools lowers it, ring, all-pairs) and the msccl-tools reference seed XML, each in
# the three protocols, at sizes 1 KiB to 16 MiB; and, when schedules/ exists, each committed
# schedule there on the platform of its GPU count in its own protocol. Run from the repository root:
#   sh results/regression/cases.sh >results/regression/baseline.csv
#   collsim regress --update results/regression/baseline.csv
set -eu
echo "schedule,platform,protocol,size_bytes,time_us,busbw_GBps,status"
row() { # schedule platform [protocols]
    for p in ${3:-LL LL128 Simple}; do
        s=1024
        while [ $s -le 16777216 ]; do
            echo "\"$1\",platforms/$2.xml,$p,$s,,,"
            s=$((s * 4))
        done
    done
}
row gen:hierarchical:gpus=4,columns=2,instances=1 a100-hier-2x2
row gen:hierarchical:gpus=8,columns=2,instances=1 a100-hier-4x2
row gen:hierarchical:gpus=16,columns=2,instances=1 a100-hier-8x2
row gen:hierarchical:gpus=8,columns=2,instances=1,compat=1 a100-hier-4x2
row tests/data/msccl-xml/allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml a100-hier-2x2
row gen:ring:gpus=4,channels=2,instances=1 a100-pcie-4gpu
row gen:ring:gpus=4,channels=2,instances=1 a100-pcie-nvbridge
row gen:allpairs:gpus=4,instances=1 a100-pcie-nvbridge
row gen:ring:gpus=8,channels=4,instances=1 dgx-a100
row gen:allpairs:gpus=8,instances=1 dgx-a100
row gen:ring:gpus=16,channels=4,instances=1 dgx-a100-2node

# committed schedules: NAME.Ngpu....xml on the platform with N GPUs of their kind
for f in schedules/*.xml; do
    [ -e "$f" ] || continue
    b=$(basename "$f")
    case "$b" in
    hierarchical*.4gpu.*) plat=a100-hier-2x2 ;;
    hierarchical*.8gpu.*) plat=a100-hier-4x2 ;;
    hierarchical*.16gpu.*) plat=a100-hier-8x2 ;;
    *.4gpu.*) plat=a100-pcie-4gpu ;;
    *.8gpu.*) plat=dgx-a100 ;;
    *.16gpu.*) plat=dgx-a100-2node ;;
    *) continue ;;
    esac
    row "$f" "$plat" -
done
