// Exercise 33: the ring all-reduce's schedule (lesson 19). P processes in a ring, each sending to
// the next; the data is cut into P chunks. In the reduce-scatter (phase 0), at every step each
// process passes on a running sum that its neighbour adds to: after P - 1 steps each chunk has
// gone round the ring once, collecting every process's part, and one process holds it finished.
// In the all-gather (phase 1) the finished chunks go round once more, overwriting the copies.
// Hint: at step 0 process p sends its own chunk p. What must it send at step 1, given what it
// just received from p - 1? Which chunk has process p finished after phase 0?
// Check it with:  make exercise33
#include "concepts.h"

int ex_ring_chunk(int phase, int p, int s, int P) {
    // TODO: return the chunk (0 .. P-1) process p sends at step s of phase 0 or 1. Delete these lines.
    (void)phase; (void)p; (void)s; (void)P;
    ex_not_implemented();
    return -1;
}
