// model_test_common.h: what the suites of the model's variants share (tests/test_moe_model.c,
// tests/test_mla_model.c, and for tiled attention tests/test_attn_flash.c and
// tests/test_sdpa_tiled_simd.c): a golden training case trained here and through ./train and
// compared with PyTorch, the dump into a fresh folder, the NaN check's first tensor, and
// ./train's one-line answer to a flag it refuses. tests/test_train_cli.c and
// tests/test_train_dist.c compare the weights ./train wrote with the same function. What each
// suite asserts beyond these stays in the suite.
//
// A case is data/golden/<group>/<name>/, written by tests/golden/gen_train.py (group train),
// gen_train_moe.py (train_moe) or gen_train_mla.py (train_mla): init.bin, tokens.bin,
// hparams.npy (MT_H_* order; aux_coef only in train_moe and train_mla), losses.npy, gnorms.npy
// and lrs.npy (one per step), and final/<parameter name>.npy (the weights after the last step).
// Paths are relative to the top of the checkout (make test runs from there).
#ifndef MODEL_TEST_COMMON_H
#define MODEL_TEST_COMMON_H
#include <stddef.h>
#include "testutil.h"
#include "testrun.h"
#include "train/step.h"

// hparams.npy's entries, in the generators' order.
enum { MT_H_B, MT_H_T, MT_H_STEPS, MT_H_LR, MT_H_WARMUP, MT_H_MIN_LR, MT_H_WD, MT_H_BETA1, MT_H_BETA2,
       MT_H_EPS, MT_H_CLIP, MT_H_AUX, MT_N_H };

// Loads the case's init.bin into m; fails the test with the loader's message if it cannot.
void mt_load_init(tw_model *m, const char *group, const char *name);

// One golden case trained in the test, and what its comparison with PyTorch allows beyond the
// fixed tolerances (mt_train_matches_golden).
typedef struct {
    const char *group, *name;          // data/golden/<group>/<name>/
    int with_aux;                      // hparams.npy ends with aux_coef (train_moe, train_mla)
    const char *level;                 // the SIMD level to train at (naive again after), or NULL
    double gnorm_first, gnorm_later;   // the gradient norm, relative: at step 1, after it
    int check_lr;                      // compare the learning rate too (relative 1e-6 + 1e-12)
    double weight_atol;                // final weights: weight_atol + relative 1e-4
} mt_golden_run;

// Trains m (the case's starting model, loaded) as tests/test_train.c does (--no-shuffle batches,
// AdamW, clipping, the schedule) with the case's hparams (with_aux: block.moe_aux_coef set to its
// aux_coef, a training choice not in the file) for its steps (at most 16), then compares with
// PyTorch, float32 against float64: at every step the loss (the cross-entropy) within relative
// 1e-5, the gradient norm and the learning rate as run says; then the final weights
// (mt_weights_match_golden). st receives each step's stats; returns the number of steps.
// TW_VERBOSE=1 prints every step's measured differences.
int mt_train_matches_golden(tw_train_stats st[16], tw_model *m, const mt_golden_run *run);

// Every parameter of m against the case's final/<name>.npy: within atol + relative 1e-4. label
// names the run in a failure (the case's name, and its level when it has one); steps is for the
// message. TW_VERBOSE=1 prints the largest difference.
void mt_weights_match_golden(const tw_model *m, const char *group, const char *name, const char *label,
                             int steps, double atol);

// The tiled attention's golden cases (group train: llama, qwen3, stories260K, whose starting
// model is data/models/stories260K.bin): loads the case with block.attn.tiled set, trains it at
// level (NULL: as it is) and compares with PyTorch. Loss and gradient norm within relative 1e-5,
// final weights within 3e-4 + relative 1e-4; the reasons are in model_test_common.c.
void mt_ten_flash_steps_match_pytorch(const char *name, const char *level);

// The gradient of m's loss on one sequence (tokens tok, targets tg, T of them: batch 1) by
// tw_model_forward_backward, for a comparison with finite differences: g holds it, and s is a
// state of T positions for evaluating the loss again at perturbed weights. Free with
// mt_model_grad_free (m is not freed).
typedef struct {
    tw_model_grads g;
    tw_model_state s, ds;
} mt_model_grad;
void mt_model_grad_init(mt_model_grad *fb, const tw_model *m, const int *tok, const int *tg, int T);
void mt_model_grad_free(mt_model_grad *fb);

// Runs ./train on the case with the llama cases' hyperparameters of both generators (--batch 3
// --seq 12 --steps 10 --lr 5e-3 --warmup 0 --min-lr 5e-4 --weight-decay 0.1 --beta1 0.9
// --beta2 0.99 --eps 1e-8 --clip 1, --no-shuffle, --curve none) and extra, writing --out out.
// Asserts exit 0, that the ten printed losses are PyTorch's within relative 1e-5 (./train prints
// 6 significant digits, 5e-6 relative), and that the file was written in the TWMX format.
// Returns the run for more checks of its output; free it with tt_run_free. Compare the weights it
// wrote with mt_weights_match_golden (atol 1e-4: as the ten steps in the test).
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
