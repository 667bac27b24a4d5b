# viz/14_spike.gp: lesson 14's run at a learning rate ten times too high: the batch loss and the
# gradient norm before clipping, step by step, beside the good run's; the clipping threshold 1.
#   gnuplot viz/14_spike.gp                            reads out/lesson14/losses.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/14_spike.gp
#   gnuplot -e "dumb=1" viz/14_spike.gp                draws in the terminal instead
# Columns: step adamw_1e-2 sgd_0.5 adamw_1e-1 lr_1e-2 lr_1e-1 gnorm_1e-2 gnorm_1e-1
if (!exists("datafile")) datafile = 'out/lesson14/losses.dat'
if (!exists("outfile")) outfile = 'out/lesson14/spike.png'
if (exists("dumb")) { set terminal dumb size 110,40 } else { set terminal pngcairo size 900,700; set output outfile }
set multiplot layout 2,1 title "AdamW at lr 1e-1 (too high) against lr 1e-2"
set grid
set key top right
set xlabel ""
set ylabel "batch loss (nats per token)"
plot datafile using 1:4 with lines lw 2 lc rgb "#ee6677" title "lr 1e-1", \
     '' using 1:2 with lines lw 1 lc rgb "#4477aa" title "lr 1e-2"
set xlabel "step"
set ylabel "gradient norm (before clipping)"
set logscale y
plot datafile using 1:8 with lines lw 2 lc rgb "#ee6677" title "lr 1e-1", \
     '' using 1:7 with lines lw 1 lc rgb "#4477aa" title "lr 1e-2", \
     1 with lines dt 2 lc rgb "#888888" title "clipping threshold"
unset multiplot
