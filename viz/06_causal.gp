# viz/06_causal.gp: causal softmax weights (lesson 6): query position down, key position across.
#   gnuplot viz/06_causal.gp                          reads out/lesson6/causal_weights.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/06_causal.gp
#   gnuplot -e "dumb=1" viz/06_causal.gp              draws in the terminal instead
if (!exists("datafile")) datafile = 'out/lesson6/causal_weights.dat'
if (!exists("outfile")) outfile = 'out/lesson6/causal_weights.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 600,520; set output outfile }
set title "Causal softmax: grey cells (-) are masked, their weight is exactly 0"
set xlabel "key position s"
set ylabel "query position t"
set yrange [] reverse
set cbrange [0:1]
set palette defined (0 "white", 1 "dark-blue")
# Masked cells (a key after its query, column > row) are not weights at all: they are drawn grey
# and labelled "-", so they cannot be mistaken for a weight that is really 0.
set object 1 rectangle from graph 0,0 to graph 1,1 behind fillcolor rgb "#c8c8c8" fillstyle solid noborder
plot datafile matrix rowheaders columnheaders using 1:2:($1 > $2 ? NaN : $3) with image notitle, \
     '' matrix rowheaders columnheaders using 1:2:($1 > $2 ? "-" : sprintf("%.2f", $3)):($3 > 0.6 ? 0xffffff : 0x000000) with labels tc rgb variable notitle
