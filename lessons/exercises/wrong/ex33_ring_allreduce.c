// Wrong attempt at exercise 33 (make test builds it and requires the checker to reject it).
// The mistake: the chunk
// index runs forward with the step, (p + s) mod P, as if the data moved against the ring. Every
// process sends, but the chunk it passes on is not the one it just added to, so the running sums
// never chain: some chunk misses processes' parts, another counts them twice.
// The checker says: a chunk added twice, or one never passed on
#include "concepts.h"

int ex_ring_chunk(int phase, int p, int s, int P) {
    if (P < 2) return -1;
    return phase == 0 ? (p + s) % P : (p + 1 + s) % P;
}
