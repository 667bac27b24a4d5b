# viz/19_zero_memory.gp: training memory per GPU for Qwen3-8B (lesson 19): plain data parallelism,
# ZeRO-1, ZeRO-2 and ZeRO-3/FSDP, mixed-precision AdamW (16 bytes a parameter), 1 to 1024 GPUs.
#   gnuplot viz/19_zero_memory.gp                      reads out/lesson19/zero_memory.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/19_zero_memory.gp
#   gnuplot -e "dumb=1" viz/19_zero_memory.gp          draws in the terminal instead
# Columns: gpus dp_GB zero1_GB zero2_GB zero3_GB
if (!exists("datafile")) datafile = 'out/lesson19/zero_memory.dat'
if (!exists("outfile")) outfile = 'out/lesson19/zero_memory.png'
if (exists("dumb")) { set terminal dumb size 120,32 } else { set terminal pngcairo size 1000,560; set output outfile }
set title "Qwen3-8B training state per GPU (weights, gradients, AdamW; no activations)"
set logscale xy 2
set xrange [1:1024]
set yrange [0.1:300]
set logscale y 10
set xlabel "GPUs (N)"
set ylabel "GB per GPU"
set grid
set key bottom left box opaque
set arrow from 1,80 to 1024,80 nohead dashtype 2 lc rgb "gray40"
set label "80 GB (one GPU)" at 200,65 tc rgb "gray40"
plot datafile using 1:2 with linespoints lw 2 title "data parallel: 16 bytes/param", \
     '' using 1:3 with linespoints lw 2 title "ZeRO-1: 4 + 12/N", \
     '' using 1:4 with linespoints lw 2 title "ZeRO-2: 2 + 14/N", \
     '' using 1:5 with linespoints lw 2 title "ZeRO-3 / FSDP: 16/N"
