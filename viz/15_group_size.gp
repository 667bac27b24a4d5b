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
set logscale xy 2
set xtics (16, 32, 64, 128, 256)
set format y "%.0e"
set key top left noenhanced
set xrange [12:340]
plot datafile using 1:2 with linespoints lw 2 pt 7 title "weights ~ N(0, 0.02^2)", \
     '' using 1:4 with linespoints lw 2 pt 5 title "the same, one outlier of 1.0 per row"
