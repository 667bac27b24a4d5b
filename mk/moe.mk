# mk/moe.mk: the mixture-of-experts benchmark (lib/nn/moe.c).
#
#   make bench-moe   time per token of the MoE forward for E = 8, k = 2 against E = 2, k = 2 (same
#                    active experts) and E = 8, k = 8 (same total): time follows the active ones

.PHONY: bench-moe

$(BUILD)/tools/bench_moe: $(BUILD)/bench/bench_moe.o $(BUILD)/bench/bench_clock.o $(BUILD)/bench/cpuinfo.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

bench-moe: $(BUILD)/tools/bench_moe             ## MoE forward: time per token follows active, not total experts
	./$(BUILD)/tools/bench_moe

# The classic wrong attempts of exercises 37 and 38 (lessons/exercises/wrong/): each must be
# rejected by the exercise's checker with a FAIL line (part of `make test`).
MOE_WRONG := 37 38
$(foreach n,$(MOE_WRONG),$(eval $(call CONCEPT_EXERCISE_RULES,$(n),wrong,$(CEX_DIR)/wrong)))

.PHONY: test-moe-wrong-attempts
test-moe-wrong-attempts: $(foreach n,$(MOE_WRONG),$(BUILD)/exercises/wrong/exercise$(n))   ## exercises 37, 38: the wrong attempts fail
	@for n in $(MOE_WRONG); do \
	  if ./$(BUILD)/exercises/wrong/exercise$$n > $(BUILD)/exercises/wrong$$n.log 2>&1; then \
	    echo "exercise $$n: the checker accepts the wrong attempt lessons/exercises/wrong/ex$${n}_*.c"; exit 1; fi; \
	  grep -q '^FAIL' $(BUILD)/exercises/wrong$$n.log \
	    || { echo "exercise $$n: the wrong attempt did not fail with a FAIL line:"; cat $(BUILD)/exercises/wrong$$n.log; exit 1; }; \
	done; echo "exercises 37, 38: the checker rejects both wrong attempts"
TEST_DEPS += test-moe-wrong-attempts
