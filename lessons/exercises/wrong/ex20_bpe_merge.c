// Wrong attempt at exercise 20 (make test builds it and requires the checker to reject it).
// The mistake: merging from the right (it makes the in-place shifting easy), so "a a a" with the
// pair (a, a) gives "a aa" instead of "aa a".
// The checker says: leftmost first
#include <string.h>
#include "concepts.h"

int ex_bpe_merge(int *ids, int n, int a, int b, int ab) {
    for (int i = n - 2; i >= 0; i--)
        if (i + 1 < n && ids[i] == a && ids[i + 1] == b) {
            ids[i] = ab;
            memmove(ids + i + 1, ids + i + 2, (size_t)(n - i - 2) * sizeof *ids);
            n--;
            i--;   // the id before the merge cannot start an occurrence that overlaps it
        }
    return n;
}
