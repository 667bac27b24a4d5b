// Exercise 40, a classic wrong attempt: block and row swapped (pos % B taken as the block).
#include "concepts.h"

int ex_block_row(const int *table, int B, int pos) {
    return table[pos % B] * B + pos / B;
}
