# viz/02_embeddings.gp: heatmap of an embedded sentence (lesson 2), one row per token.
#   gnuplot viz/02_embeddings.gp                      reads out/lesson2/embedded.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/02_embeddings.gp
#   gnuplot -e "dumb=1" viz/02_embeddings.gp          draws in the terminal instead
if (!exists("datafile")) datafile = 'out/lesson2/embedded.dat'
if (!exists("outfile")) outfile = 'out/lesson2/embedded.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 640,480; set output outfile }
set title "Embedded sentence: row t = table[ids[t]]"
set xlabel "embedding dimension c"
set ylabel "token"
set yrange [] reverse
set palette defined (-2 "blue", 0 "white", 2 "red")
set cbrange [-2.5:2.5]
set cblabel "value"
plot datafile matrix rowheaders columnheaders with image notitle
