// dump.h: every intermediate tensor of a model's forward pass, written as .npy files into a
// folder, one file per tensor of the tables in model.h and block.h (see docs/real-model.md):
//   tokens.npy, embed.npy, L{l}.<name>.npy for each layer l and each tensor of tw_block_tensors
//   the model has (neither working rows nor norm statistics), final_norm.npy, logits.npy, plus
//   manifest.tsv (name, shape, meaning: the table's) and tokens.txt.
#ifndef TW_DUMP_H
#define TW_DUMP_H
#include <stddef.h>
#include "core/status.h"
#include "nn/model.h"

// 1 if a table row is a dumped tensor: not working rows, not norm statistics.
int tw_dump_includes(const tw_tensor_info *t);
// How many tensors a dump of m holds (tokens.npy not counted).
int tw_model_dump_count(const tw_model *m);

// Runs m over tokens (T) and writes the dump into the folder dir. token_strings (T) label the
// positions in tokens.txt, one per line, escaped (\n, \t, \\, \xHH); NULL for none. use_cache 1:
// the tokens go through the KV cache one at a time, as in generation, and each step's rows are
// assembled into the (T, ...) tensors (scores get -inf and pattern 0 for keys not yet seen);
// 0: one pass over all T tokens. Everything is written into a temporary folder beside dir that is
// renamed to dir at the end, so a failure leaves no partial dump. dir must not exist or be an
// empty folder. On failure err (if not NULL) receives one line naming the folder or file.
tw_status tw_model_dump(const char *dir, const tw_model *m, const int *tokens, int T,
                        const char *const *token_strings, int use_cache, char *err, size_t err_len);

#endif
