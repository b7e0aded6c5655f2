# gnuplot script written by collsim validate
set terminal svg size 720,480 dynamic
set output 'oci-1node-to-2node.svg'
set datafile separator ','
set logscale xy
set key top left
set grid
set title "oci-1node-to-2node: measured vs predicted" noenhanced
set xlabel 'size (bytes)'
set ylabel 'time (us)'
plot 'oci-1node-to-2node.csv' skip 1 using 1:2 with linespoints title 'measured', \
     'oci-1node-to-2node.csv' skip 1 using 1:3 with linespoints title 'predicted (fastest protocol)'
