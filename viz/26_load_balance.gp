# viz/26_load_balance.gp: share of each step's tokens routed to each of 4 experts while a k = 1
# MoE layer trains, without (left) and with (right) the load-balancing loss (lesson 26).
#   gnuplot viz/26_load_balance.gp                    reads out/lesson26/load_balance.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/26_load_balance.gp
#   gnuplot -e "dumb=1" viz/26_load_balance.gp        draws in the terminal instead
# Columns: step, no_aux_e0..e3, aux_e0..e3
if (!exists("datafile")) datafile = 'out/lesson26/load_balance.dat'
if (!exists("outfile")) outfile = 'out/lesson26/load_balance.png'
if (exists("dumb")) { set terminal dumb size 120,30 } else { set terminal pngcairo size 1000,420; set output outfile }
set multiplot layout 1,2
set yrange [0:1]
set xlabel "training step"
set ylabel "share of tokens"
set grid
set key top right
set title "without the aux loss"
plot for [e=0:3] datafile using 1:(column(2+e)) with lines lw 2 title sprintf("expert %d", e), \
     0.25 with lines dt 2 lc rgb "gray" title "uniform"
set title "with 3 x the aux loss"
plot for [e=0:3] datafile using 1:(column(6+e)) with lines lw 2 title sprintf("expert %d", e), \
     0.25 with lines dt 2 lc rgb "gray" title "uniform"
unset multiplot
