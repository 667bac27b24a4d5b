// Exercise 7, a worked answer: each pair is a 2-D vector turned by its own angle.
#include <math.h>
#include "concepts.h"

void ex_rope_adjacent(float *x, int D, int pos, float theta) {
    for (int i = 0; i < D / 2; i++) {
        double angle = pos * pow(theta, -2.0 * i / D);
        float c = (float)cos(angle), s = (float)sin(angle);
        float a = x[2 * i], b = x[2 * i + 1];
        x[2 * i]     = a * c - b * s;
        x[2 * i + 1] = a * s + b * c;
    }
}
