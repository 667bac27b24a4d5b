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
plot datafile matrix rowheaders columnheaders with image notitle
