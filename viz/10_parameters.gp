# viz/10_parameters.gp: where each model's parameters live (lesson 10), as stacked bars in percent
# of the model: embeddings, attention, MLP, norms, untied output head.
#   gnuplot viz/10_parameters.gp                      reads out/lesson10/breakdown.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/10_parameters.gp
#   gnuplot -e "dumb=1" viz/10_parameters.gp          draws in the terminal instead
# Columns: "model" total_M embed_M attn_M mlp_M norms_M head_M
if (!exists("datafile")) datafile = 'out/lesson10/breakdown.dat'
if (!exists("outfile")) outfile = 'out/lesson10/breakdown.png'
if (exists("dumb")) { set terminal dumb size 120,32 } else { set terminal pngcairo size 1000,500; set output outfile }
set title "Where the parameters live (percent of each model's total)"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.7
set yrange [0:100]
set ylabel "% of parameters"
# Rotated labels end at their tick (right-justified), so each names the bar above it.
set xtics rotate by 25 right noenhanced
set key outside right
plot datafile using (100*$3/$2):xtic(1) title "embeddings", \
     '' using (100*$4/$2) title "attention", \
     '' using (100*$5/$2) title "MLP", \
     '' using (100*$6/$2) title "norms", \
     '' using (100*$7/$2) title "lm head (untied)"
