# viz/attention_map.gp: one attention head of a real model (stories260K) as a heatmap, rows =
# query tokens, columns = key tokens, colour = softmax weight. The data file is written by
# `make attention-map PROMPT="..." LAYER=l HEAD=h` (./generate --dump, then attention_matrix).
#   gnuplot -e "datafile='out/attention/L0_H0.dat'; outfile='out/attention/L0_H0.png'" viz/attention_map.gp
#   gnuplot -e "dumb=1" viz/attention_map.gp          draws in the terminal instead
if (!exists("datafile")) datafile = 'out/attention/L0_H0.dat'
if (!exists("outfile")) outfile = 'out/attention/L0_H0.png'
if (!exists("plottitle")) plottitle = 'attention map'
if (exists("dumb")) { set terminal dumb size 100,40 } else { set terminal pngcairo size 900,800 font ",10"; set output outfile }
set title plottitle . " (row: query token, column: key token; above the diagonal is masked)"
set xlabel "key (attended-to) token"
set ylabel "query token"
set yrange [] reverse
set xtics rotate by -60 left
set palette defined (0 "white", 0.25 "#fdd49e", 0.5 "#fc8d59", 1 "#7f0000")
set cbrange [0:1]
set cblabel "attention weight"
set size ratio -1
# Masked cells (a key after its query, column > row) are not weights at all: they are drawn grey
# and labelled "-", so they cannot be mistaken for a weight that is really 0.
set object 1 rectangle from graph 0,0 to graph 1,1 behind fillcolor rgb "#c8c8c8" fillstyle solid noborder
plot datafile matrix rowheaders columnheaders using 1:2:($1 > $2 ? NaN : $3) with image notitle
