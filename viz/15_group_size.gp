# viz/15_group_size.gp: lesson 15's int8 error against the group size, without and with one
# outlier per row.
#   gnuplot viz/15_group_size.gp                          reads out/lesson15/group_size.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/15_group_size.gp
# Columns: group_size rms max rms_outlier max_outlier
if (!exists("datafile")) datafile = 'out/lesson15/group_size.dat'
if (!exists("outfile")) outfile = 'out/lesson15/group_size.png'
set terminal pngcairo size 900,450
set output outfile
set title "int8 RMS error against group size (256 = one scale per row)"
set xlabel "group size"
set ylabel "RMS |w - q s|"
# x on a log-2 axis (the group sizes are powers of two); y on a log-10 axis with ticks at 1, 2
# and 5 of each decade, so every label is the value at its tick (ticks at powers of two printed
# with %.0e read 1.22e-4 as "1e-04").
set logscale x 2
set logscale y 10
set xtics (16, 32, 64, 128, 256)
set ytics (5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3)
set format y "%.0e"
set yrange [5e-5:5e-3]
set key top left noenhanced
set xrange [12:340]
plot datafile using 1:2 with linespoints lw 2 pt 7 title "weights ~ N(0, 0.02^2)", \
     '' using 1:4 with linespoints lw 2 pt 5 title "the same, one outlier of 1.0 per row"
