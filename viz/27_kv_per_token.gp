# viz/27_kv_per_token.gp: KV cache per token in bf16 of Llama-2-7B (MHA), Qwen3-8B (GQA),
# DeepSeek-V3 (MLA) and DeepSeek-V3 if it cached MHA keys and values (lesson 27).
#   gnuplot viz/27_kv_per_token.gp                    reads out/lesson27/kv_per_token.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/27_kv_per_token.gp
#   gnuplot -e "dumb=1" viz/27_kv_per_token.gp        draws in the terminal instead
# Columns: "name" bytes_per_token KiB_per_token
if (!exists("datafile")) datafile = 'out/lesson27/kv_per_token.dat'
if (!exists("outfile")) outfile = 'out/lesson27/kv_per_token.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 960,480; set output outfile }
set title "KV cache per token, all layers, bf16 (log scale)"
set ylabel "KiB per token"
set logscale y
set yrange [10:20000]
set style fill solid 0.6 border -1
set boxwidth 0.6
set grid ytics
plot datafile using 0:3:xtic(1) with boxes notitle, \
     '' using 0:3:(sprintf("%.1f KiB", $3)) with labels offset 0,1 notitle
