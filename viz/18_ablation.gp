# viz/18_ablation.gp: how much worse stories260K predicts a story when one attention head is
# switched off: layers down, heads across, the loss change in nats (lesson 18).
#   gnuplot viz/18_ablation.gp                       reads out/lesson18/ablation.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; prevl=3; prevh=6" viz/18_ablation.gp
#   gnuplot -e "dumb=1" viz/18_ablation.gp           draws in the terminal instead
# The file is a labelled matrix: first line the head labels, then one line per layer.
# prevl, prevh (optional): lesson 11's previous-token head, outlined in the picture.
if (!exists("datafile")) datafile = 'out/lesson18/ablation.dat'
if (!exists("outfile")) outfile = 'out/lesson18/ablation.png'
if (exists("dumb")) { set terminal dumb size 110,30 } else { set terminal pngcairo size 860,520; set output outfile }
set title "stories260K: loss change (nats) when one head is switched off" noenhanced
set xlabel "head"
set ylabel "layer"
set yrange [] reverse
set xtics noenhanced
set ytics noenhanced
set cblabel "loss change (nats)"
# A diverging scale centred on 0: red where switching the head off hurts, blue where it helps.
stats datafile matrix rowheaders columnheaders using 3 nooutput
m = abs(STATS_max) > abs(STATS_min) ? abs(STATS_max) : abs(STATS_min)
set cbrange [-m:m]
set palette defined (-1 "#2166ac", 0 "white", 1 "#b2182b")
if (exists("prevl") && exists("prevh")) {
    set object 1 rectangle from prevh-0.5, prevl-0.5 to prevh+0.5, prevl+0.5 front fillstyle empty border rgb "blue" linewidth 3
    set label 1 "lesson 11's previous-token head" at prevh, prevl+0.62 center front textcolor rgb "blue" font ",9"
}
plot datafile matrix rowheaders columnheaders using 1:2:3 with image notitle, \
     '' matrix rowheaders columnheaders using 1:2:(sprintf("%+.3f", $3)) with labels font ",9" notitle
