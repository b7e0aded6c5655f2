# gnuplot script written by collsim validate
set terminal svg size 720,480 dynamic
set output 'ndv4-2.12-to-2.8.4.svg'
set datafile separator ','
set logscale xy
set key top left
set grid
set title "ndv4-2.12-to-2.8.4: measured vs predicted" noenhanced
set xlabel 'size (bytes)'
set ylabel 'time (us)'
plot 'ndv4-2.12-to-2.8.4.csv' skip 1 using 1:2 with linespoints title 'measured', \
     'ndv4-2.12-to-2.8.4.csv' skip 1 using 1:3 with linespoints title 'predicted (NCCL''s protocol)'
