# viz/22_temperature.gp: lesson 22's mean entropy of stories260K's next-token distribution against
# the temperature tau.
#   gnuplot viz/22_temperature.gp                          reads out/lesson22/temperature.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/22_temperature.gp
# Columns: tau mean_entropy_bits
if (!exists("datafile")) datafile = 'out/lesson22/temperature.dat'
if (!exists("outfile")) outfile = 'out/lesson22/temperature.png'
set terminal pngcairo size 900,450
set output outfile
set title "Temperature softens the teacher: bits per position of softmax(z / tau)"
set xlabel "temperature tau"
set ylabel "mean entropy (bits)"
set logscale x 2
set xtics (0.5, 1, 2, 4, 8)
set xrange [0.4:10]
set yrange [0:10]
set key bottom right noenhanced
plot datafile using 1:2 with linespoints lw 2 pt 7 title "stories260K on a short story", \
     9 with lines dt 2 lw 1 title "uniform over 512 tokens (9 bits)"
