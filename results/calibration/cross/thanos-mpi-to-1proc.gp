# gnuplot script written by collsim validate
set terminal svg size 720,480 dynamic
set output 'thanos-mpi-to-1proc.svg'
set datafile separator ','
set logscale xy
set key top left
set grid
set title "thanos-mpi-to-1proc: measured vs predicted" noenhanced
set xlabel 'size (bytes)'
set ylabel 'time (us)'
plot 'thanos-mpi-to-1proc.csv' skip 1 using 1:2 with linespoints title 'measured', \
     'thanos-mpi-to-1proc.csv' skip 1 using 1:3 with linespoints title 'predicted (fastest protocol)'
