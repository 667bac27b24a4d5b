# viz/long_context.gp: perplexity by position at 4x the trained context, plain RoPE and each
# scaling (make long-context writes the data).
#   gnuplot viz/long_context.gp                     reads out/long_context/long_context.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/long_context.gp
#   gnuplot -e "dumb=1" viz/long_context.gp         draws in the terminal instead
# Columns: position none linear ntk yarn
if (!exists("datafile")) datafile = 'out/long_context/long_context.dat'
if (!exists("outfile")) outfile = 'out/long_context/long_context.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 800,480; set output outfile }
set title "A model trained at 64 positions, run over 256: perplexity by position"
set xlabel "position in the window"
set ylabel "perplexity (log scale)"
set logscale y
set yrange [5:80]
set ytics (5, 7, 10, 15, 20, 30, 50, 80)
set key top left
set grid
set arrow from 64, graph 0 to 64, graph 1 nohead dt 2
set label "trained context (64)" at 67, graph 0.06
plot datafile using 1:2 with linespoints lw 2 title "plain RoPE", \
     '' using 1:3 with linespoints lw 2 title "linear (position interpolation)", \
     '' using 1:4 with linespoints lw 2 title "NTK-aware", \
     '' using 1:5 with linespoints lw 2 title "YaRN"
