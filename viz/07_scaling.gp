# viz/07_scaling.gp: why attention divides by sqrt(d_k) (lesson 7): the variance of q.k grows like
# d_k, and the unscaled softmax turns nearly one-hot.
#   gnuplot viz/07_scaling.gp                         reads out/lesson7/scaling.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/07_scaling.gp
#   gnuplot -e "dumb=1" viz/07_scaling.gp             draws in the terminal instead
# Columns: d_k var_qk var_over_dk frac_abs_over_20 max_weight_scaled max_weight_raw
if (!exists("datafile")) datafile = 'out/lesson7/scaling.dat'
if (!exists("outfile")) outfile = 'out/lesson7/scaling.png'
if (exists("dumb")) { set terminal dumb size 120,30 } else { set terminal pngcairo size 1100,440; set output outfile }
set multiplot layout 1,2
set logscale x 2
set xlabel "d_k (head size)"
set grid
set key top left Left reverse
set title "variance of q.k for N(0,1) entries (log-log)"
set ylabel "variance"
set logscale y 2
plot datafile using 1:2 with linespoints pt 7 title "measured var(q.k)", \
     '' using 1:1 with lines dt 2 title "d_k", \
     '' using 1:3 with linespoints pt 5 title "var(q.k / sqrt(d_k))"
unset logscale y
set title "softmax over 16 keys: average largest weight"
set ylabel "largest softmax weight (mean over trials)"
set yrange [0:1.05]
set key inside right center Left reverse
plot datafile using 1:6 with linespoints pt 7 title "without / sqrt(d_k)", \
     '' using 1:5 with linespoints pt 5 title "with / sqrt(d_k)", \
     1.0/16 with lines dt 2 title "uniform (1/16)"
unset multiplot
