# mk/moe.mk: the mixture-of-experts benchmark (lib/nn/moe.c).
#
#   make bench-moe   time per token of the MoE forward for E = 8, k = 2 against E = 2, k = 2 (same
#                    active experts) and E = 8, k = 8 (same total): time follows the active ones

.PHONY: bench-moe

$(BUILD)/tools/bench_moe: $(BUILD)/bench/bench_moe.o $(BUILD)/bench/bench_clock.o $(BUILD)/bench/cpuinfo.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

bench-moe: $(BUILD)/tools/bench_moe             ## MoE forward: time per token follows active, not total experts
	./$(BUILD)/tools/bench_moe
