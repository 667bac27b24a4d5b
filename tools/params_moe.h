// params_moe.h: the part of ./params (tools/params.c) that prints mixture-of-experts configs
// (lib/formats/hf_moe.h): mixtral, qwen3_moe, deepseek_v3.
#ifndef PARAMS_MOE_H
#define PARAMS_MOE_H
#include "formats/json.h"

// Prints the breakdown of the config in root (read from path) and returns the exit status:
// 0, or 1 with one line on stderr if the config is bad. context: tokens for the KV-cache lines,
// or -1 for max_position_embeddings.
int params_moe_print(const char *path, const tw_json *root, long long context);

#endif
