# gnuplot script written by collsim validate
set terminal svg size 720,480 dynamic
set output 'thanos-1proc-to-mpi.svg'
set datafile separator ','
set logscale xy
set key top left
set grid
set title "thanos-1proc-to-mpi: measured vs predicted" noenhanced
set xlabel 'size (bytes)'
set ylabel 'time (us)'
plot 'thanos-1proc-to-mpi.csv' skip 1 using 1:2 with linespoints title 'measured', \
     'thanos-1proc-to-mpi.csv' skip 1 using 1:3 with linespoints title 'predicted (fastest protocol)'
