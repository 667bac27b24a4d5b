// generate.c: text generation with a llama2.c checkpoint (version 0, fp32, or version 2, Q8_0 as
// written by ./quantize or llama2.c's export.py: told apart by the file's magic), on the library's
// own functions.
// Also reads the toolkit's own TWMODEL checkpoints (train/checkpoint.h), which ./train writes for
// the 2017, GPT-2 and Qwen3 styles.
// Takes llama2.c's flags and prints exactly what llama2.c's `run` prints, so the two can be diffed:
//
//   make model generate
//   ./generate data/models/stories260K.bin -z data/models/tok512.bin -t 0 -n 64 -i "Once upon a time"
//
// stdout: the prompt (minus BOS) and the generated text, then a newline. stderr: the seed used and
// the speed. Extras: --dump DIR (every intermediate tensor of the prompt's forward pass),
// --no-cache (recompute the whole prefix at every step), --cache-info (the KV cache's layout and
// size), --simd LEVEL (which kernels run: naive, avx2, avx512, neon or auto, the default; also
// $TW_SIMD; see docs/kernels.md), --check-finite (stop at the first NaN/Inf and name the tensor;
// also TW_CHECK_FINITE=1; see docs/hardening.md). See docs/real-model.md.
#define _POSIX_C_SOURCE 200809L   // clock_gettime
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tw.h"
#include "formats/llama2c.h"
#include "quant/q8model.h"
#include "formats/lora_file.h"
#include "quant/q8_0.h"
#include "train/checkpoint.h"
#include "tokenize/tokenizer.h"
#include "decode/sampler.h"
#include "simd/simd.h"
#include "inspect/check_finite.h"
#include "inspect/dump.h"

static void usage(FILE *f) {
    fprintf(f,
        "usage: ./generate MODEL.bin [options]\n"
        "example: ./generate data/models/stories260K.bin -z data/models/tok512.bin -t 0 -n 256 -i \"Once upon a time\"\n"
        "options (as llama2.c's run):\n"
        "  -t <float>  temperature in [0, inf), default 1.0 (0: greedy argmax)\n"
        "  -p <float>  top-p (nucleus) in [0, 1], default 0.9 (0 or 1: off)\n"
        "  -s <int>    random seed, default 0 = from the time (the seed used is printed to stderr)\n"
        "  -n <int>    positions to run, prompt included, default 256 (0: the model's seq_len)\n"
        "  -i <string> the prompt, default empty\n"
        "  -z <path>   tokenizer file, default tokenizer.bin\n"
        "  -m <mode>   generate (chat is not supported)\n"
        "extras:\n"
        "  --dump DIR    write every intermediate tensor of the prompt's forward pass to DIR (.npy)\n"
        "  --no-cache    no KV cache: recompute the whole prefix at every step\n"
        "  --cache-info  print the KV cache's layout and size to stderr\n"
        "  --simd LEVEL  kernels: naive, avx2, avx512, neon or auto (default auto, or $TW_SIMD)\n"
        "  --lora FILE   LoRA adapters (./train --lora --out) added to the model, unmerged\n"
        "  --check-finite  after every forward pass, stop at the first NaN/Inf and name its tensor\n"
        "                (also TW_CHECK_FINITE=1)\n");
}

// Bad usage: one line naming the flag and the problem, exit 2.
static void die_usage(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "generate: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, " (./generate -h for usage)\n");
    exit(2);
}

typedef struct {
    const char *model, *tokenizer, *prompt, *dump_dir, *lora;
    const char *simd;   // --simd LEVEL, or NULL: $TW_SIMD, else auto
    float temperature, topp;
    long long seed;
    long steps;
    int no_cache, cache_info;
    int check_finite;   // --check-finite or TW_CHECK_FINITE=1
} options;

static float parse_float(const char *flag, const char *s) {
    char *end;
    errno = 0;
    float v = strtof(s, &end);
    if (end == s || *end != '\0' || errno != 0 || isnan(v)) die_usage("%s: '%s' is not a number", flag, s);
    return v;
}

static long long parse_int(const char *flag, const char *s) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0) die_usage("%s: '%s' is not an integer", flag, s);
    return v;
}

static options parse_args(int argc, char **argv) {
    options o = { NULL, "tokenizer.bin", "", NULL, NULL, NULL, 1.0f, 0.9f, 0, 256, 0, 0, 0 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { usage(stdout); exit(0); }
        if (strcmp(a, "--no-cache") == 0) { o.no_cache = 1; continue; }
        if (strcmp(a, "--cache-info") == 0) { o.cache_info = 1; continue; }
        if (strcmp(a, "--check-finite") == 0) { o.check_finite = 1; continue; }
        if (a[0] != '-') {
            if (o.model != NULL) die_usage("unexpected argument '%s' (the model is '%s')", a, o.model);
            o.model = a;
            continue;
        }
        int known = strcmp(a, "--dump") == 0 || strcmp(a, "--simd") == 0 || strcmp(a, "--lora") == 0 ||
                    (strlen(a) == 2 && strchr("tpsnizm", a[1]) != NULL);
        if (!known) die_usage("unknown flag '%s'%s", a, "");
        if (i + 1 >= argc) die_usage("flag '%s' needs a value%s", a, "");
        const char *v = argv[++i];
        if (strcmp(a, "--dump") == 0) { o.dump_dir = v; continue; }
        if (strcmp(a, "--simd") == 0) { o.simd = v; continue; }
        if (strcmp(a, "--lora") == 0) { o.lora = v; continue; }
        switch (a[1]) {
        case 't': o.temperature = parse_float(a, v); break;
        case 'p': o.topp = parse_float(a, v); break;
        case 's': o.seed = parse_int(a, v); break;
        case 'n':
            o.steps = (long)parse_int(a, v);
            if (o.steps < 0) die_usage("-n: %s is negative: use 0 (the model's seq_len) or more%s", v, "");
            break;
        case 'i': o.prompt = v; break;
        case 'z': o.tokenizer = v; break;
        case 'm':
            if (strcmp(v, "generate") != 0) die_usage("-m: mode '%s' is not supported (only 'generate')%s", v, "");
            break;
        }
    }
    if (o.model == NULL) die_usage("no model given: the first argument is the checkpoint, e.g. %s%s",
                                   "data/models/stories260K.bin", "");
    // As llama2.c: a negative temperature means greedy, a top-p outside [0, 1] means 0.9.
    if (o.temperature < 0.0f) o.temperature = 0.0f;
    if (o.topp < 0.0f || o.topp > 1.0f) o.topp = 0.9f;
    const char *cf = getenv("TW_CHECK_FINITE");
    if (cf != NULL && cf[0] != '\0' && strcmp(cf, "0") != 0) o.check_finite = 1;
    return o;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void print_cache_info(const tw_model *m, int S_max, int no_cache) {
    const tw_mha_config *a = &m->cfg.block.attn;
    const int L = m->cfg.n_layer, G = a->n_kv_head, D = a->head_dim;
    const size_t bytes = (size_t)L * tw_kv_cache_bytes(S_max, G, D);
    if (no_cache) {
        fprintf(stderr, "kv cache: none (--no-cache): every step recomputes keys and values of the whole prefix\n");
        return;
    }
    fprintf(stderr, "kv cache: %d layers x {k, v}, each (S_max=%d positions, G=%d kv heads, D=%d) float32, "
            "row p = position p, keys stored after RoPE\n", L, S_max, G, D);
    fprintf(stderr, "kv cache: %d x 2 x %d x %d x %d x 4 bytes = %zu bytes (%.1f KiB); %d query heads share "
            "each kv head\n", L, S_max, G, D, bytes, (double)bytes / 1024.0, a->n_head / G);
}

// Prints a piece as llama2.c does (unprintable single bytes are skipped).
// --check-finite: TW_OK, or TW_ERR_ARG with err naming the first NaN/Inf among the intermediates
// of the forward call that just ran over T rows at positions pos0 ...
static tw_status check_step(const options *o, const tw_model_state *s, const tw_model *m,
                            int T, int pos0, char *err, size_t err_len) {
    if (!o->check_finite) return TW_OK;
    char where[96];
    if (T > 1) snprintf(where, sizeof where, "--check-finite: positions %d..%d", pos0, pos0 + T - 1);
    else snprintf(where, sizeof where, "--check-finite: position %d", pos0);
    return tw_model_check_finite(s, m, T, 0, where, err, err_len);
}

static void print_piece(const char *piece) {
    if (!tw_tokenizer_piece_printable(piece)) return;
    fputs(piece, stdout);
    fflush(stdout);
}

int main(int argc, char **argv) {
    options o = parse_args(argc, argv);
    // The kernels are chosen once, before any forward pass (the dispatch table is then read-only).
    const char *simd_level = tw_simd_init(o.simd);
    if (simd_level == NULL) {
        if (o.simd != NULL) die_usage("--simd: level '%s' is not available here (have: %s, auto)", o.simd, tw_simd_available());
        die_usage("TW_SIMD: level '%s' is not available here (have: %s, auto)", getenv("TW_SIMD"), tw_simd_available());
    }
    char err[512] = "";
    // Everything main allocates, zeroed so that the single exit path below can free it all
    // whichever step failed.
    int rc = 1;
    tw_model m = { 0 };
    tw_lora_set adapters = { 0 };
    tw_tokenizer tok = { 0 };
    tw_model_state s = { 0 };
    tw_sampler sampler = { 0 };
    int *tokens = NULL, *seq = NULL;
    int version = 0;   // 0: fp32; 2: Q8_0, whose Linear layers run in int8 (quant/q8model.h)
    tw_status load = tw_checkpoint_is_ours(o.model)   // ./train's TWMODEL files (train/checkpoint.h)
                   ? tw_checkpoint_load(&m, o.model, err, sizeof err)
                   : tw_llama2c_load_any(&m, &version, o.model, err, sizeof err);
    if (load != TW_OK) {
        fprintf(stderr, "generate: %s\n", err);
        goto done;
    }
    // LoRA adapters run unmerged: each targeted Linear adds its s (x A^T) B^T (nn/lora.h).
    if (o.lora && tw_lora_file_load(&adapters, o.lora, &m.cfg, err, sizeof err) != TW_OK) {
        fprintf(stderr, "generate: --lora %s\n", err);
        goto done;
    }
    if (o.lora && tw_lora_attach(&m, &adapters) != TW_OK) {
        fprintf(stderr, "generate: --lora %s: the adapters do not fit the model\n", o.lora);
        goto done;
    }
    const int V = m.cfg.vocab, seq_len = m.cfg.max_seq;
    int steps = (o.steps == 0 || o.steps > seq_len) ? seq_len : (int)o.steps;

    if (tw_tokenizer_load(&tok, o.tokenizer, V, err, sizeof err) != TW_OK) {
        fprintf(stderr, "generate: %s\n", err);
        goto done;
    }

    // A prompt that cannot fit in seq_len tokens is refused before encoding, whose merge loop is
    // quadratic in the prompt's length (a pasted book would hang): every token stands for at most
    // max_token_length bytes of the text, so BOS + dummy prefix + text needs at least this many.
    size_t prompt_bytes = strlen(o.prompt), min_tokens = 1 + (prompt_bytes + 1 +
                          (size_t)tok.max_token_length - 1) / (size_t)tok.max_token_length;
    if (prompt_bytes > 0 && min_tokens > (size_t)seq_len) {
        fprintf(stderr, "generate: -i: the prompt is %zu bytes, at least %zu tokens, longer than the "
                "model's seq_len of %d\n", prompt_bytes, min_tokens, seq_len);
        goto done;
    }
    // Encode the prompt: BOS, dummy prefix, BPE.
    size_t max_tok = tw_tokenizer_max_tokens(o.prompt);
    tokens = malloc(max_tok * sizeof *tokens);
    int n_prompt = 0;
    if (tokens == NULL || max_tok > (size_t)1 << 30 ||
        tw_tokenizer_encode(&tok, tokens, &n_prompt, (int)max_tok, o.prompt, 1, 0) != TW_OK) {
        fprintf(stderr, "generate: -i: cannot encode the prompt (out of memory)\n");
        goto done;
    }
    if (n_prompt > seq_len) {
        fprintf(stderr, "generate: -i: the prompt is %d tokens (BOS included), longer than the model's "
                "seq_len of %d\n", n_prompt, seq_len);
        goto done;
    }

    if (o.dump_dir != NULL) {
        const char **strings = malloc((size_t)n_prompt * sizeof *strings);
        if (strings == NULL) { fprintf(stderr, "generate: --dump: out of memory\n"); goto done; }
        for (int t = 0; t < n_prompt; t++)
            strings[t] = tokens[t] == TW_TOK_BOS ? "<s>" : tok.vocab[tokens[t]];
        tw_status st = tw_model_dump(o.dump_dir, &m, tokens, n_prompt, strings, !o.no_cache,
                                     err, sizeof err);
        free(strings);
        if (st != TW_OK) { fprintf(stderr, "generate: --dump %s\n", err); goto done; }
        fprintf(stderr, "dump: %d tokens, %d tensors in %s (see %s/manifest.tsv)\n", n_prompt,
                tw_model_dump_count(&m), o.dump_dir, o.dump_dir);
    }

    unsigned long long seed = o.seed > 0 ? (unsigned long long)o.seed : (unsigned long long)time(NULL);
    fprintf(stderr, "seed: %llu (rerun with -s %llu to repeat)\n", seed, seed);
    fprintf(stderr, "simd: %s kernels (--simd naive|avx2|avx512|neon|auto; here: %s)\n", simd_level,
            tw_simd_available());
    if (version == 2)
        fprintf(stderr, "model: llama2.c version 2 (Q8_0: int8 weights in groups of %d, run by the "
                "%s int8 kernels)\n", m.copies->gs, tw_q8_ops_for_simd_level(simd_level)->level);
    else
        fprintf(stderr, "model: llama2.c version 0 (fp32)\n");
    if (o.cache_info) print_cache_info(&m, steps, o.no_cache);

    // Activations: with the cache, room for the prompt in one prefill call; without, for the
    // whole sequence (recomputed every step).
    const int n_pre = n_prompt < steps ? n_prompt : steps;
    seq = malloc((size_t)steps * sizeof *seq);   // every token so far (no-cache mode)
    tw_status st = tw_model_state_init(&s, &m, o.no_cache ? steps : n_pre, o.no_cache ? 0 : steps);
    if (st == TW_OK) st = tw_sampler_init(&sampler, V, o.temperature, o.topp, seed);
    if (st != TW_OK || seq == NULL) {
        fprintf(stderr, "generate: cannot allocate activations for %d positions: %s\n", steps,
                tw_status_str(st != TW_OK ? st : TW_ERR_NOMEM));
        goto done;
    }
    memcpy(seq, tokens, (size_t)n_pre * sizeof *seq);

    double t_start = now_seconds(), t_prefill = 0.0, t_first = 0.0;
    if (!o.no_cache) {   // prefill: every prompt position in one call
        st = tw_model_forward_next(&s, &m, tokens, n_pre, 0);
        if (st == TW_OK) st = check_step(&o, &s, &m, n_pre, 0, err, sizeof err);
        t_prefill = now_seconds() - t_start;
    }
    int token = tokens[0], pos = 0, n_decoded = 0;
    while (st == TW_OK && pos < steps) {
        int next;
        if (pos < n_prompt - 1) {
            next = tokens[pos + 1];   // still inside the prompt: forced
        } else {
            const float *logits;
            if (o.no_cache) {
                st = tw_model_forward_next(&s, &m, seq, pos + 1, 0);
                if (st == TW_OK) st = check_step(&o, &s, &m, pos + 1, 0, err, sizeof err);
                logits = s.logits + (size_t)pos * V;
            } else if (pos < n_pre) {
                logits = s.logits + (size_t)(n_pre - 1) * V;   // from the prefill
            } else {
                st = tw_model_forward_next(&s, &m, &token, 1, pos);
                if (st == TW_OK) st = check_step(&o, &s, &m, 1, pos, err, sizeof err);
                logits = s.logits;
                n_decoded++;
            }
            if (st != TW_OK) break;
            next = tw_sampler_sample(&sampler, logits);
        }
        pos++;
        if (next == TW_TOK_BOS) break;   // as llama2.c: BOS ends the text, EOS is not special
        print_piece(tw_tokenizer_decode(&tok, token, next));
        token = next;
        if (pos < steps) seq[pos] = next;
        if (t_first == 0.0) t_first = now_seconds();
    }
    printf("\n");
    fflush(stdout);
    double t_end = now_seconds();
    if (st != TW_OK) {
        if (err[0]) fprintf(stderr, "generate: %s\n", err);   // from --check-finite
        else fprintf(stderr, "generate: forward pass failed at position %d: %s\n", pos, tw_status_str(st));
        goto done;
    }
    if (pos > 1) {
        if (o.no_cache) {
            fprintf(stderr, "no-cache: %d positions in %.3f s\n", pos, t_end - t_start);
        } else {
            double t_dec = t_end - t_start - t_prefill;
            fprintf(stderr, "prefill: %d tokens in %.3f s (%.1f tok/s); decode: %d tokens in %.3f s (%.1f tok/s)\n",
                    n_pre, t_prefill, t_prefill > 0 ? n_pre / t_prefill : 0.0, n_decoded, t_dec,
                    t_dec > 0 ? n_decoded / t_dec : 0.0);
        }
        // llama2.c's measure: positions after the first, over the time since the first.
        fprintf(stderr, "achieved tok/s: %f\n", t_end > t_first ? (pos - 1) / (t_end - t_first) : 0.0);
    }
    rc = 0;
done:
    tw_sampler_free(&sampler);
    tw_model_state_free(&s);
    free(seq);
    free(tokens);
    tw_tokenizer_free(&tok);
    tw_model_free(&m);
    tw_lora_set_free(&adapters);
    return rc;
}
