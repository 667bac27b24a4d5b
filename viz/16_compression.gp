# viz/16_compression.gp: compression (bytes per token) against vocabulary size (lesson 16), on the
# text the BPE vocabulary was trained on and on held-out text of the same kind.
#   gnuplot viz/16_compression.gp                      reads out/lesson16/compression.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/16_compression.gp
#   gnuplot -e "dumb=1" viz/16_compression.gp          draws in the terminal instead
# Columns: V train_bytes_per_token heldout_bytes_per_token
if (!exists("datafile")) datafile = 'out/lesson16/compression.dat'
if (!exists("outfile")) outfile = 'out/lesson16/compression.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 900,520; set output outfile }
set title "BPE: compression against vocabulary size"
set xlabel "vocabulary size V (259 special and byte tokens + characters + merges)"
set ylabel "bytes per token"
set key top left
set grid
plot datafile using 1:2 with linespoints pt 7 title "training text", \
     '' using 1:3 with linespoints pt 5 title "held-out text"
