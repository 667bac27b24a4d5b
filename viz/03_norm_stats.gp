# viz/03_norm_stats.gp: per-row mean and standard deviation before and after LayerNorm / RMSNorm
# (lesson 3).
#   gnuplot viz/03_norm_stats.gp                      reads out/lesson3/norm_stats.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/03_norm_stats.gp
#   gnuplot -e "dumb=1" viz/03_norm_stats.gp          draws in the terminal instead
# Columns: row mean_in std_in rms_in mean_ln std_ln rms_ln mean_rms std_rms rms_rms
if (!exists("datafile")) datafile = 'out/lesson3/norm_stats.dat'
if (!exists("outfile")) outfile = 'out/lesson3/norm_stats.png'
if (exists("dumb")) { set terminal dumb size 120,30 } else { set terminal pngcairo size 1000,420; set output outfile }
set multiplot layout 1,2 title "Each row (token) before and after normalisation"
set xlabel "row"
set xtics 1
# One legend, in the left panel's empty top-left corner (no point there: rows 0-2 stay below 4);
# in the right panel a legend covered row 3's input point.
set key top left
set title "mean of the row"
plot datafile using 1:2 with linespoints pt 7 title "input", \
     '' using 1:5 with linespoints pt 5 title "LayerNorm", \
     '' using 1:8 with linespoints pt 9 title "RMSNorm"
set title "standard deviation of the row (log scale)"
set logscale y
set yrange [0.05:20]
unset key
plot datafile using 1:3 with linespoints pt 7 title "input", \
     '' using 1:6 with linespoints pt 5 title "LayerNorm", \
     '' using 1:9 with linespoints pt 9 title "RMSNorm"
unset multiplot
