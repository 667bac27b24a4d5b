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

static tw_status mpi_exchange(const tw_comm *c, const float *send, float *recv, const long *start) {
    const int P = c->size, len = to_int(start[c->rank + 1] - start[c->rank]);
    int *sc = malloc((size_t)P * 4 * sizeof *sc);
    if (!sc || len < 0) { free(sc); return TW_ERR_NOMEM; }
    int *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
    for (int q = 0; q < P; q++) {
        sc[q] = to_int(start[q + 1] - start[q]);
        sd[q] = to_int(start[q]);
        rc[q] = len;
        rd[q] = q * len;
    }
    const int e = MPI_Alltoallv(send, sc, sd, MPI_FLOAT, recv, rc, rd, MPI_FLOAT, MPI_COMM_WORLD);
    free(sc);
    return e == MPI_SUCCESS ? TW_OK : TW_ERR_IO;
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
    tw_comm m = { 0, 1, NULL, mpi_exchange, mpi_allgather, mpi_doubles, mpi_broadcast };
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
