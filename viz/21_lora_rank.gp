# viz/21_lora_rank.gp: lesson 21's LoRA rank against the error left after fitting a change of rank 2.
#   gnuplot viz/21_lora_rank.gp                          reads out/lesson21/lora_rank.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/21_lora_rank.gp
# Columns: r mse_start mse_after
if (!exists("datafile")) datafile = 'out/lesson21/lora_rank.dat'
if (!exists("outfile")) outfile = 'out/lesson21/lora_rank.png'
set terminal pngcairo size 900,450
set output outfile
set title "LoRA on a frozen 32x32 W: fitting a change of rank 2"
set xlabel "adapter rank r"
set ylabel "mean squared error"
set logscale xy 2
set logscale y 10
set format y "%.0e"
set xtics (1, 2, 4, 8)
set xrange [0.8:10]
set key bottom left noenhanced
set yrange [*:1e2]
plot datafile using 1:2 with linespoints lw 2 pt 5 title "before training (B = 0)", \
     '' using 1:3 with linespoints lw 2 pt 7 title "after training A and B"
