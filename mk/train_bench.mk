# mk/train_bench.mk: the training benchmark (issue 12, section 6).
#
#   make bench-train      training tokens/s (forward + backward + AdamW) for the stories260K and
#                         the stories15M shapes (the 260K shape also with --attn flash, the tiled
#                         attention, at the best level), naive and best SIMD level, 1 and 2 threads, the
#                         FLOP/s against the FMA peak measured in the same run, and PyTorch's
#                         tokens/s for the same model and batch with the ratio when Debian's
#                         PyTorch is installed (/usr/bin/python3 -c 'import torch'): one warm
#                         PyTorch process per thread count, its rounds alternated with ours, the
#                         ratio the median of the rounds' ratios with its range; the step's
#                         weight products timed alone (the step's ceiling), and 2 threads / 1
#                         as a median of paired rounds
#   make bench-train BENCH_TRAIN_ARGS='--steps 3'   fewer steps a round (the default: 5, the naive
#                         15M: 1); '--rounds N' rounds (default 5, the 15M shape 3)
#
# Built in the benchmark's own build directory with OpenMP when the compiler has it (as `make
# bench`), so the library build of `make test` is never changed by benchmarking.

TORCH_PY ?= /usr/bin/python3
BENCH_TRAIN_ARGS ?=
HAVE_TORCH = $(shell $(TORCH_PY) -c 'import torch' >/dev/null 2>&1 && echo 1 || echo 0)
TORCH_CMD = $(if $(filter 1,$(HAVE_TORCH)),--torch-cmd '$(TORCH_PY) tools/bench_train_torch.py')

# The clocks, the median and the paired ratios are bench_generate's too (bench/).
BENCH_TRAIN_OBJ := $(BUILD)/tools/bench_train.o $(BUILD)/bench/bench_clock.o $(BUILD)/bench/bench_spread.o \
                   $(BUILD)/bench/peak.o
$(BUILD)/tools/bench_train.o: CPPFLAGS += -Ibench
# The LoRA step against the full step (tools/bench_lora.c).
$(BUILD)/tools/bench_lora.o: CPPFLAGS += -Ibench
$(BUILD)/tools/bench_lora: $(BUILD)/tools/bench_lora.o $(BUILD)/bench/bench_clock.o $(BUILD)/bench/bench_spread.o \
                           $(BUILD)/bench/cpuinfo.o $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/tools/bench_train: $(BENCH_TRAIN_OBJ) $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
# The tool sets its thread count through omp_set_num_threads: OpenMP on its object too.
ifeq ($(OMP),1)
  $(BUILD)/tools/bench_train.o: ISAFLAGS := $(OMPFLAGS)
endif

.PHONY: bench-train
bench-train: model                             ## training tokens/s, naive vs SIMD, 1 vs 2 threads, vs PyTorch; LoRA step / full step
	@$(MAKE) --no-print-directory BUILD=$(BENCH_BUILD) OMP=$(HAVE_OMP) $(BENCH_BUILD)/tools/bench_train $(BENCH_BUILD)/tools/bench_lora
	./$(BENCH_BUILD)/tools/bench_lora
	@echo "PyTorch: $(if $(filter 1,$(HAVE_TORCH)),$(TORCH_PY) has torch: compared below,not installed ($(TORCH_PY) -c 'import torch' fails): our figures only)"
	./$(BENCH_BUILD)/tools/bench_train --shape 260k $(TORCH_CMD) $(BENCH_TRAIN_ARGS)
	./$(BENCH_BUILD)/tools/bench_train --shape 260k --attn flash --naive-steps 0 $(TORCH_CMD) $(BENCH_TRAIN_ARGS)
	./$(BENCH_BUILD)/tools/bench_train --shape 15m $(TORCH_CMD) $(BENCH_TRAIN_ARGS)
	@$(MAKE) --no-print-directory bench-train-mpi

# make test builds (does not run) the tool, so it cannot fall behind the library.
TEST_DEPS += $(BUILD)/tools/bench_train $(BUILD)/tools/bench_lora
