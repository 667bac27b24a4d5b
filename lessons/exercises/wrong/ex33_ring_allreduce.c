// Exercise 33, a classic wrong attempt (make test checks that the checker rejects it): the chunk
// index runs forward with the step, (p + s) mod P, as if the data moved against the ring. Every
// process sends, but the chunk it passes on is not the one it just added to, so the running sums
// never chain: some chunk misses processes' parts, another counts them twice.
#include "concepts.h"

int ex_ring_chunk(int phase, int p, int s, int P) {
    if (P < 2) return -1;
    return phase == 0 ? (p + s) % P : (p + 1 + s) % P;
}
