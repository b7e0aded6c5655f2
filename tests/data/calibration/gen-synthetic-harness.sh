#!/bin/sh
# gen-synthetic-harness.sh: write a SYNTHETIC per-sample CSV in the harness format
# (calibration.md 3.3) from known parameters, with 0.5% deterministic multiplicative noise.
# Not a measurement: it exists to test that `collsim calibrate fit` reads the harness format and
# recovers the parameters it was made from (listed in the comment lines it writes).
#   sh gen-synthetic-harness.sh > synthetic-harness.csv
awk 'BEGIN {
    seed = 12345
    print "# calib_format=1 git=synthetic driver=none runtime=none host=synthetic utc=1970-01-01T00:00:00Z"
    print "# SYNTHETIC DATA (tests/data/calibration/gen-synthetic-harness.sh), not a measurement"
    print "# truth: launch 4.0e-6 s; ll 1.5e-6 s + B/10e9; ll128 2.0e-6 s + B/18e9; simple 3.0e-6 s + B/22e9"
    print "# truth: local copy 1.0e-6 s + B/50e9 (copy_Bps 100e9); reduce 1.0e-6 s + B/40e9 (reduce_Bps 120e9)"
    print "# truth: p2p copy 5.0e-6 s + B/200e9; flag ping-pong round trip 1.6e-6 s + B/100e9 (one way 0.8e-6 s)"
    print "# device=0 name=\"synthetic\" sm=80 nsm=108 l2=41943040 pci=0000:00:00.0"
    print "test,mech,op,src,dst,concurrent,nblocks,nthreads,chunk_bytes,bytes,ops,sample,time_s,sm_mhz,status"
    series("launch", "launch", "empty", 0, 0, 1, 32, 0, 4.0e-6, 0, 0, 0, 1000)
    series("proto", "ll", "send_recv", 0, 0, 1, 512, 32768, 1.5e-6, 10e9, 1024, 16777216, 64)
    series("proto", "ll128", "send_recv", 0, 0, 1, 640, 576000, 2.0e-6, 18e9, 1024, 16777216, 64)
    series("proto", "simple", "send_recv", 0, 0, 1, 512, 2097152, 3.0e-6, 22e9, 1024, 16777216, 64)
    series("hbm", "sm_write", "copy", 0, 0, 1, 512, 0, 1.0e-6, 50e9, 4096, 268435456, 16)
    series("hbm", "sm_write", "reduce", 0, 0, 1, 512, 0, 1.0e-6, 40e9, 4096, 268435456, 16)
    series("p2p_bw", "ce", "copy", 0, 1, 1, 0, 0, 5.0e-6, 200e9, 4096, 268435456, 16)
    series("p2p_lat", "flag_pingpong", "rtt", 0, 1, 1, 32, 0, 1.6e-6, 100e9, 8, 4096, 10000)
    # A failed sample: the fit must skip it.
    print "p2p_bw,ce,copy,0,1,1,1,0,0,4096,16,9,1.0e+00,1410,error"
}
# Deterministic uniform in [0,1) (LCG, modulus 2^31), then a sum of 12 for an approximate normal.
function unif() { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 }
function gauss(  s, i) { s = 0; for (i = 0; i < 12; i++) s += unif(); return s - 6 }
function series(test, mech, op, src, dst, nb, nt, chunk, alpha, beta, lo, hi, ops,   b, k, t) {
    for (b = lo; b <= hi; b = (b == 0 ? hi + 1 : b * 2)) {
        for (k = 0; k < 5; k++) {
            t = (alpha + (beta > 0 ? b / beta : 0)) * (1 + 0.005 * gauss()) * ops
            printf "%s,%s,%s,%d,%d,1,%d,%d,%d,%d,%d,%d,%.6e,1410,ok\n", test, mech, op, src, dst, nb, nt, chunk, b, ops, k, t
        }
    }
}'
