// Exercise 33, a worked answer. Reduce-scatter: process p starts with its own chunk p; at step s
// it passes on the chunk it received (and added to) at step s - 1, which p - 1 sent: chunk
// (p - s) mod P. After P - 1 steps it has added into chunk (p - (P - 1)) = (p + 1) mod P last:
// that one is finished here. All-gather: it first sends that finished chunk (p + 1), then at
// each step the one it just received: chunk (p + 1 - s) mod P.
#include "concepts.h"

int ex_ring_chunk(int phase, int p, int s, int P) {
    if (P < 2) return -1;
    const int c = phase == 0 ? p - s : p + 1 - s;
    return ((c % P) + P) % P;
}
