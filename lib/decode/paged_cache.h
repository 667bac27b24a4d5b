// paged_cache.h: a paged KV cache (Kwon et al. 2023, the vLLM paper): the keys and values of every
// sequence live in one pool of fixed-size blocks of B positions. Each sequence has a block table,
// its logical block b (positions b*B .. b*B + B-1) -> a block of the pool. A sequence takes a block
// from the free list when it grows past a block boundary and gives all of them back when it ends,
// so memory follows the tokens actually held, not the longest sequence that might come.
//
//   pool k, v: (n_layer, n_blocks, B, G*D) floats; position p of a sequence, in layer l, is row
//   p % B of pool block table[p / B].
#ifndef TW_PAGED_CACHE_H
#define TW_PAGED_CACHE_H
#include <stddef.h>
#include "core/status.h"

typedef struct {
    int    n_layer, G, D;    // the model's layers, kv heads, head size
    int    block_size;       // B: positions per block
    int    n_blocks;         // blocks in the pool
    float *k, *v;            // (n_layer, n_blocks, B, G*D)
    int   *free_list;        // (n_blocks) a stack of free block ids, n_free of them
    int    n_free;
} tw_paged_pool;

typedef struct {
    int *blocks;       // (max_blocks) the pool block of each logical block
    int  n_blocks;     // blocks held
    int  max_blocks;   // room in blocks[]
} tw_block_table;

// TW_ERR_ARG for sizes < 1, TW_ERR_NOMEM. Every block starts on the free list.
tw_status tw_paged_pool_init(tw_paged_pool *p, int n_layer, int G, int D, int block_size, int n_blocks);
void      tw_paged_pool_free(tw_paged_pool *p);   // safe on a zeroed struct
// Bytes of one block in every layer (keys and values): 2 * n_layer * B * G * D * 4.
size_t    tw_paged_block_bytes(const tw_paged_pool *p);

// A table with room for max_positions positions (ceil(max_positions / B) blocks), holding none.
tw_status tw_block_table_init(tw_block_table *t, const tw_paged_pool *p, int max_positions);
void      tw_block_table_free(tw_block_table *t);   // give the blocks back first (release)
// Makes room for positions 0 .. len-1, taking blocks from the free list. TW_ERR_NOMEM when the pool
// has too few free blocks (then nothing is taken), TW_ERR_ARG when len exceeds the table's room.
tw_status tw_block_table_reserve(tw_block_table *t, tw_paged_pool *p, int len);
// Gives every block back to the free list (the sequence ended).
void      tw_block_table_release(tw_block_table *t, tw_paged_pool *p);

// Position pos's key and value rows (G*D floats each) in layer l: through the block table.
float *tw_paged_key(const tw_paged_pool *p, const tw_block_table *t, int layer, int pos);
float *tw_paged_value(const tw_paged_pool *p, const tw_block_table *t, int layer, int pos);
// Copies positions 0 .. n-1 of layer l into contiguous rows, block by block.   k, v: (n, G*D)
void   tw_paged_gather(float *k, float *v, const tw_paged_pool *p, const tw_block_table *t,
                       int layer, int n);
// Points at positions 0 .. n-1 of layer l where they are, copying nothing: k_rows[s], v_rows[s]
// are tw_paged_key / tw_paged_value of position s (attention reads a sequence's rows in place
// through these: decode/batch.c).   k_rows, v_rows: (n)
void   tw_paged_rows(const float **k_rows, const float **v_rows, const tw_paged_pool *p,
                     const tw_block_table *t, int layer, int n);

#endif
