# viz/14_schedule.gp: the learning rate of every step of lesson 14's two AdamW runs: linear
# warm-up over 10 steps, then half a cosine down to a tenth of the peak (tw_lr_schedule).
#   gnuplot viz/14_schedule.gp                         reads out/lesson14/losses.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/14_schedule.gp
#   gnuplot -e "dumb=1" viz/14_schedule.gp             draws in the terminal instead
# Columns: step adamw_1e-2 sgd_0.5 adamw_1e-1 lr_1e-2 lr_1e-1 gnorm_1e-2 gnorm_1e-1
if (!exists("datafile")) datafile = 'out/lesson14/losses.dat'
if (!exists("outfile")) outfile = 'out/lesson14/schedule.png'
if (exists("dumb")) { set terminal dumb size 110,30 } else { set terminal pngcairo size 900,420; set output outfile }
set title "Learning rate per step: warm-up, then cosine decay to lr / 10"
set xlabel "step"
set ylabel "learning rate"
set grid
set key top right
set yrange [0:*]
set arrow from 11, graph 0 to 11, graph 1 nohead dt 3 lc rgb "#888888"
set label "end of warm-up (step 11: the first at the full rate)" at 12, graph 0.95
plot datafile using 1:6 with lines lw 2 lc rgb "#ee6677" title "peak lr 1e-1", \
     '' using 1:5 with lines lw 2 lc rgb "#4477aa" title "peak lr 1e-2"
