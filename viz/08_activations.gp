# viz/08_activations.gp: ReLU, GELU (exact and tanh form) and SiLU on [-4, 4] (lesson 8).
#   gnuplot viz/08_activations.gp                     reads out/lesson8/activations.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/08_activations.gp
#   gnuplot -e "dumb=1" viz/08_activations.gp         draws in the terminal instead
# Columns: x relu gelu gelu_tanh silu
if (!exists("datafile")) datafile = 'out/lesson8/activations.dat'
if (!exists("outfile")) outfile = 'out/lesson8/activations.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 800,520; set output outfile }
set title "Activations: ReLU is sharp at 0, GELU and SiLU are smooth and dip below 0"
set xlabel "x"
set ylabel "act(x)"
set grid
set key top left
set xzeroaxis
set yrange [-0.6:4.1]
plot datafile using 1:2 with lines lw 2 title "ReLU", \
     '' using 1:3 with lines lw 2 title "GELU (exact, erf)", \
     '' using 1:4 with lines lw 2 dt 2 title "GELU (tanh form, GPT-2)", \
     '' using 1:5 with lines lw 2 title "SiLU = x sigmoid(x)"
