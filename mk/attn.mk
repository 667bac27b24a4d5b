# mk/attn.mk: attention at length (nn/sdpa_tiled.h beside nn/sdpa.h).
#
#   make bench-attn       attention's bytes in the model state, materialised against tiled, for
#                         T = 256 .. 8192 (forward and training; exits 1 if the memory goals fail),
#                         then one layer's attention at T = 1024 and 4096, prefill and training
#                         step, both forms, GFLOP/s against the FMA peak measured in the same run
#
# Built in the benchmark's own build directory (as `make bench`), so the library build of
# `make test` is never changed by benchmarking.

BENCH_ATTN_OBJ := $(BUILD)/bench/attn_length.o $(BUILD)/bench/bench_clock.o $(BUILD)/bench/peak.o \
                  $(BUILD)/bench/cpuinfo.o
$(BUILD)/bench/attn_length: $(BENCH_ATTN_OBJ) $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

.PHONY: bench-attn
bench-attn:                                    ## attention at length: bytes and speed, materialised vs tiled
	@$(MAKE) --no-print-directory BUILD=$(BENCH_BUILD) OMP=$(HAVE_OMP) $(BENCH_BUILD)/bench/attn_length
	./$(BENCH_BUILD)/bench/attn_length $(BENCH_ATTN_ARGS)

# make test builds (does not run) the tool, so it cannot fall behind the library.
TEST_DEPS += $(BUILD)/bench/attn_length

# ---- long context: a model trained at 64 positions, evaluated at 64 .. 512 ----
#   make long-context     trains data/longctx/model64.bin on the stories corpus (make stories;
#                         LONGCTX_STEPS steps at --seq 64, a few minutes) unless it exists, then
#                         bench/long_context.c: perplexity at 1x, 2x, 4x, 8x the trained context,
#                         plain RoPE and each scaling, by position; a picture when gnuplot is
#                         installed (viz/long_context.gp). Exit 3 if the goal (YaRN or NTK at 4x
#                         within 20 % of the trained-length perplexity, plain RoPE not) is not met.
LONGCTX_DIR   := data/longctx
LONGCTX_STEPS ?= 600
LONGCTX_OUT   := out/long_context
$(BUILD)/bench/long_context: $(BUILD)/bench/long_context.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(LONGCTX_DIR)/model64.bin: | train
	@test -s data/stories/train.bin || { echo "long-context: data/stories/train.bin is missing: run make stories first"; exit 1; }
	@mkdir -p $(LONGCTX_DIR)
	./train --tokens data/stories/train.bin --val data/stories/val.bin --style llama --dim 64 --layers 4 \
	  --heads 4 --kv-heads 2 --hidden 172 --vocab 512 --seq 64 --batch 16 --steps $(LONGCTX_STEPS) \
	  --lr 3e-3 --min-lr 3e-4 --warmup 50 --sample-every 0 --eval-every 500 --curve none --out $@

.PHONY: long-context
long-context: $(LONGCTX_DIR)/model64.bin $(BUILD)/bench/long_context   ## a model trained at 64 positions, at 1x..8x with each RoPE scaling
	@mkdir -p $(LONGCTX_OUT)
	./$(BUILD)/bench/long_context $(LONGCTX_DIR)/model64.bin data/stories/val.bin $(LONGCTX_OUT)
	@if command -v gnuplot > /dev/null 2>&1; then gnuplot -e "datafile='$(LONGCTX_OUT)/long_context.dat'; outfile='$(LONGCTX_OUT)/long_context.png'" viz/long_context.gp && echo "picture: $(LONGCTX_OUT)/long_context.png"; fi

TEST_DEPS += $(BUILD)/bench/long_context

# ---- the tiled attention's NEON kernels under qemu ----
#   make test-arm-tiled   cross-builds tests/arm/sdpa_tiled_selftest.c (the cases of
#                         tests/sdpa_tiled_cases.h, Check-free) for AArch64 and runs it in qemu:
#                         lib/simd/sdpa_tiled_neon.c against the naive tiled loops
.PHONY: test-arm-tiled
test-arm-tiled: arm-lib                        ## the tiled attention's NEON kernels against the naive loops, in qemu
	@$(MAKE) --no-print-directory CC=$(ARM_CC) BUILD=$(ARM_BUILD) OMP=0 $(ARM_BUILD)/tests/arm/sdpa_tiled_selftest
	qemu-aarch64 -L $(ARM_ROOT) $(ARM_BUILD)/tests/arm/sdpa_tiled_selftest
$(BUILD)/tests/arm/sdpa_tiled_selftest: $(BUILD)/tests/arm/sdpa_tiled_selftest.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/tests/arm/sdpa_tiled_selftest.o: CPPFLAGS += -Itests
