# viz/28_batch_speed.gp: aggregate decode tokens/s against the number of sequences decoded together
# (lesson 28), with the decode's own sums and on packed panels, beside N times one sequence's speed
# (what reading the weights alone would allow).
#   gnuplot viz/28_batch_speed.gp                      reads out/lesson28/batch_speed.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/28_batch_speed.gp
#   gnuplot -e "dumb=1" viz/28_batch_speed.gp          draws in the terminal instead
# Columns: N tokens_per_s N_times_one packed_tokens_per_s
if (!exists("datafile")) datafile = 'out/lesson28/batch_speed.dat'
if (!exists("outfile")) outfile = 'out/lesson28/batch_speed.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 820,520; set output outfile }
set title "Batched decoding: tokens per second against batch size (this run's timings)"
set xlabel "sequences decoded together (N)"
set ylabel "tokens per second, all sequences"
set logscale xy 2
set xtics (1, 2, 4, 8, 16, 32, 64)
set xrange [0.8:80]
set format y "%.0f"
set key top left
set grid
plot datafile using 1:3 with lines dt 2 lw 2 title "N x one sequence (weight reads only)", \
     '' using 1:2 with linespoints pt 7 lw 2 title "measured: the decode's sums (bit for bit alone)", \
     '' using 1:4 with linespoints pt 5 lw 2 title "measured: packed panels (another order)"
