// fuzz_train_state.c: libFuzzer target for the training-state reader (tw_train_state_load,
// lib/train/checkpoint.c), what ./train --resume reads. The input is a file: the reader must accept
// it or fail with one line. An accepted state must keep the reader's promises (checkpoint.h):
// step, batch and row length in range, every weight and first moment finite, every second moment
// finite and >= 0; then, when its batch is small, one training step runs from it exactly as
// ./train --resume would (trainer, moments, step counter), so inconsistent sizes show up as
// out-of-bounds accesses under ASan.
#define _POSIX_C_SOURCE 200809L   // mkstemp (fuzz_file.h)
#include <math.h>
#include <string.h>
#include "fuzz_file.h"
#include "nn/model.h"
#include "train/step.h"
#include "train/checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_promises(const tw_train_progress *pr, const tw_model *m, const float *am, const float *av) {
    if (pr->step < 0 || pr->step > INT32_MAX || pr->B < 1 || pr->B > TW_TRAIN_STATE_MAX_BATCH ||
        pr->T < 1 || pr->T > m->cfg.max_seq || pr->data_pos < 0 || pr->data_pos / pr->B > pr->step)
        abort();
    for (long i = 0; i < m->n_floats; i++)
        if (!isfinite(m->memory[i]) || !isfinite(am[i]) || !isfinite(av[i]) || av[i] < 0.0f) abort();
}

// One step from the state, as ./train --resume runs it, on a batch of token 0 (always in the
// vocabulary). Only for small shapes: the fuzzer must stay fast and within its memory limit.
static void one_step(const tw_train_progress *pr, tw_model *m, const float *am, const float *av) {
    if (pr->B > 2 || pr->T > 8 || m->n_floats > 100000) return;
    // A state at step INT32_MAX is valid (the reader allows it) but no run can go on from it: the
    // step count of one more step would not fit in an int.
    if (pr->step >= INT32_MAX) return;
    tw_trainer t;
    if (tw_trainer_init(&t, m, pr->T) != TW_OK) return;
    memcpy(t.adam_m, am, (size_t)m->n_floats * sizeof(float));
    memcpy(t.adam_v, av, (size_t)m->n_floats * sizeof(float));
    t.step = pr->step;
    int in[16] = { 0 }, tg[16] = { 0 };
    const tw_train_config c = { pr->B, pr->T, (int)pr->step + 1, 0, 1e-3f, 1e-4f, 0.1f, 0.9f, 0.95f, 1e-8f, 1.0f };
    tw_train_stats st;
    const tw_status s = tw_train_step(&st, &t, m, in, tg, &c);
    if (s != TW_OK && s != TW_ERR_ARG) abort();   // TW_ERR_ARG: a non-finite loss, allowed
    tw_trainer_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write_file(data, size);
    tw_train_progress pr;
    tw_model m;
    float *am, *av;
    char err[512] = "";
    const tw_status st = tw_train_state_load(&pr, &m, &am, &av, path, err, sizeof err);
    if (st == TW_OK) {
        check_promises(&pr, &m, am, av);
        one_step(&pr, &m, am, av);
        free(am);
        free(av);
        tw_model_free(&m);
    } else if (err[0] == '\0' || strchr(err, '\n') || am != NULL || av != NULL) {
        abort();
    }
    return 0;
}
