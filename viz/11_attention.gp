# viz/11_attention.gp: one attention head of stories260K on real text, tokens on both axes
# (lesson 11).
#   gnuplot viz/11_attention.gp                       reads out/lesson11/attn_prev.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; maptitle='...'" viz/11_attention.gp
#   gnuplot -e "dumb=1" viz/11_attention.gp           draws in the terminal instead
# The file is a labelled matrix: first line the key tokens, then one line per query token.
if (!exists("datafile")) datafile = 'out/lesson11/attn_prev.dat'
if (!exists("outfile")) outfile = 'out/lesson11/attn_prev.png'
if (!exists("maptitle")) maptitle = 'stories260K attention weights'
if (exists("dumb")) { set terminal dumb size 120,50 } else { set terminal pngcairo size 820,760; set output outfile }
set title maptitle noenhanced
set xlabel "key token (attended to)"
set ylabel "query token (attending)"
set yrange [] reverse
set xtics rotate by 60 right noenhanced font ",9"
set ytics noenhanced font ",9"
set cbrange [0:1]
set palette defined (0 "white", 0.3 "orange", 1 "dark-red")
# Masked cells (a key after its query, column > row) are not weights at all: they are drawn grey
# and labelled "-", so they cannot be mistaken for a weight that is really 0.
set object 1 rectangle from graph 0,0 to graph 1,1 behind fillcolor rgb "#c8c8c8" fillstyle solid noborder
plot datafile matrix rowheaders columnheaders using 1:2:($1 > $2 ? NaN : $3) with image notitle
