# viz/09_cross_attention.gp: the 2017 decoder's cross-attention map, target tokens (queries) down,
# source tokens (keys, from the encoder) across (lesson 9).
#   gnuplot viz/09_cross_attention.gp                 reads out/lesson9/cross_attention.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/09_cross_attention.gp
#   gnuplot -e "dumb=1" viz/09_cross_attention.gp     draws in the terminal instead
if (!exists("datafile")) datafile = 'out/lesson9/cross_attention.dat'
if (!exists("outfile")) outfile = 'out/lesson9/cross_attention.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 600,520; set output outfile }
set title "Cross-attention (head 0): decoder queries, encoder keys"
set xlabel "source token (encoder output)"
set ylabel "target token (decoder)"
set yrange [] reverse
set xtics noenhanced
set ytics noenhanced
set cbrange [0:1]
set palette defined (0 "white", 0.5 "light-green", 1 "dark-green")
plot datafile matrix rowheaders columnheaders with image notitle, \
     '' matrix rowheaders columnheaders using 1:2:(sprintf("%.2f", $3)) with labels notitle
