# viz/24_memory.gp: attention's bytes in a model state against T, materialised and tiled (lesson 24).
#   gnuplot viz/24_memory.gp                     reads out/lesson24/memory.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/24_memory.gp
#   gnuplot -e "dumb=1" viz/24_memory.gp         draws in the terminal instead
# Columns: T full_fwd_MB tiled_fwd_MB full_train_MB tiled_train_MB
if (!exists("datafile")) datafile = 'out/lesson24/memory.dat'
if (!exists("outfile")) outfile = 'out/lesson24/memory.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 800,540; set output outfile }
set title "Attention's memory in a stories260K-shaped state (5 layers, 8 heads)"
set xlabel "sequence length T"
set ylabel "MB (log scale)"
set logscale xy 2
set format y "%g"
set xtics (256, 512, 1024, 2048, 4096, 8192)
set key below horizontal maxcols 2
set xrange [200:11000]
set grid
plot datafile using 1:4 with linespoints lw 2 title "materialised, training (grows like T^2)", \
     '' using 1:2 with linespoints lw 2 title "materialised, forward", \
     '' using 1:5 with linespoints lw 2 title "tiled, training (grows like T)", \
     '' using 1:3 with linespoints lw 2 title "tiled, forward"
