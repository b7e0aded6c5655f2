# gnuplot script written by collsim validate
set terminal svg size 720,480 dynamic
set output 'ncv4-allgather.svg'
set datafile separator ','
set logscale xy
set key top left
set grid
set title "ncv4-allgather: measured vs predicted" noenhanced
set xlabel 'size (bytes)'
set ylabel 'time (us)'
plot 'ncv4-allgather.csv' skip 1 using 1:2 with linespoints title 'measured', \
     'ncv4-allgather.csv' skip 1 using 1:3 with linespoints title 'predicted (fastest protocol)'
