# viz/14_losses.gp: three training runs of the same student on the same batches (lesson 14):
# AdamW at lr 1e-2, plain gradient descent at lr 0.5, and AdamW at lr 1e-1 (too high), with
# ln V (a model that knows nothing) and the teacher's floor (no student can go below it).
#   gnuplot viz/14_losses.gp                           reads out/lesson14/losses.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; floor=1.27" viz/14_losses.gp
#   gnuplot -e "dumb=1" viz/14_losses.gp               draws in the terminal instead
# Columns: step adamw_1e-2 sgd_0.5 adamw_1e-1 lr_1e-2 lr_1e-1 gnorm_1e-2 gnorm_1e-1
# floor: the teacher's floor in nats per token (the lesson passes it; the .dat's comment has it).
if (!exists("datafile")) datafile = 'out/lesson14/losses.dat'
if (!exists("outfile")) outfile = 'out/lesson14/losses.png'
if (exists("dumb")) { set terminal dumb size 110,30 } else { set terminal pngcairo size 900,520; set output outfile }
set title "A student learning the teacher's stories: loss per step"
set xlabel "step"
set ylabel "batch loss (nats per token)"
set grid
set key top right
set yrange [0:*]
if (exists("floor")) {
  plot datafile using 1:2 with lines lw 2 lc rgb "#4477aa" title "AdamW, lr 1e-2", \
       '' using 1:3 with lines lw 2 lc rgb "#ccbb44" title "gradient descent, lr 0.5", \
       '' using 1:4 with lines lw 1 lc rgb "#ee6677" title "AdamW, lr 1e-1 (too high)", \
       log(512) with lines dt 2 lc rgb "#888888" title "ln V (knows nothing)", \
       floor with lines dt 2 lw 2 lc rgb "#228833" title sprintf("teacher's floor %.3f", floor)
} else {
  plot datafile using 1:2 with lines lw 2 lc rgb "#4477aa" title "AdamW, lr 1e-2", \
       '' using 1:3 with lines lw 2 lc rgb "#ccbb44" title "gradient descent, lr 0.5", \
       '' using 1:4 with lines lw 1 lc rgb "#ee6677" title "AdamW, lr 1e-1 (too high)", \
       log(512) with lines dt 2 lc rgb "#888888" title "ln V (knows nothing)"
}
