# gnuplot script written by collsim validate
set terminal svg size 720,480 dynamic
set output 'sm02-pcie-4gpu.svg'
set datafile separator ','
set logscale xy
set key top left
set grid
set title "sm02-pcie-4gpu: measured vs predicted" noenhanced
set xlabel 'size (bytes)'
set ylabel 'time (us)'
plot 'sm02-pcie-4gpu.csv' skip 1 using 1:2 with linespoints title 'measured', \
     'sm02-pcie-4gpu.csv' skip 1 using 1:3 with linespoints title 'predicted (fastest protocol)'
