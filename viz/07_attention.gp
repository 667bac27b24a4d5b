# viz/07_attention.gp: an attention map with the tokens on both axes (lessons 7 and 11).
#   gnuplot viz/07_attention.gp                       reads out/lesson7/attention.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/07_attention.gp
#   gnuplot -e "dumb=1" viz/07_attention.gp           draws in the terminal instead
# The file is a labelled matrix: first line the key tokens, then one line per query token.
if (!exists("datafile")) datafile = 'out/lesson7/attention.dat'
if (!exists("outfile")) outfile = 'out/lesson7/attention.png'
if (!exists("maptitle")) maptitle = "Attention weights: each row (query) sums to 1"
if (exists("dumb")) { set terminal dumb size 100,40 } else { set terminal pngcairo size 640,560; set output outfile }
set title maptitle noenhanced
set xlabel "key (attended to)"
set ylabel "query (attending)"
set yrange [] reverse
set xtics rotate by 45 right noenhanced
set ytics noenhanced
set cbrange [0:1]
set palette defined (0 "white", 0.5 "orange", 1 "dark-red")
# Masked cells (a key after its query, column > row) are not weights at all: they are drawn grey
# and labelled "-", so they cannot be mistaken for a weight that is really 0.
set object 1 rectangle from graph 0,0 to graph 1,1 behind fillcolor rgb "#c8c8c8" fillstyle solid noborder
plot datafile matrix rowheaders columnheaders using 1:2:($1 > $2 ? NaN : $3) with image notitle, \
     '' matrix rowheaders columnheaders using 1:2:($1 > $2 ? "-" : sprintf("%.2f", $3)):($3 > 0.6 ? 0xffffff : 0x000000) with labels tc rgb variable font ",9" notitle
