// Wrong attempt at exercise 7 (make test builds it and requires the checker to reject it).
// The mistake: the other convention's pairing, (i, i + D/2) (Hugging Face's rotate_half), where
// this exercise (llama2.c, Meta's checkpoints) pairs adjacent values (2i, 2i+1).
// The checker says: halves pairing
#include <math.h>
#include "concepts.h"

void ex_rope_adjacent(float *x, int D, int pos, float theta) {
    for (int i = 0; i < D / 2; i++) {
        double angle = pos * pow(theta, -2.0 * i / D);
        float c = (float)cos(angle), s = (float)sin(angle);
        float a = x[i], b = x[i + D / 2];
        x[i]         = a * c - b * s;
        x[i + D / 2] = a * s + b * c;
    }
}
