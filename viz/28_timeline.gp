# viz/28_timeline.gp: one stream of requests served with static and with continuous batching
# (lesson 28): for each request, the wait (arrival to admission) and the service (admission to its
# last token), in engine steps.
#   gnuplot viz/28_timeline.gp                      reads out/lesson28/timeline.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/28_timeline.gp
#   gnuplot -e "dumb=1" viz/28_timeline.gp          draws in the terminal instead
# Columns: continuous request arrival admitted first last
if (!exists("datafile")) datafile = 'out/lesson28/timeline.dat'
if (!exists("outfile")) outfile = 'out/lesson28/timeline.png'
if (exists("dumb")) { set terminal dumb size 110,40 } else { set terminal pngcairo size 1000,700; set output outfile }
stats datafile using 6 nooutput
set xrange [0:STATS_max + 5]
set multiplot layout 2,1 title "The same 24 requests, 4 slots: waiting (thin) and being served (thick)"
set xlabel "engine step"
set ylabel "request"
set yrange [-1:24]
set grid x
set title "static batching"
plot datafile using (($1 == 0) ? $3 : 1/0):2:($4 - $3):(0) with vectors nohead lw 1 lc rgb "#999999" notitle, \
     '' using (($1 == 0) ? $4 : 1/0):2:($6 - $4 + 1):(0) with vectors nohead lw 5 lc rgb "#1f77b4" notitle
set title "continuous batching"
plot datafile using (($1 == 1) ? $3 : 1/0):2:($4 - $3):(0) with vectors nohead lw 1 lc rgb "#999999" notitle, \
     '' using (($1 == 1) ? $4 : 1/0):2:($6 - $4 + 1):(0) with vectors nohead lw 5 lc rgb "#ff7f0e" notitle
unset multiplot
