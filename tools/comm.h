// comm.h: the communicator ./train runs on (train/dist.h's tw_comm). ./train links comm_single.c
// (one process, no MPI); ./train-mpi (make train-mpi) links comm_mpi.c, built with mpicc, which
// joins the processes mpirun started. Run without mpirun, ./train-mpi is one process.
#ifndef TW_TOOLS_COMM_H
#define TW_TOOLS_COMM_H
#include "train/dist.h"

// Fills *c for this process (rank, size, collectives) and arranges for the communicator to be
// closed at exit. Returns 0, or -1 with one line on stderr if MPI cannot start.
int train_comm_open(tw_comm *c, int *argc, char ***argv);

// "MPI 3.1 (Open MPI v4.1.4 ...)" or "none (one process)": for the set-up line.
const char *train_comm_name(void);

#endif
