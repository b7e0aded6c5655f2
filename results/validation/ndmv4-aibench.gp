# gnuplot script written by collsim validate
set terminal svg size 720,480 dynamic
set output 'ndmv4-aibench.svg'
set datafile separator ','
set logscale xy
set key top left
set grid
set title "ndmv4-aibench: measured vs predicted" noenhanced
set xlabel 'size (bytes)'
set ylabel 'time (us)'
plot 'ndmv4-aibench.csv' skip 1 using 1:2 with linespoints title 'measured', \
     'ndmv4-aibench.csv' skip 1 using 1:3 with linespoints title 'predicted (NCCL''s protocol)'
