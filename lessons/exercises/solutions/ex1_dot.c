// Solution to exercise 1: eight partial sums. They break the chain of dependent adds (eight
// adds can be in flight at once) and, being independent, let the compiler put them in one SIMD
// register. The result differs from the naive loop by rounding only (the checker's bound).
#include "exercise.h"

float ex_dot(const float *a, const float *b, int n) {
    float s[8] = { 0 };
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) s[j] += a[i + j] * b[i + j];
    float sum = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; i < n; i++) sum += a[i] * b[i];
    return sum;
}
