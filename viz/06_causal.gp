# viz/06_causal.gp: causal softmax weights (lesson 6): query position down, key position across.
#   gnuplot viz/06_causal.gp                          reads out/lesson6/causal_weights.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/06_causal.gp
#   gnuplot -e "dumb=1" viz/06_causal.gp              draws in the terminal instead
if (!exists("datafile")) datafile = 'out/lesson6/causal_weights.dat'
if (!exists("outfile")) outfile = 'out/lesson6/causal_weights.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 600,520; set output outfile }
set title "Causal softmax: weights above the diagonal are exactly 0"
set xlabel "key position s"
set ylabel "query position t"
set yrange [] reverse
set cbrange [0:1]
set palette defined (0 "white", 1 "dark-blue")
plot datafile matrix rowheaders columnheaders with image notitle, \
     '' matrix rowheaders columnheaders using 1:2:(sprintf("%.2f", $3)):($3 > 0.6 ? 0xffffff : 0x000000) with labels tc rgb variable notitle
