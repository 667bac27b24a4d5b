# viz/04_kv_cache.gp: KV-cache size per token of a Qwen3-8B-shaped model with 32, 8 or 1 kv heads
# (lesson 4).
#   gnuplot viz/04_kv_cache.gp                        reads out/lesson4/kv_cache.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/04_kv_cache.gp
#   gnuplot -e "dumb=1" viz/04_kv_cache.gp            draws in the terminal instead
# Columns: "variant" kv_heads KiB_per_token GiB_at_32768_tokens
if (!exists("datafile")) datafile = 'out/lesson4/kv_cache.dat'
if (!exists("outfile")) outfile = 'out/lesson4/kv_cache.png'
if (exists("dumb")) { set terminal dumb size 100,30 } else { set terminal pngcairo size 720,480; set output outfile }
set title "KV cache per token, 36 layers x head size 128, bf16"
set ylabel "KiB per token"
set style fill solid 0.6 border -1
set boxwidth 0.6
set yrange [0:700]
set grid ytics
plot datafile using 0:3:xtic(1) with boxes notitle, \
     '' using 0:3:(sprintf("%.0f KiB\n%.2f GiB at 32k", $3, $4)) with labels offset 0,1.5 notitle
