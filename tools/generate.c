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
#include "train/moe_file.h"
#include "tokenize/tokenizer.h"
#include "decode/sampler.h"
#include "decode/speculative.h"
#include "decode/batch.h"
#include "formats/regular_file.h"
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
        "  --attn KIND   attention: full (default: the (T, S) scores and pattern are kept) or flash\n"
        "                (tiled, online softmax: memory linear in T; nn/sdpa_tiled.h)\n"
        "  --rope-scaling KIND  run past the trained context: none (default), linear, ntk or yarn\n"
        "  --rope-factor F      how many times the trained context (>= 1; default 2); -n may then\n"
        "                       reach F x seq_len (nn/rope_scaling.h)\n"
        "  --rope-original L    the context the model was trained at (default: its seq_len)\n"
        "  --rope-config FILE   the scaling of a Hugging Face config.json's \"rope_scaling\" field\n"
        "                       (instead of --rope-scaling; formats/hf_rope_scaling.h)\n"
        "  --lora FILE   LoRA adapters (./train --lora --out) added to the model, unmerged\n"
        "  --check-finite  after every forward pass, stop at the first NaN/Inf and name its tensor\n"
        "                (also TW_CHECK_FINITE=1)\n"
        "batched decoding (docs/serving.md)\n"
        "  --prompts FILE      one prompt a line, decoded together; prints each completion in order\n"
        "  --packed            with --prompts: the Linear layers on the weights packed once into panels,\n"
        "                      faster, in another order of the same sums (within rounding of decoding\n"
        "                      each prompt alone, not bit for bit; decode/batch_panels.h)\n"
        "speculative decoding (docs/serving.md): a draft proposes, the model checks in one pass\n"
        "  --draft FILE        the draft model (same vocabulary), e.g. a smaller one made by ./train\n"
        "  --draft-layers N    or: the model's own first N layers, read through its final norm and head\n"
        "  --draft-k K         tokens the draft proposes per round, 1..64, default 4\n");
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
    int tokenizer_given;   // -z was on the command line (else the default tokenizer.bin was tried)
    const char *draft;  // --draft FILE, or NULL
    int draft_layers;   // --draft-layers N, or 0
    int draft_k;        // --draft-k K (default 4)
    const char *prompts;   // --prompts FILE, or NULL
    int packed;            // --packed: the batch on packed panels (decode/batch_panels.h)
    int flash;          // --attn flash: tiled attention (nn/sdpa_tiled.h)
    int rope_kind;      // --rope-scaling (tw_rope_scaling_kind)
    float rope_factor;  // --rope-factor
    int rope_original;  // --rope-original, 0: the model's seq_len
    const char *rope_config;   // --rope-config FILE, or NULL
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
    options o = { .tokenizer = "tokenizer.bin", .prompt = "", .temperature = 1.0f, .topp = 0.9f,
                  .steps = 256, .draft_k = 4, .rope_factor = 2.0f };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { usage(stdout); exit(0); }
        if (strcmp(a, "--no-cache") == 0) { o.no_cache = 1; continue; }
        if (strcmp(a, "--cache-info") == 0) { o.cache_info = 1; continue; }
        if (strcmp(a, "--check-finite") == 0) { o.check_finite = 1; continue; }
        if (strcmp(a, "--packed") == 0) { o.packed = 1; continue; }
        if (a[0] != '-') {
            if (o.model != NULL) die_usage("unexpected argument '%s' (the model is '%s')", a, o.model);
            o.model = a;
            continue;
        }
        int known = strcmp(a, "--dump") == 0 || strcmp(a, "--simd") == 0 || strcmp(a, "--lora") == 0 ||
                    strcmp(a, "--draft") == 0 || strcmp(a, "--draft-layers") == 0 ||
                    strcmp(a, "--draft-k") == 0 || strcmp(a, "--prompts") == 0 ||
                    strcmp(a, "--attn") == 0 || strcmp(a, "--rope-scaling") == 0 ||
                    strcmp(a, "--rope-factor") == 0 || strcmp(a, "--rope-original") == 0 || strcmp(a, "--rope-config") == 0 ||
                    (strlen(a) == 2 && strchr("tpsnizm", a[1]) != NULL);
        if (!known) die_usage("unknown flag '%s'%s", a, "");
        if (i + 1 >= argc) die_usage("flag '%s' needs a value%s", a, "");
        const char *v = argv[++i];
        if (strcmp(a, "--dump") == 0) { o.dump_dir = v; continue; }
        if (strcmp(a, "--simd") == 0) { o.simd = v; continue; }
        if (strcmp(a, "--draft") == 0) { o.draft = v; continue; }
        if (strcmp(a, "--prompts") == 0) { o.prompts = v; continue; }
        if (strcmp(a, "--draft-layers") == 0) {
            long long n = parse_int(a, v);
            if (n < 1 || n > 4096) die_usage("--draft-layers: %s is not a layer count (1 or more, at most the model's layers)%s", v, "");
            o.draft_layers = (int)n;
            continue;
        }
        if (strcmp(a, "--draft-k") == 0) {
            long long k = parse_int(a, v);
            if (k < 1 || k > 64) die_usage("--draft-k: %s is outside 1..64 (tokens the draft proposes per round)%s", v, "");
            o.draft_k = (int)k;
            continue;
        }
        if (strcmp(a, "--attn") == 0) {
            if (strcmp(v, "flash") != 0 && strcmp(v, "full") != 0)
                die_usage("--attn: '%s' is not an attention kind: use full or flash%s", v, "");
            o.flash = strcmp(v, "flash") == 0;
            continue;
        }
        if (strcmp(a, "--rope-scaling") == 0) {
            o.rope_kind = tw_rope_scaling_from_name(v);
            if (o.rope_kind < 0)
                die_usage("--rope-scaling: '%s' is not a scaling: use none, linear, ntk or yarn%s", v, "");
            continue;
        }
        if (strcmp(a, "--rope-factor") == 0) {
            o.rope_factor = parse_float(a, v);
            if (!(o.rope_factor >= 1.0f) || !isfinite(o.rope_factor))
                die_usage("--rope-factor: %s is not a factor >= 1%s", v, "");
            continue;
        }
        if (strcmp(a, "--rope-original") == 0) {
            const long long L = parse_int(a, v);
            if (L < 1 || L > TW_LLAMA2C_MAX_SEQ) die_usage("--rope-original: %s is not a context length (1 or more)%s", v, "");
            o.rope_original = (int)L;
            continue;
        }
        if (strcmp(a, "--rope-config") == 0) { o.rope_config = v; continue; }
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
        case 'z': o.tokenizer = v; o.tokenizer_given = 1; break;
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
    if (o.draft != NULL && o.draft_layers > 0)
        die_usage("--draft and --draft-layers both name a draft: pass one of them%s%s", "", "");
    if ((o.draft != NULL || o.draft_layers > 0) && o.no_cache)
        die_usage("--draft needs the KV cache: drop --no-cache%s%s", "", "");
    if (o.prompts != NULL && (o.draft != NULL || o.draft_layers > 0 || o.no_cache || o.dump_dir))
        die_usage("--prompts decodes with the KV cache and no draft: drop %s%s",
                  o.no_cache ? "--no-cache" : o.dump_dir ? "--dump" : "--draft", "");
    if (o.packed && o.prompts == NULL)
        die_usage("--packed is the batch's kernel: add --prompts FILE%s%s", "", "");
    if (o.prompts != NULL && o.prompt[0] != '\0')
        die_usage("-i and --prompts both give prompts: pass one of them%s%s", "", "");
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

// The draft of --draft FILE (loaded into *file) or --draft-layers N (a view of m's first layers,
// in *view), checked against the model; NULL after printing one line if it does not fit.
static const tw_model *load_draft(const options *o, const tw_model *m, int steps, tw_model *file,
                                  tw_model *view) {
    char err[512] = "";
    int version = 0;
    if (!tw_batch_supports(m)) {
        fprintf(stderr, "generate: --draft: speculative decoding runs pre-norm dense models only (the GPT-2, "
                "Llama and Qwen3 styles), and this model %s\n", m->cfg.block.moe_experts
                ? "has mixture-of-experts FFNs" : m->cfg.block.mla_kv_rank
                ? "has latent attention" : "is post-norm (2017 style)");
        return NULL;
    }
    if (o->draft == NULL) {
        if (tw_spec_layer_draft(view, m, o->draft_layers) == TW_OK) return view;
        fprintf(stderr, "generate: --draft-layers: %d is more than the model's %d layers\n",
                o->draft_layers, m->cfg.n_layer);
        return NULL;
    }
    tw_status st = tw_checkpoint_is_ours(o->draft) ? tw_checkpoint_load(file, o->draft, err, sizeof err)
                                                   : tw_llama2c_load_any(file, &version, o->draft, err, sizeof err);
    if (st != TW_OK) {
        fprintf(stderr, "generate: --draft %s\n", err);
        return NULL;
    }
    if (file->cfg.vocab != m->cfg.vocab) {
        fprintf(stderr, "generate: --draft %s: its vocabulary has %d tokens and the model's %d: "
                "a draft must share the model's tokenizer\n", o->draft, file->cfg.vocab, m->cfg.vocab);
        return NULL;
    }
    if (file->cfg.max_seq < steps) {
        fprintf(stderr, "generate: --draft %s: its context holds %d positions, fewer than the %d to "
                "run: pass -n %d or less\n", o->draft, file->cfg.max_seq, steps, file->cfg.max_seq);
        return NULL;
    }
    return file;
}

// Speculative decoding (--draft FILE or --draft-layers N): prints the prompt, then each round's
// tokens as they come, then what the draft saved to stderr. Returns the exit code.
static int generate_speculative(const options *o, const tw_model *m, const tw_model *draft,
                                const tw_tokenizer *tok, tw_sampler *sampler, const int *prompt,
                                int n_prompt, int steps) {
    int rc = 1;
    tw_spec sp = { 0 };
    int *seq = NULL;
    // The prompt is forced: print it (only up to `steps` positions, as the plain loop does).
    int n = n_prompt < steps + 1 ? n_prompt : steps + 1;
    for (int t = 1; t < n; t++) print_piece(tw_tokenizer_decode(tok, prompt[t - 1], prompt[t]));
    seq = malloc((size_t)(steps + 1) * sizeof *seq);
    if (seq == NULL) { fprintf(stderr, "generate: out of memory\n"); goto done; }
    memcpy(seq, prompt, (size_t)n * sizeof *seq);
    if (n <= steps && tw_spec_init(&sp, m, draft, o->draft_k, steps, seq, n) != TW_OK) {
        fprintf(stderr, "generate: cannot allocate the states of the model and its draft for %d positions\n", steps);
        goto done;
    }
    const double t0 = now_seconds();
    int ended = 0;
    while (!ended && n <= steps) {
        const int before = n;
        tw_status st = tw_spec_round(&sp, sampler, seq, &n);
        if (st != TW_OK) {
            fprintf(stderr, "generate: forward pass failed at position %d: %s\n", before - 1, tw_status_str(st));
            goto done;
        }
        for (int t = before; t < n && !ended; t++) {
            if (seq[t] == TW_TOK_BOS) ended = 1;   // as llama2.c: BOS ends the text
            else print_piece(tw_tokenizer_decode(tok, seq[t - 1], seq[t]));
        }
    }
    printf("\n");
    fflush(stdout);
    const double dt = now_seconds() - t0;
    if (sp.rounds > 0) {
        fprintf(stderr, "speculative: %s, k = %d: %ld of %ld proposals kept, acceptance rate %.1f %% "
                "(of the %ld tested: a round stops at its first rejection); %ld tokens in %ld target "
                "passes (%.2f per pass)\n",
                o->draft != NULL ? o->draft : "draft = the model's first layers", o->draft_k,
                sp.accepted, sp.proposed, sp.tested ? 100.0 * sp.accepted / sp.tested : 0.0, sp.tested,
                sp.emitted, sp.rounds, (double)sp.emitted / sp.rounds);
        fprintf(stderr, "speculative: %ld tokens in %.3f s (%.1f tok/s), prefill included\n", sp.emitted,
                dt, dt > 0 ? sp.emitted / dt : 0.0);
    }
    rc = 0;
done:
    tw_spec_free(&sp);
    free(seq);
    return rc;
}

// The prompts of --prompts FILE: one a line (a final line without '\n' counts; "\r\n" too).
// Returns the number of lines, with *text (the file, lines terminated in place) and lines[]
// (malloc'ed, pointing into it), or -1 after printing one line.
static int read_prompts(const char *path, char **text, char ***lines) {
    char err[512];
    long long bytes;
    FILE *f = tw_regular_file_open_measured(&bytes, err, sizeof err, path,
                                            "a text file of prompts, one a line", "cannot open");
    if (f == NULL) { fprintf(stderr, "generate: --prompts %s\n", err); return -1; }
    if (bytes > (1LL << 26)) {
        fprintf(stderr, "generate: --prompts %s: %lld bytes is more than the 64 MiB a prompts file may have\n", path, bytes);
        fclose(f);
        return -1;
    }
    *text = malloc((size_t)bytes + 1);
    if (*text == NULL || fread(*text, 1, (size_t)bytes, f) != (size_t)bytes) {
        fprintf(stderr, "generate: --prompts %s: cannot read the file\n", path);
        fclose(f);
        return -1;
    }
    fclose(f);
    (*text)[bytes] = '\0';
    if (strlen(*text) != (size_t)bytes) {
        fprintf(stderr, "generate: --prompts %s: the file has a zero byte: pass a text file, one prompt a line\n", path);
        return -1;
    }
    int n = 0;
    for (char *c = *text; *c; c++) n += *c == '\n';
    if (bytes > 0 && (*text)[bytes - 1] != '\n') n++;
    if (n == 0) { fprintf(stderr, "generate: --prompts %s: the file is empty: write one prompt a line\n", path); return -1; }
    *lines = malloc((size_t)n * sizeof **lines);
    if (*lines == NULL) { fprintf(stderr, "generate: out of memory\n"); return -1; }
    char *c = *text;
    for (int i = 0; i < n; i++) {
        (*lines)[i] = c;
        char *nl = strchr(c, '\n');
        if (nl) { *nl = '\0'; c = nl + 1; }
        size_t len = strlen((*lines)[i]);
        if (len > 0 && (*lines)[i][len - 1] == '\r') (*lines)[i][len - 1] = '\0';
    }
    return n;
}

// One sequence of --prompts: its tokens, its cache's block table, its sampler, its text.
typedef struct {
    int *tokens;          // (steps + 1) prompt, then generated
    int  n_prompt, len;   // prompt tokens; tokens known
    int  ran;             // positions run through the model
    int  done;            // 1 when it reached `steps` or BOS
    tw_block_table table;
    tw_sampler sampler;
    char *out;            // its printed text, as plain generation prints it
    size_t out_len, out_cap;
} batch_seq;

static void seq_append(batch_seq *q, const char *piece) {
    if (!tw_tokenizer_piece_printable(piece)) return;
    size_t n = strlen(piece);
    if (q->out_len + n + 1 > q->out_cap) {
        size_t cap = (q->out_len + n + 1) * 2;
        char *p = realloc(q->out, cap);
        if (p == NULL) return;   // the text is cut short rather than crash; the counts stay right
        q->out = p;
        q->out_cap = cap;
    }
    memcpy(q->out + q->out_len, piece, n + 1);
    q->out_len += n;
}

// --prompts FILE: every prompt decoded together, one row per sequence and step (a prompt's
// prefill as several rows of one step), then each completion printed in input order. Sequence i
// samples with seed + i, so one prompt prints what -i prints. Returns the exit code.
static void free_prompts(batch_seq *seqs, int n) {
    for (int i = 0; seqs && i < n; i++) {
        free(seqs[i].tokens);
        tw_sampler_free(&seqs[i].sampler);
        tw_block_table_free(&seqs[i].table);
        free(seqs[i].out);
    }
    free(seqs);
}

// The prompts of --prompts, read and encoded before anything is printed: one line and -1 if the
// file or a line is unusable, else their number, with *seqs (calloc'ed; free with free_prompts).
static int prepare_prompts(batch_seq **seqs_out, const options *o, const tw_model *m,
                           const tw_tokenizer *tok, unsigned long long seed, int steps) {
    const int V = m->cfg.vocab;
    if (!tw_batch_supports(m)) {
        fprintf(stderr, "generate: --prompts: batched decoding runs pre-norm dense models only (the GPT-2, "
                "Llama and Qwen3 styles), and this model %s\n", m->cfg.block.moe_experts
                ? "has mixture-of-experts FFNs" : m->cfg.block.mla_kv_rank
                ? "has latent attention" : "is post-norm (2017 style)");
        *seqs_out = NULL;
        return -1;
    }
    char *text = NULL, **lines = NULL;
    int n = read_prompts(o->prompts, &text, &lines), ok = 0;
    batch_seq *seqs = n > 0 ? calloc((size_t)n, sizeof *seqs) : NULL;
    if (n > 0 && seqs == NULL) fprintf(stderr, "generate: out of memory\n");
    if (seqs == NULL) goto done;
    for (int i = 0; i < n; i++) {
        batch_seq *q = &seqs[i];
        size_t max_tok = tw_tokenizer_max_tokens(lines[i]);
        q->tokens = malloc(((size_t)steps + 1 + max_tok) * sizeof *q->tokens);
        if (q->tokens == NULL || tw_tokenizer_encode(tok, q->tokens, &q->n_prompt, (int)max_tok + steps + 1,
                                                     lines[i], 1, 0) != TW_OK) {
            fprintf(stderr, "generate: --prompts %s: line %d: cannot encode it (out of memory)\n", o->prompts, i + 1);
            goto done;
        }
        if (q->n_prompt > m->cfg.max_seq) {
            fprintf(stderr, "generate: --prompts %s: line %d is %d tokens (BOS included), longer than the "
                    "model's seq_len of %d\n", o->prompts, i + 1, q->n_prompt, m->cfg.max_seq);
            goto done;
        }
        q->len = q->n_prompt;
        if (tw_sampler_init(&q->sampler, V, o->temperature, o->topp, seed + (unsigned long long)i) != TW_OK) {
            fprintf(stderr, "generate: out of memory\n");
            goto done;
        }
    }
    ok = 1;
done:
    free(lines);
    free(text);
    if (!ok) { free_prompts(seqs, n); n = -1; seqs = NULL; }
    *seqs_out = seqs;
    return n;
}

// --prompts FILE: every prompt decoded together, one row per sequence and step (a prompt's
// prefill as several rows of one step), then each completion printed in input order. Sequence i
// samples with seed + i, so one prompt prints what -i prints. Returns the exit code.
static int generate_batch(batch_seq *seqs, int n, const tw_model *m, const tw_tokenizer *tok,
                          int steps, int packed) {
    enum { BLOCK = 16, ROWS_MAX = 256 };
    const int V = m->cfg.vocab;
    int rc = 1;
    tw_batch b = { 0 };
    tw_batch_panels panels = { 0 };
    tw_block_table **tables = NULL;
    int *row_tok = NULL, *row_pos = NULL, *row_seq = NULL, *row_next = NULL;
    unsigned char *want = NULL;
    // Greedy (-t 0, every sequence samples alike): the batch's greedy pass gives the tokens, and
    // on packed panels the logits are never written (decode/batch.h).
    const int greedy = n > 0 && seqs[0].sampler.temperature == 0.0f;
    const int blocks_each = (steps + BLOCK - 1) / BLOCK;
    tw_status st = tw_batch_init(&b, m, ROWS_MAX, steps, BLOCK, n * blocks_each);
    if (st != TW_OK) {
        fprintf(stderr, "generate: --prompts: %s\n", st == TW_ERR_ARG
                ? "batched decoding runs pre-norm models only (GPT-2, Llama, Qwen3 styles)"
                : "cannot allocate the batch and its KV cache");
        goto done;
    }
    if (packed) {
        const tw_status pst = tw_batch_panels_init(&panels, m);
        if (pst != TW_OK) {
            fprintf(stderr, "generate: --packed: %s\n", tw_batch_panels_why(pst));
            goto done;
        }
        b.panels = &panels;
    }
    tables = malloc(ROWS_MAX * sizeof *tables);
    row_tok = malloc(ROWS_MAX * sizeof *row_tok);
    row_pos = malloc(ROWS_MAX * sizeof *row_pos);
    row_seq = malloc(ROWS_MAX * sizeof *row_seq);
    row_next = malloc(ROWS_MAX * sizeof *row_next);
    want = malloc(ROWS_MAX);
    if (!tables || !row_tok || !row_pos || !row_seq || !row_next || !want) { fprintf(stderr, "generate: out of memory\n"); goto done; }
    for (int i = 0; i < n; i++) {
        batch_seq *q = &seqs[i];
        if (tw_block_table_init(&q->table, &b.pool, steps) != TW_OK) { fprintf(stderr, "generate: out of memory\n"); goto done; }
        // The prompt is forced: print it (positions beyond -n are not run, as with -i).
        const int shown = q->n_prompt < steps + 1 ? q->n_prompt : steps + 1;
        for (int t = 1; t < shown; t++) seq_append(q, tw_tokenizer_decode(tok, q->tokens[t - 1], q->tokens[t]));
        if (q->n_prompt > steps) q->done = 1;
    }
    const double t0 = now_seconds();
    long generated = 0, calls = 0;
    int peak_blocks = 0;   // most blocks held at once
    for (;;) {
        // Rows of this step: each live sequence's positions not run yet, up to ROWS_MAX.
        int R = 0;
        for (int i = 0; i < n && R < ROWS_MAX; i++) {
            batch_seq *q = &seqs[i];
            if (q->done) continue;
            // The cache grows block by block as the sequence does (the pool holds every
            // sequence's full length, so this cannot fail).
            if (tw_block_table_reserve(&q->table, &b.pool, q->len) != TW_OK) {
                fprintf(stderr, "generate: --prompts: the KV cache pool is too small\n");
                goto done;
            }
            for (int p = q->ran; p < q->len && R < ROWS_MAX; p++) {
                tables[R] = &q->table;
                row_tok[R] = q->tokens[p];
                row_pos[R] = p;
                row_seq[R] = i;
                want[R] = p == q->len - 1;   // logits only after the last known token
                R++;
            }
        }
        if (R == 0) break;
        if (b.pool.n_blocks - b.pool.n_free > peak_blocks) peak_blocks = b.pool.n_blocks - b.pool.n_free;
        st = greedy ? tw_batch_forward_greedy(&b, tables, row_tok, row_pos, want, R, row_next)
                    : tw_batch_forward(&b, tables, row_tok, row_pos, want, R);
        calls++;
        if (st != TW_OK) { fprintf(stderr, "generate: batched forward pass failed: %s\n", tw_status_str(st)); goto done; }
        int j = 0;
        for (int r = 0; r < R; r++) {
            batch_seq *q = &seqs[row_seq[r]];
            q->ran = row_pos[r] + 1;
            if (!want[r]) continue;
            const int next = greedy ? row_next[j++]
                                    : tw_sampler_sample(&q->sampler, b.logits + (size_t)j++ * V);
            generated++;
            if (next == TW_TOK_BOS) { q->done = 1; continue; }   // as llama2.c: BOS ends the text
            seq_append(q, tw_tokenizer_decode(tok, q->tokens[q->len - 1], next));
            q->tokens[q->len++] = next;
            if (q->len > steps) q->done = 1;   // positions 0 .. steps-1 ran: the last token is shown
        }
        for (int i = 0; i < n; i++)
            if (seqs[i].done) tw_block_table_release(&seqs[i].table, &b.pool);   // its blocks go back
    }
    const double dt = now_seconds() - t0;
    for (int i = 0; i < n; i++) printf("%s\n", seqs[i].out ? seqs[i].out : "");
    fflush(stdout);
    fprintf(stderr, "batch: %d prompts decoded together%s: %ld tokens in %ld forward passes, %.3f s "
            "(%.1f tok/s in all, prefill included)\n", n, packed ? " on packed panels" : "", generated,
            calls, dt, dt > 0 ? generated / dt : 0.0);
    const double kib = (double)tw_paged_block_bytes(&b.pool) / 1024.0;
    fprintf(stderr, "kv cache: paged, blocks of %d positions (%.1f KiB): at most %d blocks held at once "
            "(%.1f KiB), against %.1f KiB for %d caches of %d positions each\n", BLOCK, kib, peak_blocks,
            peak_blocks * kib, (double)n * steps / BLOCK * kib, n, steps);
    rc = 0;
done:
    for (int i = 0; i < n; i++) tw_block_table_free(&seqs[i].table);
    tw_batch_free(&b);
    tw_batch_panels_free(&panels);
    free(tables); free(row_tok); free(row_pos); free(row_seq); free(row_next); free(want);
    return rc;
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
    tw_model draft_file = { 0 }, draft_view;
    const tw_model *draft = NULL;   // --draft or --draft-layers
    batch_seq *batch = NULL;        // --prompts
    int n_batch = 0;
    int version = 0;   // 0: fp32; 2: Q8_0, whose Linear layers run in int8 (quant/q8model.h)
    tw_status load = tw_checkpoint_is_ours(o.model)   // ./train's TWMODEL files (train/checkpoint.h)
                   ? tw_checkpoint_load(&m, o.model, err, sizeof err)
                   : tw_moe_file_is_moe(o.model)      // models with experts (train/moe_file.h)
                   ? tw_moe_file_load(&m, o.model, err, sizeof err)
                   : tw_llama2c_load_any(&m, &version, o.model, err, sizeof err);
    if (load != TW_OK) {
        fprintf(stderr, "generate: %s\n", err);
        goto done;
    }
    if (m.cfg.block.mla_kv_rank > 0) {   // latent attention (nn/block.h): the full forward only
        const char *no = !o.no_cache ? "decode with a KV cache yet: add --no-cache (each token then "
                                       "runs the full forward)"
                       : o.flash ? "run tiled attention (--attn flash): leave it out"
                       : o.rope_kind != TW_ROPE_SCALING_NONE || o.rope_config
                           ? "scale its RoPE (--rope-scaling, --rope-config): leave them out" : NULL;
        if (no) {
            fprintf(stderr, "generate: %s has latent attention, which ./generate cannot %s\n",
                    o.model, no);
            goto done;
        }
    }
    m.cfg.block.attn.tiled = o.flash;   // before any state is sized from the configuration
    const tw_status scaled = tw_model_config_set_rope_scaling(&m.cfg, (tw_rope_scaling_kind)o.rope_kind,
                                                              o.rope_factor, o.rope_original,
                                                              TW_LLAMA2C_MAX_SEQ);
    if (scaled != TW_OK) {
        fprintf(stderr, "generate: --rope-scaling %s: %s\n", tw_rope_scaling_name((tw_rope_scaling_kind)o.rope_kind),
                scaled == TW_ERR_SHAPE ? "the model has no RoPE to scale (it learned its positions)"
                                       : "--rope-factor times the trained context is too long");
        goto done;
    }
    if (o.rope_config) {   // a config.json's "rope_scaling" field, betas included
        if (o.rope_kind != TW_ROPE_SCALING_NONE) {
            fprintf(stderr, "generate: --rope-config and --rope-scaling both given: keep one\n");
            goto done;
        }
        tw_rope_scaling sc;
        if (tw_hf_rope_scaling_read_file(&sc, o.rope_config, err, sizeof err) != TW_OK) {
            fprintf(stderr, "generate: --rope-config %s\n", err);
            goto done;
        }
        const tw_status st = tw_model_config_apply_rope_scaling(&m.cfg, &sc, TW_LLAMA2C_MAX_SEQ);
        if (st != TW_OK) {
            fprintf(stderr, "generate: --rope-config %s: %s\n", o.rope_config,
                    st == TW_ERR_SHAPE ? "the model has no RoPE to scale (it learned its positions)"
                                       : "factor times the trained context is too long");
            goto done;
        }
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
        // Without -z the tokenizer is tokenizer.bin in the current folder, which a checkout lacks.
        fprintf(stderr, "generate: %s%s\n", err, o.tokenizer_given ? "" :
                " (no -z given, so tokenizer.bin in the current folder was tried: pass the model's "
                "tokenizer with -z, e.g. -z data/models/tok512.bin)");
        goto done;
    }
    if ((o.draft != NULL || o.draft_layers > 0) &&
        (draft = load_draft(&o, &m, steps, &draft_file, &draft_view)) == NULL)
        goto done;
    unsigned long long seed = o.seed > 0 ? (unsigned long long)o.seed : (unsigned long long)time(NULL);
    if (o.prompts != NULL && (n_batch = prepare_prompts(&batch, &o, &m, &tok, seed, steps)) < 0)
        goto done;

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

    fprintf(stderr, "seed: %llu (rerun with -s %llu to repeat)\n", seed, seed);
    fprintf(stderr, "simd: %s kernels (--simd naive|avx2|avx512|neon|auto; here: %s)\n", simd_level,
            tw_simd_available());
    // A thread count asked for and not available: say so rather than run on one thread silently.
    const char *omp = getenv("OMP_NUM_THREADS");
    if (omp != NULL && atoi(omp) > 1 && !tw_threads_built_in())
        fprintf(stderr, "threads: OMP_NUM_THREADS=%s has no effect: this ./generate was built without "
                "OpenMP and runs on one thread (rebuild: make clean && make generate OMP=1)\n", omp);
    if (version == 2)
        fprintf(stderr, "model: llama2.c version 2 (Q8_0: int8 weights in groups of %d, run by the "
                "%s int8 kernels)\n", m.copies->gs, tw_q8_ops_for_simd_level(simd_level)->level);
    else if (m.cfg.block.moe_experts)
        fprintf(stderr, "model: TWMX (fp32; %d experts, %d chosen per token, %d shared%s)\n",
                m.cfg.block.moe_experts, m.cfg.block.moe_top_k, m.cfg.block.moe_shared,
                m.cfg.block.mla_kv_rank ? "; latent attention" : "");
    else if (m.cfg.block.mla_kv_rank)
        fprintf(stderr, "model: TWMX (fp32; latent attention, kv_lora_rank %d)\n",
                m.cfg.block.mla_kv_rank);
    else
        fprintf(stderr, "model: llama2.c version 0 (fp32)\n");
    if (o.cache_info) print_cache_info(&m, steps, o.no_cache);
    if (o.prompts != NULL) {
        rc = generate_batch(batch, n_batch, &m, &tok, steps, o.packed);
        goto done;
    }
    if (draft != NULL) {
        if (tw_sampler_init(&sampler, V, o.temperature, o.topp, seed) != TW_OK) {
            fprintf(stderr, "generate: out of memory\n");
            goto done;
        }
        rc = generate_speculative(&o, &m, draft, &tok, &sampler, tokens, n_prompt, steps);
        goto done;
    }

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
    int token = tokens[0], pos = 0, n_decoded = 0, saw_bos = 0;
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
        if (next == TW_TOK_BOS) { saw_bos = 1; break; }   // as llama2.c: BOS ends the text, EOS is not special
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
    // -n above seq_len was cut to seq_len: the text stops where the context is full, often
    // mid-word, so say so rather than stop silently.
    if (o.steps > seq_len && pos == steps && !saw_bos)
        fprintf(stderr, "generate: stopped after %d positions: the model's context (seq_len %d) is full, "
                "-n %ld asked for more\n", pos, seq_len, o.steps);
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
    tw_model_free(&draft_file);
    free_prompts(batch, n_batch);
    tw_model_free(&m);
    tw_lora_set_free(&adapters);
    return rc;
}
