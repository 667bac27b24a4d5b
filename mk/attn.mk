# mk/attn.mk: attention at length (nn/sdpa_tiled.h beside nn/sdpa.h).
#
#   make bench-attn       attention's bytes in the model state, materialised against tiled, for
#                         T = 256 .. 8192 (forward and training; exits 1 if the memory goals fail),
#                         then one layer's attention at T = 1024 and 4096, prefill and training
#                         step, both forms, GFLOP/s against the FMA peak measured in the same run
#
# Built in the benchmark's own build directory (as `make bench`), so the library build of
# `make test` is never changed by benchmarking.

BENCH_ATTN_OBJ := $(BUILD)/bench/attn_length.o $(BUILD)/bench/bench_clock.o $(BUILD)/bench/peak.o
$(BUILD)/bench/attn_length: $(BENCH_ATTN_OBJ) $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

.PHONY: bench-attn
bench-attn:                                    ## attention at length: bytes and speed, materialised vs tiled
	@$(MAKE) --no-print-directory BUILD=$(BENCH_BUILD) $(BENCH_BUILD)/bench/attn_length
	./$(BENCH_BUILD)/bench/attn_length $(BENCH_ATTN_ARGS)

# make test builds (does not run) the tool, so it cannot fall behind the library.
TEST_DEPS += $(BUILD)/bench/attn_length
