# viz/18_patching.gp: activation patching (lesson 18): the share of the logit gap between a clean
# and a corrupted prompt that copying one activation from the clean run restores: 1 all of it,
# 0 none. Used for the residual stream (stream x position) and for single heads (layer x head).
#   gnuplot viz/18_patching.gp                       reads out/lesson18/patching_positions.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; maptitle='...'; xlab='...'; ylab='...'" viz/18_patching.gp
# The file is a labelled matrix: first line the column labels, then one line per row.
if (!exists("datafile")) datafile = 'out/lesson18/patching_positions.dat'
if (!exists("outfile")) outfile = 'out/lesson18/patching_positions.png'
if (!exists("maptitle")) maptitle = 'share of the logit gap restored by patching'
if (!exists("xlab")) xlab = ''
if (!exists("ylab")) ylab = ''
set terminal pngcairo size 1000,520
set output outfile
set title maptitle noenhanced
set xlabel xlab noenhanced
set ylabel ylab noenhanced
set yrange [] reverse
set xtics rotate by 45 right noenhanced
set ytics noenhanced
set cblabel "share of the gap restored"
# A diverging scale centred on 0, fixed at -1..1 so that 1 (all of the gap) is the full colour.
set cbrange [-1:1]
set palette defined (-1 "#2166ac", 0 "white", 1 "#b2182b")
plot datafile matrix rowheaders columnheaders using 1:2:3 with image notitle, \
     '' matrix rowheaders columnheaders using 1:2:(sprintf("%.2f", $3)) with labels font ",8" notitle
