// comm_single.c: ./train's communicator without MPI: one process (see comm.h).
#include "comm.h"

int train_comm_open(tw_comm *c, int *argc, char ***argv) {
    (void)argc; (void)argv;
    *c = tw_comm_single();
    return 0;
}

const char *train_comm_name(void) { return "none (one process; make train-mpi builds ./train-mpi for mpirun)"; }
