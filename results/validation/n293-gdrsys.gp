# gnuplot script written by collsim validate
set terminal svg size 720,480 dynamic
set output 'n293-gdrsys.svg'
set datafile separator ','
set logscale xy
set key top left
set grid
set title "n293-gdrsys: measured vs predicted" noenhanced
set xlabel 'size (bytes)'
set ylabel 'time (us)'
plot 'n293-gdrsys.csv' skip 1 using 1:2 with linespoints title 'measured', \
     'n293-gdrsys.csv' skip 1 using 1:3 with linespoints title 'predicted (NCCL''s protocol)'
