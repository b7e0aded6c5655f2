# gnuplot script written by collsim validate
set terminal svg size 720,480 dynamic
set output 'ring-latency.svg'
set datafile separator ','
set logscale y
set key top left
set grid
set title "ring-latency: measured vs predicted" noenhanced
set xlabel 'GPUs'
set ylabel 'time (us)'
plot 'ring-latency.csv' skip 1 using 1:2 with linespoints title 'measured', \
     'ring-latency.csv' skip 1 using 1:3 with linespoints title 'predicted (NCCL''s protocol)'
