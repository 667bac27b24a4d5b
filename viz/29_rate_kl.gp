# viz/29_rate_kl.gp: DPO and GRPO on stories260K, the rule "the story contains dog": the rule's rate
# and the KL to the reference before each training step (lesson 29).
#   gnuplot viz/29_rate_kl.gp                     reads out/lesson29/rate_kl.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/29_rate_kl.gp
#   gnuplot -e "dumb=1" viz/29_rate_kl.gp         draws in the terminal instead
# Columns: step dpo_rate dpo_kl grpo_rate grpo_kl
if (!exists("datafile")) datafile = 'out/lesson29/rate_kl.dat'
if (!exists("outfile")) outfile = 'out/lesson29/rate_kl.png'
if (exists("dumb")) { set terminal dumb size 100,40 } else { set terminal pngcairo size 860,720; set output outfile }
set multiplot layout 2,1 title "stories260K, \"a story about dog\": DPO on sampled pairs, GRPO on the reward \"contains dog\"\n(16 completions from the same seed before each step)"
set grid
set key top left
set xlabel "training step"
set ylabel "share of stories containing \"dog\""
set yrange [0:1.05]
plot datafile using 1:2 with linespoints lw 2 pt 7 lc rgb "#1b9e77" title "DPO", \
     '' using 1:4 with linespoints lw 2 pt 5 lc rgb "#d95f02" title "GRPO"
set ylabel "KL(pi || pi_{ref}), nats per token"
set yrange [0:*]
plot datafile using 1:3 with linespoints lw 2 pt 7 lc rgb "#1b9e77" title "DPO", \
     '' using 1:5 with linespoints lw 2 pt 5 lc rgb "#d95f02" title "GRPO"
unset multiplot
