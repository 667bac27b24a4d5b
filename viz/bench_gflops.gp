# viz/bench_gflops.gp: bar chart of GFLOP/s per matmul rung (naive ... SIMD micro-kernel,
# threads, OpenBLAS), two sizes side by side, from the data 'make bench' (or lesson 12) writes.
# The rungs span two to three orders of magnitude, so the GFLOP/s axis is logarithmic.
# No backquotes outside comment lines: gnuplot runs a backquoted command as soon as it reads the
# line, even inside a string in a branch it never takes (a backquoted make bench here once made
# lesson 12 take 55 s). tests/test_lessons.c fails on such a backquote, or on a system() call
# that mentions make or a benchmark.
#   gnuplot viz/bench_gflops.gp                      reads out/bench/matmul_gflops.dat
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" viz/bench_gflops.gp
#   gnuplot -e "dumb=1" viz/bench_gflops.gp          draws in the terminal instead
# The file's columns: rung name, GFLOP/s at the first size, GFLOP/s at the second (see its header).
if (!exists("datafile")) datafile = 'out/bench/matmul_gflops.dat'
if (!exists("outfile")) outfile = 'out/bench/matmul_gflops.png'
# (No backquotes in a double-quoted string here: gnuplot runs them as a shell command when it
# reads the line, whether or not the branch is taken; 'make bench' in the message below ran the
# whole benchmark every time the chart was drawn, e.g. from lesson 12.)
if (system("test -f '".datafile."' && echo yes || echo no") eq "no") {
    print "viz/bench_gflops.gp: ".datafile." does not exist yet; run: make bench (or ./lesson12)"
    exit
}
if (exists("dumb")) { set terminal dumb size 110,32 } else { set terminal pngcairo size 900,500; set output outfile }
header = system("sed -n 2p '".datafile."'")
set title "Matrix multiply C = A B, float32: GFLOP/s per rung (higher is better)"
set ylabel "GFLOP/s (log scale)"
set logscale y
set yrange [0.1:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by 30 right scale 0   # each label ends under its bars
set grid ytics mytics
set key top left
plot datafile using 2:xtic(1) title word(header, 3), '' using 3 title word(header, 4)
