// paged_cache.c: the block pool, the free list and the block tables (see paged_cache.h).
#include <stdlib.h>
#include <string.h>
#include "decode/paged_cache.h"

tw_status tw_paged_pool_init(tw_paged_pool *p, int n_layer, int G, int D, int block_size, int n_blocks) {
    memset(p, 0, sizeof *p);
    if (n_layer < 1 || G < 1 || D < 1 || block_size < 1 || n_blocks < 1) return TW_ERR_ARG;
    const size_t floats = (size_t)n_layer * n_blocks * block_size * G * D;
    p->k = malloc(floats * sizeof *p->k);
    p->v = malloc(floats * sizeof *p->v);
    p->free_list = malloc((size_t)n_blocks * sizeof *p->free_list);
    if (!p->k || !p->v || !p->free_list) { tw_paged_pool_free(p); return TW_ERR_NOMEM; }
    p->n_layer = n_layer;
    p->G = G;
    p->D = D;
    p->block_size = block_size;
    p->n_blocks = n_blocks;
    // Block 0 on top of the stack, so a fresh pool hands out 0, 1, 2, ...
    for (int i = 0; i < n_blocks; i++) p->free_list[i] = n_blocks - 1 - i;
    p->n_free = n_blocks;
    return TW_OK;
}

void tw_paged_pool_free(tw_paged_pool *p) {
    free(p->k);
    free(p->v);
    free(p->free_list);
    memset(p, 0, sizeof *p);
}

size_t tw_paged_block_bytes(const tw_paged_pool *p) {
    return 2 * (size_t)p->n_layer * p->block_size * p->G * p->D * sizeof(float);
}

tw_status tw_block_table_init(tw_block_table *t, const tw_paged_pool *p, int max_positions) {
    memset(t, 0, sizeof *t);
    if (max_positions < 1) return TW_ERR_ARG;
    t->max_blocks = (max_positions + p->block_size - 1) / p->block_size;
    t->blocks = malloc((size_t)t->max_blocks * sizeof *t->blocks);
    return t->blocks ? TW_OK : TW_ERR_NOMEM;
}

void tw_block_table_free(tw_block_table *t) {
    free(t->blocks);
    memset(t, 0, sizeof *t);
}

tw_status tw_block_table_reserve(tw_block_table *t, tw_paged_pool *p, int len) {
    const int need = (len + p->block_size - 1) / p->block_size;
    if (need > t->max_blocks) return TW_ERR_ARG;
    if (need - t->n_blocks > p->n_free) return TW_ERR_NOMEM;
    while (t->n_blocks < need) t->blocks[t->n_blocks++] = p->free_list[--p->n_free];
    return TW_OK;
}

void tw_block_table_release(tw_block_table *t, tw_paged_pool *p) {
    while (t->n_blocks > 0) p->free_list[p->n_free++] = t->blocks[--t->n_blocks];
}

// The first float of position pos's row in layer l of one of the pool's arrays.
static size_t row_offset(const tw_paged_pool *p, const tw_block_table *t, int layer, int pos) {
    const int block = t->blocks[pos / p->block_size], row = pos % p->block_size;
    const size_t GD = (size_t)p->G * p->D;
    return (((size_t)layer * p->n_blocks + block) * p->block_size + row) * GD;
}

float *tw_paged_key(const tw_paged_pool *p, const tw_block_table *t, int layer, int pos) {
    return p->k + row_offset(p, t, layer, pos);
}

float *tw_paged_value(const tw_paged_pool *p, const tw_block_table *t, int layer, int pos) {
    return p->v + row_offset(p, t, layer, pos);
}

void tw_paged_gather(float *k, float *v, const tw_paged_pool *p, const tw_block_table *t,
                     int layer, int n) {
    const size_t GD = (size_t)p->G * p->D;
    for (int start = 0; start < n; start += p->block_size) {   // one block's rows at a time
        const int rows = n - start < p->block_size ? n - start : p->block_size;
        const size_t from = row_offset(p, t, layer, start);
        memcpy(k + (size_t)start * GD, p->k + from, (size_t)rows * GD * sizeof *k);
        memcpy(v + (size_t)start * GD, p->v + from, (size_t)rows * GD * sizeof *v);
    }
}

void tw_paged_rows(const float **k_rows, const float **v_rows, const tw_paged_pool *p,
                   const tw_block_table *t, int layer, int n) {
    const size_t GD = (size_t)p->G * p->D;
    for (int start = 0; start < n; start += p->block_size) {   // one block's rows at a time
        const int rows = n - start < p->block_size ? n - start : p->block_size;
        const size_t from = row_offset(p, t, layer, start);
        for (int i = 0; i < rows; i++) {
            k_rows[start + i] = p->k + from + (size_t)i * GD;
            v_rows[start + i] = p->v + from + (size_t)i * GD;
        }
    }
}
