# viz/05_rope_freqs.gp: RoPE wavelengths per pair, base 10000 against base 1e6 (lesson 5).
#   gnuplot viz/05_rope_freqs.gp                      reads out/lesson5/rope_freqs.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/05_rope_freqs.gp
#   gnuplot -e "dumb=1" viz/05_rope_freqs.gp          draws in the terminal instead
# Columns: pair freq_base1e4 freq_base1e6 wavelength_base1e4 wavelength_base1e6
if (!exists("datafile")) datafile = 'out/lesson5/rope_freqs.dat'
if (!exists("outfile")) outfile = 'out/lesson5/rope_freqs.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 800,500; set output outfile }
set title "RoPE, head size 128: how many positions before pair i repeats"
set xlabel "pair i (dimensions 2i, 2i+1)"
set ylabel "wavelength 2*pi / frequency (positions, log scale)"
set logscale y
set format y "10^{%T}"
set key top left
set grid
plot datafile using 1:4 with linespoints pt 7 ps 0.6 title "base 10000 (Llama 2)", \
     '' using 1:5 with linespoints pt 5 ps 0.6 title "base 1e6 (Qwen3)"
