// Exercise 20: one BPE merge, the step that BPE training repeats (lesson 16).
// Training counts the adjacent pairs, takes the most frequent one (a, b), gives "ab" a new id and
// replaces every occurrence of the pair by that id. Scan from the left: in "a a a" the pair (a, a)
// occurs at positions 0 and 1, but they share the middle "a": only the first can merge, giving
// "aa a". Work in place and return the new length.
// Check it with:  make exercise20
#include "concepts.h"

int ex_bpe_merge(int *ids, int n, int a, int b, int ab) {
    // TODO: merge every (a, b) into ab, leftmost first, and return the new length. Delete these lines.
    (void)ids; (void)a; (void)b; (void)ab;
    ex_not_implemented();
    return n;
}
