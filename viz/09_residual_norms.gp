# viz/09_residual_norms.gp: size of the residual stream after each layer, pre-norm vs post-norm
# (lesson 9).
#   gnuplot viz/09_residual_norms.gp                  reads out/lesson9/residual_norms.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/09_residual_norms.gp
#   gnuplot -e "dumb=1" viz/09_residual_norms.gp      draws in the terminal instead
# Columns: layer prenorm_gpt2 postnorm_2017
if (!exists("datafile")) datafile = 'out/lesson9/residual_norms.dat'
if (!exists("outfile")) outfile = 'out/lesson9/residual_norms.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 800,480; set output outfile }
set title "Residual stream: mean length of a token's vector after each layer"
set xlabel "layer (0 = embeddings)"
set ylabel "mean row norm"
set xtics 1
set grid
set key top left
set logscale y
plot datafile using 1:2 with linespoints pt 7 lw 2 title "pre-norm (GPT-2 style)", \
     '' using 1:3 with linespoints pt 5 lw 2 title "post-norm (2017 style)"
