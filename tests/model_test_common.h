// model_test_common.h: what the suites of the model's variants share (tests/test_moe_model.c,
// tests/test_mla_model.c): a golden training case trained here and through ./train and compared
// with PyTorch, the dump into a fresh folder, the NaN check's first tensor, and ./train's one-line
// answer to a flag it refuses. What each suite asserts beyond these stays in the suite.
//
// A case is data/golden/<group>/<name>/, written by tests/golden/gen_train_moe.py (group
// train_moe) or tests/golden/gen_train_mla.py (train_mla): init.bin (TWMX), tokens.bin,
// hparams.npy (MT_H_* order), losses.npy, gnorms.npy and lrs.npy (one per step), and
// final/<parameter name>.npy (the weights after the last step).
// Paths are relative to the top of the checkout (make test runs from there).
#ifndef MODEL_TEST_COMMON_H
#define MODEL_TEST_COMMON_H
#include <stddef.h>
#include "testutil.h"
#include "testrun.h"

// hparams.npy's entries, in the generators' order.
enum { MT_H_B, MT_H_T, MT_H_STEPS, MT_H_LR, MT_H_WARMUP, MT_H_MIN_LR, MT_H_WD, MT_H_BETA1, MT_H_BETA2,
       MT_H_EPS, MT_H_CLIP, MT_H_AUX, MT_N_H };

// Loads the case's init.bin into m; fails the test with the loader's message if it cannot.
void mt_load_init(tw_model *m, const char *group, const char *name);

// The tolerances of the ten-step comparison that differ between cases: the gradient norm's,
// relative to PyTorch's, at step 1 and after it; whether the learning rate is compared too.
typedef struct {
    double gnorm_first, gnorm_later;
    int check_lr;
} mt_step_tols;

// Trains m (the case's init.bin, loaded) as tests/test_train.c does (--no-shuffle batches, AdamW,
// clipping, the schedule) with the case's hparams (block.moe_aux_coef set to its aux_coef: a
// training choice, not in the file) for its steps, then compares with PyTorch, float32 against
// float64: at every step the loss (the cross-entropy) within relative 1e-5, the gradient norm
// within tol, the learning rate (tol->check_lr) within relative 1e-6 + 1e-12 (the same formula in
// float32 and double); then the final weights (mt_weights_match_golden), and that the loss fell.
// TW_VERBOSE=1 prints every step's measured differences.
void mt_train_matches_golden(tw_model *m, const char *group, const char *name, const mt_step_tols *tol);

// Every parameter of m against the case's final/<name>.npy after steps steps: absolute 1e-4 +
// relative 1e-4 (AdamW moves a weight by about lr a step whatever its gradient's size, so
// float32 noise in a near-zero gradient can move it by a fraction of lr; the goldens' lr is
// 5e-3 or 1e-2, so a wrong update still fails). TW_VERBOSE=1 prints the largest difference.
void mt_weights_match_golden(const tw_model *m, const char *group, const char *name, int steps);

// Runs ./train on the case with the llama cases' hyperparameters of both generators (--batch 3
// --seq 12 --steps 10 --lr 5e-3 --warmup 0 --min-lr 5e-4 --weight-decay 0.1 --beta1 0.9
// --beta2 0.99 --eps 1e-8 --clip 1, --no-shuffle, --curve none) and extra, writing --out out.
// Asserts exit 0, that the ten printed losses are PyTorch's within relative 1e-5 (./train prints
// 6 significant digits, 5e-6 relative), and that the file was written in the TWMX format.
// Returns the run for more checks of its output; free it with tt_run_free.
run_result mt_train_cli_matches_golden(const char *group, const char *name, const char *extra,
                                       const char *out);

// Makes a fresh empty folder /tmp/tw_test_<label>_XXXXXX (mkdtemp: a pid-named one can be left
// over from another run that happened to have the same pid, as once under make valgrind, and
// the dump refuses it) and dumps m's forward over tokens (T) into it; dir (dir_len bytes)
// receives its path. Remove it with tt_remove_tree.
void mt_dump_into_fresh_folder(char *dir, size_t dir_len, const char *label, const tw_model *m,
                               const int *tokens, int T);
// Reads the dumped tensor dir/<tensor>.npy into a (tw_npy_read's status; err says why not).
tw_status mt_read_dumped(tw_npy *a, const char *dir, const char *tensor, char *err, size_t err_len);

// The NaN check (inspect/check_finite.h) on m's forward over tokens (T): m is finite; after a NaN
// is planted in element 5 of the parameter param, the check fails and the first tensor it names
// is first (its message starts "<first>[").
void mt_nan_is_first_seen_in(tw_model *m, const int *tokens, int T, const char *param, const char *first);

// ./train --tokens tokens --vocab 65 --steps 1 --curve none <flags>: exit 2, before anything is
// written, with one line on stderr that contains want, and nothing on stdout.
void mt_train_refuses_in_one_line(const char *tokens, const char *flags, const char *want);

#endif
