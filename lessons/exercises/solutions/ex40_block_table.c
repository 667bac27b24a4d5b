// Exercise 40, a worked answer: logical block pos / B through the table, row pos % B inside it.
#include "concepts.h"

int ex_block_row(const int *table, int B, int pos) {
    return table[pos / B] * B + pos % B;
}
