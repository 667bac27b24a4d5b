// read_stream.c: see read_stream.h.
#include "read_stream.h"

const char *bench_read_way_name(int way) {
    return way == BENCH_READ_DOT ? "dot of two halves" : "matvec, one stream";
}

float bench_read_once(const tw_kernels *k, int way, const float *b, long n, float *y) {
    float s = 0.0f;
    if (way == BENCH_READ_DOT) {
        const long half = n / 2;
        for (long i = 0; i < half; i += 1L << 24) {   // chunks: the kernel takes an int length
            const long len = half - i < (1L << 24) ? half - i : (1L << 24);
            s += k->dot(b + i, b + half + i, (int)len);
        }
        return s;
    }
    // rows of BENCH_READ_K floats, BENCH_READ_K rows a call; x = the first row of b (read once
    // more: 4 KiB, from L1)
    const long rows = n / BENCH_READ_K;
    for (long r = 0; r < rows; r += BENCH_READ_K) {
        const int nr = (int)(rows - r < BENCH_READ_K ? rows - r : BENCH_READ_K);
        k->matvec(y, b + r * BENCH_READ_K, b, nr, BENCH_READ_K);
        s += y[0] + y[nr - 1];
    }
    return s;
}

long bench_read_floats(int way, long n) {
    return way == BENCH_READ_DOT ? n / 2 * 2 : n / BENCH_READ_K * BENCH_READ_K;
}
