// serve.c: static and continuous batching over a stream of requests (see serve.h).
#define _POSIX_C_SOURCE 200809L   // clock_gettime
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/rng.h"
#include "formats/atomic_file.h"
#include "formats/regular_file.h"
#include "decode/sampler.h"
#include "decode/serve.h"

void tw_requests_generate(tw_request *r, int n, uint64_t seed, double gap, int p_min, int p_max,
                          int o_min, int o_max) {
    tw_rng rng;
    tw_rng_init(&rng, seed);
    double t = 0.0;
    for (int i = 0; i < n; i++) {
        r[i].arrival = (int)t;
        r[i].prompt_len = p_min + (int)(tw_rng_uniform(&rng) * (p_max - p_min + 1)) % (p_max - p_min + 1);
        r[i].output_len = o_min + (int)(tw_rng_uniform(&rng) * (o_max - o_min + 1)) % (o_max - o_min + 1);
        t += -gap * log(1.0 - tw_rng_uniform(&rng));   // exponential gaps: a Poisson stream
    }
}

// One integer field of a stream line: digits only (no sign), at most 9 of them. Moves *s past it
// and its trailing spaces; -1 if there is none.
static int read_field(const char **s) {
    const char *c = *s;
    while (*c == ' ' || *c == '\t') c++;
    if (*c < '0' || *c > '9') return -1;
    long v = 0;
    int digits = 0;
    while (*c >= '0' && *c <= '9') {
        if (++digits > 9) return -1;
        v = v * 10 + (*c++ - '0');
    }
    if (*c != ' ' && *c != '\t' && *c != '\0' && *c != '\r') return -1;
    *s = c;
    return (int)v;
}

tw_status tw_requests_read(tw_request **r, int *n, const char *path, char *err, size_t err_len) {
    *r = NULL;
    *n = 0;
    long long bytes;
    FILE *f = tw_regular_file_open_measured(&bytes, err, err_len, path,
                                            "a request stream (text: ARRIVAL PROMPT_LEN OUTPUT_LEN a line)",
                                            "cannot open the request stream");
    if (f == NULL) return TW_ERR_IO;
    int cap = 0, line_no = 0, n_req = 0;
    tw_request *req = NULL;
    char line[256];
    tw_status st = TW_OK;
    while (st == TW_OK && fgets(line, sizeof line, f) != NULL) {
        line_no++;
        const size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            snprintf(err, err_len, "%s: line %d is longer than %d bytes: write ARRIVAL PROMPT_LEN "
                     "OUTPUT_LEN a line", path, line_no, (int)sizeof line - 2);
            st = TW_ERR_FORMAT;
            break;
        }
        if (len > 0 && line[len - 1] == '\n') line[len - 1] = '\0';
        const char *c = line;
        while (*c == ' ' || *c == '\t') c++;
        if (*c == '\0' || *c == '\r' || *c == '#') continue;
        tw_request q;
        q.arrival = read_field(&c);
        q.prompt_len = q.arrival < 0 ? -1 : read_field(&c);
        q.output_len = q.prompt_len < 0 ? -1 : read_field(&c);
        while (*c == ' ' || *c == '\t' || *c == '\r') c++;
        if (q.output_len < 0 || *c != '\0') {
            snprintf(err, err_len, "%s: line %d: '%.40s' is not three whole numbers ARRIVAL PROMPT_LEN "
                     "OUTPUT_LEN (at most 9 digits each)", path, line_no, line);
            st = TW_ERR_FORMAT;
        } else if (q.prompt_len < 1 || q.output_len < 1) {
            snprintf(err, err_len, "%s: line %d: a request needs a prompt and an output of 1 token or "
                     "more (got %d and %d)", path, line_no, q.prompt_len, q.output_len);
            st = TW_ERR_FORMAT;
        } else if (n_req > 0 && q.arrival < req[n_req - 1].arrival) {
            snprintf(err, err_len, "%s: line %d: arrival %d comes before the previous request's %d: "
                     "list the requests in order of arrival", path, line_no, q.arrival, req[n_req - 1].arrival);
            st = TW_ERR_FORMAT;
        } else {
            if (n_req == cap) {
                cap = cap ? 2 * cap : 64;
                tw_request *bigger = cap <= (1 << 24) ? realloc(req, (size_t)cap * sizeof *req) : NULL;
                if (bigger == NULL) {
                    snprintf(err, err_len, "%s: too many requests (out of memory)", path);
                    st = TW_ERR_NOMEM;
                    break;
                }
                req = bigger;
            }
            req[n_req++] = q;
        }
    }
    if (st == TW_OK && ferror(f)) {
        snprintf(err, err_len, "%s: cannot read the file: %s", path, strerror(errno));
        st = TW_ERR_IO;
    }
    fclose(f);
    if (st == TW_OK && n_req == 0) {
        snprintf(err, err_len, "%s: no requests: write ARRIVAL PROMPT_LEN OUTPUT_LEN a line", path);
        st = TW_ERR_FORMAT;
    }
    if (st != TW_OK) { free(req); return st; }
    *r = req;
    *n = n_req;
    return TW_OK;
}

tw_status tw_requests_write(const char *path, const tw_request *r, int n, char *err, size_t err_len) {
    tw_atomic_file af;
    if (tw_atomic_open(&af, path, "w") != TW_OK) {
        snprintf(err, err_len, "%s: cannot create the file: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    int ok = fprintf(af.f, "# request stream: ARRIVAL (engine step) PROMPT_LEN OUTPUT_LEN (docs/serving.md)\n") > 0;
    for (int i = 0; ok && i < n; i++)
        ok = fprintf(af.f, "%d %d %d\n", r[i].arrival, r[i].prompt_len, r[i].output_len) > 0;
    if (tw_atomic_commit(&af, ok) != TW_OK) {
        snprintf(err, err_len, "%s: cannot write the file: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    return TW_OK;
}

static int by_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tw_percentile(double *x, int n, double p) {
    qsort(x, (size_t)n, sizeof *x, by_double);
    int rank = (int)ceil(p / 100.0 * n);   // nearest rank: the smallest value with >= p % at or below
    if (rank < 1) rank = 1;
    return x[rank - 1];
}

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef enum { WAITING = 0, RUNNING, DONE } req_state;

// One request in flight: its tokens (prompt, then output), how many positions ran, its cache.
typedef struct {
    req_state state;
    int *tokens;          // (prompt_len + output_len)
    int  len, ran, made;  // tokens known, positions run, output tokens made
    tw_block_table table;
} flight;

void tw_request_prompt(int *tokens, int len, int i, int V) {
    tw_rng rng;
    tw_rng_init(&rng, 1000003u + (uint64_t)i);
    tokens[0] = 1;   // BOS
    for (int t = 1; t < len; t++) tokens[t] = 3 + (int)(tw_rng_uniform(&rng) * (V - 3)) % (V - 3);
}

tw_status tw_serve_run(tw_batch *b, const tw_request *req, int n, int slots, tw_batching kind,
                       tw_request_timing *timing, tw_serve_stats *stats, int *const tokens_out[]) {
    const int V = b->m->cfg.vocab;
    memset(stats, 0, sizeof *stats);
    for (int i = 0; i < n; i++)
        if (req[i].prompt_len < 1 || req[i].output_len < 1 ||
            req[i].prompt_len + req[i].output_len > b->S_max || slots < 1 || slots >= b->R_max ||
            (i > 0 && req[i].arrival < req[i - 1].arrival))
            return TW_ERR_ARG;
    flight *f = calloc((size_t)n, sizeof *f);
    tw_block_table **tables = malloc((size_t)b->R_max * sizeof *tables);
    int *row_tok = malloc((size_t)b->R_max * sizeof *row_tok), *row_pos = malloc((size_t)b->R_max * sizeof *row_pos);
    int *row_req = malloc((size_t)b->R_max * sizeof *row_req);
    int *row_next = malloc((size_t)b->R_max * sizeof *row_next);
    unsigned char *want = malloc((size_t)b->R_max);
    tw_status st = (f && tables && row_tok && row_pos && row_req && row_next && want) ? TW_OK
                                                                                     : TW_ERR_NOMEM;
    for (int i = 0; st == TW_OK && i < n; i++) {
        f[i].tokens = malloc((size_t)(req[i].prompt_len + req[i].output_len) * sizeof *f[i].tokens);
        if (f[i].tokens == NULL || tw_block_table_init(&f[i].table, &b->pool, b->S_max) != TW_OK) st = TW_ERR_NOMEM;
        else {
            tw_request_prompt(f[i].tokens, req[i].prompt_len, i, V);
            f[i].len = req[i].prompt_len;
            timing[i] = (tw_request_timing){ -1, -1, -1, -1.0, -1.0, -1.0 };
        }
    }
    int step = 0, next = 0, running = 0, finished = 0;   // next: the first request not admitted yet
    int batch_left = 0;   // static: requests of the current batch not done yet
    double now = 0.0;
    while (st == TW_OK && finished < n) {
        // Idle with nothing running: the clock jumps to the next arrival (no work, no time).
        if (running == 0 && next < n && req[next].arrival > step) step = req[next].arrival;
        for (int i = next; i < n && req[i].arrival <= step; i++)
            if (timing[i].arrival_s < 0) timing[i].arrival_s = now;
        // Admission: continuous at any step with a free slot; static only when the batch is over.
        if (kind == TW_BATCH_CONTINUOUS || batch_left == 0) {
            while (next < n && req[next].arrival <= step && running < slots) {
                f[next].state = RUNNING;
                timing[next].admit_step = step;
                running++;
                batch_left++;
                next++;
            }
        }
        // The rows of this step, at most R_max: first one row for every decoding sequence, then
        // the prompts of the newly admitted ones (a prompt that does not fit goes on next step).
        int R = 0;
        for (int pass = 0; pass < 2 && st == TW_OK; pass++)
            for (int i = 0; i < next && st == TW_OK; i++) {
                flight *q = &f[i];
                if (q->state != RUNNING || q->made == req[i].output_len) continue;
                if ((q->ran == q->len - 1) != (pass == 0)) continue;   // decoding in pass 0
                st = tw_block_table_reserve(&q->table, &b->pool, q->len);   // grows block by block
                for (int p = q->ran; st == TW_OK && p < q->len && R < b->R_max; p++) {
                    tables[R] = &q->table;
                    row_tok[R] = q->tokens[p];
                    row_pos[R] = p;
                    row_req[R] = i;
                    want[R] = p == q->len - 1;
                    R++;
                }
            }
        if (st != TW_OK) break;
        const int held = b->pool.n_blocks - b->pool.n_free;
        if (held > stats->peak_blocks) stats->peak_blocks = held;
        const double t0 = seconds_now();
        st = tw_batch_forward_greedy(b, tables, row_tok, row_pos, want, R, row_next);
        now += seconds_now() - t0;
        if (st != TW_OK) break;
        stats->steps++;
        stats->rows += R;
        int j = 0;
        for (int r = 0; r < R; r++) {
            const int i = row_req[r];
            flight *q = &f[i];
            q->ran = row_pos[r] + 1;
            if (!want[r]) continue;
            q->tokens[q->len++] = row_next[j++];
            if (++q->made == 1) { timing[i].first_step = step; timing[i].first_s = now; }
            stats->tokens++;
            if (q->made == req[i].output_len) {
                timing[i].last_step = step;
                timing[i].last_s = now;
                finished++;
                batch_left--;
                if (kind == TW_BATCH_CONTINUOUS) {   // leaves now: its slot and blocks are free
                    q->state = DONE;
                    running--;
                    tw_block_table_release(&q->table, &b->pool);
                }
            }
        }
        if (kind == TW_BATCH_STATIC && batch_left == 0)   // the batch is over: every slot frees
            for (int i = 0; i < next; i++)
                if (f[i].state == RUNNING) {
                    f[i].state = DONE;
                    running--;
                    tw_block_table_release(&f[i].table, &b->pool);
                }
        step++;
    }
    stats->seconds = now;
    for (int i = 0; f && i < n; i++) {
        if (st == TW_OK && tokens_out)
            memcpy(tokens_out[i], f[i].tokens + req[i].prompt_len, (size_t)req[i].output_len * sizeof(int));
        tw_block_table_release(&f[i].table, &b->pool);
        tw_block_table_free(&f[i].table);
        free(f[i].tokens);
    }
    free(f);
    free(tables);
    free(row_tok);
    free(row_pos);
    free(row_req);
    free(row_next);
    free(want);
    return st;
}
