# viz/28_pool.gp: the blocks of a paged KV cache and which sequence owns each (lesson 28).
#   gnuplot viz/28_pool.gp                      reads out/lesson28/pool.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/28_pool.gp
#   gnuplot -e "dumb=1" viz/28_pool.gp          draws in the terminal instead
# Columns: block owner (-1: free)
if (!exists("datafile")) datafile = 'out/lesson28/pool.dat'
if (!exists("outfile")) outfile = 'out/lesson28/pool.png'
if (exists("dumb")) { set terminal dumb size 100,20 } else { set terminal pngcairo size 900,280; set output outfile }
set title "The pool: owner of each block after sequence 1 ended and sequence 3 arrived"
set xlabel "pool block"
unset ytics
set yrange [0:1]
set xrange [-0.5:11.5]
set xtics 1
set style fill solid 0.9 border lc rgb "black"
set boxwidth 0.95
set cbrange [-1.5:3.5]
unset colorbox
set palette defined (-1.5 "white", -0.5 "white", -0.5 "#1f77b4", 0.5 "#1f77b4", 0.5 "#ff7f0e", 1.5 "#ff7f0e", 1.5 "#2ca02c", 2.5 "#2ca02c", 2.5 "#d62728", 3.5 "#d62728")
plot datafile using 1:(1):2 with boxes fillcolor palette notitle, \
     '' using 1:(0.5):(($2 < 0) ? "free" : sprintf("seq %d", $2)) with labels notitle
