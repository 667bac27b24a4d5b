# viz/25_loss_by_position.gp: a student trained at T0 = 16 positions, run over windows of 128:
# loss by position, plain RoPE and each scaling, and YaRN after a short fine-tune (lesson 25).
#   gnuplot viz/25_loss_by_position.gp                     reads out/lesson25/loss_by_position.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/25_loss_by_position.gp
#   gnuplot -e "dumb=1" viz/25_loss_by_position.gp         draws in the terminal instead
# Columns: position none linear ntk yarn yarn_tuned
if (!exists("datafile")) datafile = 'out/lesson25/loss_by_position.dat'
if (!exists("outfile")) outfile = 'out/lesson25/loss_by_position.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 860,520; set output outfile }
set title "Trained at 16 positions, run over 128 (8x): loss by position against plain RoPE's\n(the same windows, bands of 8 positions; below 0 = better than plain RoPE)"
set xlabel "position in the window"
set ylabel "loss - plain RoPE's loss (nats)"
set key below horizontal maxcols 3
set grid
set xrange [0:128]
set xtics 16
set arrow from 16, graph 0 to 16, graph 1 nohead dt 2
set label "trained context" at 17, graph 0.95
set yrange [-0.35:0.35]
plot datafile using 1:($2-$2) with lines lw 2 lc rgb "black" title "plain RoPE (0)", \
     '' using 1:($3-$2) with linespoints lw 2 pt 5 lc rgb "#1b9e77" title "linear (interpolation)", \
     '' using 1:($4-$2) with linespoints lw 2 pt 9 lc rgb "#377eb8" title "NTK-aware", \
     '' using 1:($5-$2) with linespoints lw 2 pt 11 lc rgb "#d95f02" title "YaRN", \
     '' using 1:($6-$2) with linespoints lw 3 pt 13 lc rgb "#7570b3" title "YaRN, fine-tuned 40 steps at 64"
