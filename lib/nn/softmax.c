// softmax.c: row-wise softmax with temperature, stable for any finite logits.
//
// Special rows (documented here and in docs/core.md):
//   - every entry -inf (fully masked): the row becomes all zeros (see softmax.h).
//   - one or more +inf entries: softmax is the limit as those logits grow together, so the
//     +inf entries share the probability equally and every other entry gets 0. (The textbook
//     formula would compute inf - inf = NaN; PyTorch returns NaN for such rows.)
//   - any NaN entry: the NaN propagates to the whole row (nothing sensible can be returned).
// The normaliser is summed in double; each exp is computed in float with expf.
// After tw_simd_init with a SIMD level, an ordinary row at temperature 1 goes to the selected
// vectorised kernel instead (lib/simd/simd.h; the special rows above are still decided here).
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include "nn/softmax.h"
#include "simd/simd.h"

// The rows no exponential can describe: a NaN anywhere (all NaN), fully masked (all -inf: zeros),
// +inf entries (they share the mass). Returns 1 if the row was one of them (y written); else 0
// with the row's maximum in *max.
static int special_row(float *y, const float *x, int n, float *max_out) {
    // The maximum over the non-NaN entries, in eight independent lanes (NaN never compares
    // greater), then over the lanes: the same value as one pass in order (only a tie of +0 and -0
    // could pick the other zero, and x - max, exp(x - max) and the checks below do not tell them
    // apart), in an eighth of the dependent steps.
    float lane[8] = { -INFINITY, -INFINITY, -INFINITY, -INFINITY,
                      -INFINITY, -INFINITY, -INFINITY, -INFINITY };
    int has_nan = 0, head = 0;
    for (; head + 8 <= n; head += 8)
        for (int i = 0; i < 8; i++) {
            const float v = x[head + i];
            has_nan |= v != v;
            lane[i] = v > lane[i] ? v : lane[i];
        }
    for (; head < n; head++) {
        has_nan |= x[head] != x[head];
        lane[0] = x[head] > lane[0] ? x[head] : lane[0];
    }
    float max = lane[0];
    for (int i = 1; i < 8; i++) max = lane[i] > max ? lane[i] : max;
    if (has_nan) {
        for (int j = 0; j < n; j++) y[j] = NAN;
        return 1;
    }
    if (max == -INFINITY) {                       // fully masked row
        for (int j = 0; j < n; j++) y[j] = 0.0f;
        return 1;
    }
    if (max == INFINITY) {                        // the +inf entries take all the mass
        int n_inf = 0;
        for (int j = 0; j < n; j++) n_inf += (x[j] == INFINITY);
        for (int j = 0; j < n; j++) y[j] = x[j] == INFINITY ? 1.0f / (float)n_inf : 0.0f;
        return 1;
    }
    *max_out = max;
    return 0;
}

// The reference loop: exp((x - max) / temperature), summed in double, then normalised.
static void exp_normalize(float *y, const float *x, int n, float max, float temperature) {
    // Subtracting the max makes every exponent <= 0, so expf never overflows and the largest
    // term is exactly 1 (the sum is >= 1, never 0).
    double sum = 0.0;
    for (int j = 0; j < n; j++) {
        float e = expf((x[j] - max) / temperature);
        y[j] = e;                                 // y may alias x: x[j] is not read again
        sum += e;
    }
    for (int j = 0; j < n; j++) y[j] = (float)(y[j] / sum);
}

void tw_softmax_row(float *y, const float *x, int n) {
    float max;
    if (special_row(y, x, n, &max)) return;
    exp_normalize(y, x, n, max, 1.0f);
}

static void softmax_row(float *y, const float *x, int n, float temperature) {
    float max;
    if (special_row(y, x, n, &max)) return;
    if (temperature == 1.0f && tw_simd_softmax_row(y, x, n)) return;   // declines at naive
    exp_normalize(y, x, n, max, temperature);
}

void tw_softmax_rows(float *y, const float *x, int rows, int cols, float temperature) {
    assert(temperature > 0.0f);
    for (int r = 0; r < rows; r++)
        softmax_row(y + (size_t)r * cols, x + (size_t)r * cols, cols, temperature);
}

// ---- backward ----
// The Jacobian of softmax is diag(y) - y y^T, so J^T dy = y * (dy - <y, dy>): one dot per row.
void tw_softmax_rows_backward(float *dx, const float *dy, const float *y, int rows, int cols,
                              float temperature) {
    assert(temperature > 0.0f);
    for (int r = 0; r < rows; r++) {
        const float *y_r = y + (size_t)r * cols, *dy_r = dy + (size_t)r * cols;
        float *dx_r = dx + (size_t)r * cols;
        double dot = 0.0;
        for (int j = 0; j < cols; j++) dot += (double)y_r[j] * dy_r[j];
        for (int j = 0; j < cols; j++)
            dx_r[j] += (float)(y_r[j] * (dy_r[j] - dot) / temperature);
    }
}
