# viz/15_rounding_error.gp: lesson 15's histogram of int8 rounding errors, in steps of each group.
#   gnuplot viz/15_rounding_error.gp                      reads out/lesson15/rounding_error.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/15_rounding_error.gp
# Columns: error_in_steps count flat_expectation
if (!exists("datafile")) datafile = 'out/lesson15/rounding_error.dat'
if (!exists("outfile")) outfile = 'out/lesson15/rounding_error.png'
set terminal pngcairo size 900,450
set output outfile
set title "int8 rounding error (w - q s) / s, groups of 32: uniform in [-1/2, 1/2]; the spike at 0 is the group maxima"
set xlabel "error, in steps s of its group"
set ylabel "weights"
set xrange [-0.55:0.55]
set yrange [0:*]
set style fill solid 0.6 border -1
set boxwidth 0.022
set key noenhanced
plot datafile using 1:2 with boxes title "measured", \
     '' using 1:3 with lines lw 2 title "uniform (maxima aside)"
