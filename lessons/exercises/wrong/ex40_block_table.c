// Wrong attempt at exercise 40 (make test builds it and requires the checker to reject it).
// The mistake: block and row swapped (pos % B taken as the block).
// The checker says: block and row swapped
#include "concepts.h"

int ex_block_row(const int *table, int B, int pos) {
    return table[pos % B] * B + pos / B;
}
