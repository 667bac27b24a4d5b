# viz/14_loss.gp: a training run's loss curve (./train --curve, lesson 14): the training loss of
# every step, the validation loss where it was measured, and the teacher's floor.
#   gnuplot viz/14_loss.gp                                 reads out/train/model.bin.loss.dat
#   (./train writes its curve beside --out: OUT.loss.dat, and the picture OUT.loss.dat.png)
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/14_loss.gp
#   gnuplot -e "dumb=1" viz/14_loss.gp                     draws in the terminal instead
# Columns: step train_loss val_loss teacher_floor (nan where not measured)
if (!exists("datafile")) datafile = 'out/train/model.bin.loss.dat'
if (!exists("outfile")) outfile = 'out/train/model.bin.loss.dat.png'
if (exists("dumb")) { set terminal dumb size 120,32 } else { set terminal pngcairo size 900,500; set output outfile }
set title "Training loss (nats per token)"
set xlabel "step"
set ylabel "cross-entropy"
set key top right
set grid
set datafile missing "nan"
plot datafile using 1:2 with lines lw 1 lc rgb "#4477aa" title "train (one batch)", \
     '' using 1:3 with linespoints pt 7 ps 0.8 lc rgb "#ee6677" title "validation", \
     '' using 1:4 with lines dt 2 lw 2 lc rgb "#228833" title "teacher's floor"
