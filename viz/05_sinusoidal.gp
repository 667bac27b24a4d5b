# viz/05_sinusoidal.gp: the 2017 sinusoidal positional-encoding table (lesson 5).
#   gnuplot viz/05_sinusoidal.gp                      reads out/lesson5/sinusoidal.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/05_sinusoidal.gp
#   gnuplot -e "dumb=1" viz/05_sinusoidal.gp          draws in the terminal instead
if (!exists("datafile")) datafile = 'out/lesson5/sinusoidal.dat'
if (!exists("outfile")) outfile = 'out/lesson5/sinusoidal.png'
if (exists("dumb")) { set terminal dumb size 100,40 } else { set terminal pngcairo size 800,600; set output outfile }
set title "Sinusoidal positional encoding: fast waves on the left, slow on the right"
set xlabel "dimension (even: sin, odd: cos)"
set ylabel "position"
set yrange [] reverse
set cbrange [-1:1]
set palette defined (-1 "blue", 0 "white", 1 "red")
set xtics 8 out
set auto fix
set ytics 8 out
plot datafile using 2:1:3 with image notitle
