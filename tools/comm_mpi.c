// comm_mpi.c: ./train-mpi's communicator: the collectives of train/dist.h on MPI (see comm.h).
// Built only by `make train-mpi`, with mpicc; nothing else in the toolkit includes <mpi.h>.
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>
#include "comm.h"

// MPI counts are int: the shards and buffers here are far below 2^31 elements for any model
// ./train can hold (it refuses more than 2^40 parameters; a shard above 2^31 floats is refused at open).
static int to_int(long v) { return v > INT_MAX ? -1 : (int)v; }

// A started exchange: its request and the four count arrays MPI reads until it completes.
typedef struct {
    MPI_Request req;
    int counts[];   // (4, P): send counts, send offsets, receive counts, receive offsets
} exchange;

static tw_status mpi_exchange_start(const tw_comm *c, const float *send, float *recv, const long *start, void **req) {
    const int P = c->size, len = to_int(start[c->rank + 1] - start[c->rank]);
    exchange *x = malloc(sizeof *x + (size_t)P * 4 * sizeof(int));
    *req = NULL;
    if (!x || len < 0) { free(x); return TW_ERR_NOMEM; }
    int *sc = x->counts, *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
    for (int q = 0; q < P; q++) {
        sc[q] = to_int(start[q + 1] - start[q]);
        sd[q] = to_int(start[q]);
        rc[q] = len;
        rd[q] = q * len;
    }
    if (MPI_Ialltoallv(send, sc, sd, MPI_FLOAT, recv, rc, rd, MPI_FLOAT, MPI_COMM_WORLD, &x->req) != MPI_SUCCESS) {
        free(x);
        return TW_ERR_IO;
    }
    *req = x;
    return TW_OK;
}

static tw_status mpi_wait(const tw_comm *c, void *req) {
    (void)c;
    exchange *x = req;
    const int e = MPI_Wait(&x->req, MPI_STATUS_IGNORE);
    free(x);
    return e == MPI_SUCCESS ? TW_OK : TW_ERR_IO;
}

// Open MPI moves a started collective along only inside MPI calls: a probe is a cheap one.
static void mpi_progress(const tw_comm *c) {
    (void)c;
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
}

static tw_status mpi_exchange(const tw_comm *c, const float *send, float *recv, const long *start) {
    void *req = NULL;
    const tw_status s = mpi_exchange_start(c, send, recv, start, &req);
    return s == TW_OK ? mpi_wait(c, req) : s;
}

static tw_status mpi_allgather(const tw_comm *c, void *buf, const long *start, int elem_bytes) {
    const int P = c->size;
    int *cnt = malloc((size_t)P * 2 * sizeof *cnt);
    if (!cnt) return TW_ERR_NOMEM;
    int *disp = cnt + P;
    for (int q = 0; q < P; q++) {
        cnt[q] = to_int(start[q + 1] - start[q]);
        disp[q] = to_int(start[q]);
    }
    const int e = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, cnt, disp,
                                 elem_bytes == 8 ? MPI_DOUBLE : MPI_FLOAT, MPI_COMM_WORLD);
    free(cnt);
    return e == MPI_SUCCESS ? TW_OK : TW_ERR_IO;
}

static tw_status mpi_doubles(const tw_comm *c, const double *send, double *recv, int n) {
    (void)c;
    return MPI_Allgather(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, MPI_COMM_WORLD) == MPI_SUCCESS ? TW_OK : TW_ERR_IO;
}

static tw_status mpi_broadcast(const tw_comm *c, void *buf, long bytes, int root) {
    (void)c;
    for (long at = 0; at < bytes; at += 1L << 30) {   // in pieces an int can count
        const long piece = bytes - at < (1L << 30) ? bytes - at : 1L << 30;
        if (MPI_Bcast((char *)buf + at, (int)piece, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS) return TW_ERR_IO;
    }
    return TW_OK;
}

static void close_mpi(void) {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
}

int train_comm_open(tw_comm *c, int *argc, char ***argv) {
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "train: MPI_Init failed: run under mpirun, or use ./train\n");
        return -1;
    }
    atexit(close_mpi);
    tw_comm m = { 0, 1, NULL, mpi_exchange, mpi_allgather, mpi_doubles, mpi_broadcast,
                  mpi_exchange_start, mpi_wait, mpi_progress };
    MPI_Comm_rank(MPI_COMM_WORLD, &m.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m.size);
    *c = m;
    return 0;
}

const char *train_comm_name(void) {
    static char name[MPI_MAX_LIBRARY_VERSION_STRING + 32];
    int len = 0, major = 0, minor = 0;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_version(&major, &minor);
    MPI_Get_library_version(lib, &len);
    for (int i = 0; i < len; i++) if (lib[i] == ',' || lib[i] == '\n') { lib[i] = '\0'; break; }
    snprintf(name, sizeof name, "MPI %d.%d (%s)", major, minor, lib);
    return name;
}
