# viz/06_temperature.gp: softmax([2, 1, 0.1] / tau) against the temperature tau (lesson 6).
#   gnuplot viz/06_temperature.gp                     reads out/lesson6/temperature.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/06_temperature.gp
#   gnuplot -e "dumb=1" viz/06_temperature.gp         draws in the terminal instead
# Columns: tau p_2 p_1 p_0.1 entropy_bits
if (!exists("datafile")) datafile = 'out/lesson6/temperature.dat'
if (!exists("outfile")) outfile = 'out/lesson6/temperature.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 800,480; set output outfile }
set title "Temperature: softmax([2, 1, 0.1] / tau)"
set xlabel "temperature tau"
set ylabel "probability"
set y2label "entropy (bits)"
set yrange [0:1]
set y2range [0:1.6]
set ytics nomirror
set y2tics
set key at graph 0.97, graph 0.7
set xrange [0:3.1]
set arrow from 0.5, graph 0 to 0.5, graph 1 nohead dt 2
set arrow from 2, graph 0 to 2, graph 1 nohead dt 2
set arrow from 1, graph 0 to 1, graph 1 nohead dt 3
plot datafile using 1:2 with lines lw 2 title "p(score 2)", \
     '' using 1:3 with lines lw 2 title "p(score 1)", \
     '' using 1:4 with lines lw 2 title "p(score 0.1)", \
     '' using 1:5 axes x1y2 with lines dt 4 lw 2 title "entropy (right axis)"
