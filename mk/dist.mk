# mk/dist.mk: data-parallel training over MPI (docs/training.md, "Data parallel").
#
#   make train-mpi        ./train-mpi: ./train linked with tools/comm_mpi.c through mpicc; run it as
#                         mpirun -np P ./train-mpi ... (without mpirun it is one process)
#   make test-train-mpi   the multi-process checks that take longer than make test allows: 3 and
#                         4 processes (oversubscribed) against one process, bit for bit
# Without Open MPI (mpicc) installed, ./train is untouched and the MPI tests skip with one line.

MPICC ?= mpicc
HAVE_MPI := $(shell command -v $(MPICC) >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1 && echo 1)

PROGRAMS += $(if $(HAVE_MPI),train-mpi)
.PHONY: train-mpi
train-mpi: $(BUILD)/tools/train.o $(BUILD)/tools/train_grpo.o $(BUILD)/tools/train_dpo.o $(BUILD)/tools/comm_mpi.o $(LIB)   ## ./train-mpi: ./train over MPI (mpirun -np P ./train-mpi ...)
	$(call say,LD,$@)$(MPICC) $(LDFLAGS) $^ $(LDLIBS) -o $@
# Only this object includes <mpi.h>, so only it is compiled by mpicc.
$(BUILD)/tools/comm_mpi.o: tools/comm_mpi.c
	@mkdir -p $(@D)
	$(call say,MPICC,$<)$(MPICC) $(CSTD) $(WARN) $(FPFLAGS) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
TEST_DEPS += $(if $(HAVE_MPI),train-mpi)
CLEAN_FILES += train-mpi

.PHONY: test-train-mpi
test-train-mpi: train train-mpi                  ## 3 and 4 MPI processes == one process, bit for bit
	@sh tests/train_mpi_more.sh


# make bench-train's data-parallel rows: 1 process against 2 on one thread each (tools/bench_dist.c,
# built with mpicc in the default build folder: no OpenMP, one thread per process).
$(BUILD)/tools/bench_dist.o: tools/bench_dist.c
	@mkdir -p $(@D)
	$(call say,MPICC,$<)$(MPICC) $(CSTD) $(WARN) $(FPFLAGS) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/tools/bench_dist: $(BUILD)/tools/bench_dist.o $(BUILD)/tools/comm_mpi.o $(LIB)
	$(call say,LD,$@)$(MPICC) $(LDFLAGS) $^ $(LDLIBS) -o $@
.PHONY: bench-train-mpi
bench-train-mpi:                                 ## tokens/s of 1 and 2 MPI processes, both shapes, with the MPI-wait share
	@if [ -z "$(HAVE_MPI)" ]; then echo "bench-train-mpi: Open MPI is not installed (no mpicc or mpirun): skipped"; \
	else $(MAKE) --no-print-directory $(BUILD)/tools/bench_dist && \
	  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -q --oversubscribe -np 2 ./$(BUILD)/tools/bench_dist --shape 260k && \
	  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -q --oversubscribe -np 2 ./$(BUILD)/tools/bench_dist --shape 15m; fi
TEST_DEPS += $(if $(HAVE_MPI),$(BUILD)/tools/bench_dist)
