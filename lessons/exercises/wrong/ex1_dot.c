// Wrong attempt at exercise 1 (make test builds it and requires the checker to reject it).
// The mistake: eight partial sums, but the tail is forgotten: n that is not a multiple of 8
// loses its last n % 8 products (size 1 gives 0).
// The checker says: FAIL at size 1
#include "exercise.h"

float ex_dot(const float *a, const float *b, int n) {
    float s[8] = { 0 };
    for (int i = 0; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) s[j] += a[i + j] * b[i + j];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}
