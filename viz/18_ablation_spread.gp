# viz/18_ablation_spread.gp: the loss change when one head of stories260K is zeroed or replaced by
# its mean output, averaged over several sampled stories, with one standard deviation as a bar
# (lesson 18).
#   gnuplot viz/18_ablation_spread.gp                  reads out/lesson18/ablation_spread.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/18_ablation_spread.gp
# Columns: index "label" zero_mean zero_sd mean_mean mean_sd (nats)
if (!exists("datafile")) datafile = 'out/lesson18/ablation_spread.dat'
if (!exists("outfile")) outfile = 'out/lesson18/ablation_spread.png'
set terminal pngcairo size 1100,480
set output outfile
set title "stories260K: loss change when one head is switched off (mean over stories, bar: 1 sd)" noenhanced
set xlabel "head (layer.head)"
set ylabel "loss change (nats)"
set xtics rotate by 60 right noenhanced font ",8"
set grid ytics
set key outside top center horizontal noenhanced   # above the plot: inside, it covered the tallest bars
set xzeroaxis lt -1
set xrange [-1:40]
plot datafile using ($1-0.17):3:4:xtic(2) with yerrorbars pt 7 ps 0.7 lc rgb "#b2182b" title "zeroed", \
     '' using ($1+0.17):5:6 with yerrorbars pt 5 ps 0.7 lc rgb "#2166ac" title "mean-ablated"
