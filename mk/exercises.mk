# mk/exercises.mk: the concept exercises 5..12 and 34 (lessons/exercises/concepts.h): softmax with a
# temperature, LayerNorm and RMSNorm, RoPE, causal attention, SwiGLU, top-p sampling, the backward
# of Linear and of softmax with cross-entropy, GPT-2's byte-to-unicode map (34). The same
# mechanism as the kernel exercises 1..4 in mk/simd.mk:
#   make exerciseN              build your lessons/exercises/exN_*.c with check_concepts.c, run it
#   make exerciseN SOLUTION=1   the same with solutions/exN_*.c
#   make test-concept-exercises every solution passes, every stub says "not implemented yet"
#                               (part of `make test`)
CEX_NUMS := 5 6 7 8 9 10 11 12 34
# Exercises with a classic wrong attempt in lessons/exercises/wrong/: the checker must reject it.
CEX_WRONG_NUMS := 34
CEX_DIR  := lessons/exercises
CEX_KIND := $(if $(filter 1,$(SOLUTION)),solution,stub)

# The checker of exercise N is compiled once and linked with the stub and with the solution.
# $(1) = N
define CONCEPT_EXERCISE_CHECK_RULE
$(BUILD)/exercises/check$(1).o: $(CEX_DIR)/check_concepts.c $(CEX_DIR)/concepts.h
	@mkdir -p $$(@D)
	$$(call say,CC,$$<)$$(CC) $$(CSTD) $$(WARN) $$(FPFLAGS) $$(CPPFLAGS) -I$(CEX_DIR) -DEXERCISE=$(1) $$(CFLAGS) -c $$< -o $$@
endef
$(foreach n,$(CEX_NUMS),$(eval $(call CONCEPT_EXERCISE_CHECK_RULE,$(n))))
# $(1) = N, $(2) = build subfolder (stub|solution), $(3) = folder of the exercise source
define CONCEPT_EXERCISE_RULES
$(BUILD)/exercises/$(2)/ex$(1).o: $$(wildcard $(3)/ex$(1)_*.c) $(CEX_DIR)/concepts.h
	@mkdir -p $$(@D)
	$$(call say,CC,$$@)$$(CC) $$(CSTD) $$(WARN) $$(FPFLAGS) $$(CPPFLAGS) -I$(CEX_DIR) $$(CFLAGS) -c $$(wildcard $(3)/ex$(1)_*.c) -o $$@
$(BUILD)/exercises/$(2)/exercise$(1): $(BUILD)/exercises/check$(1).o $(BUILD)/exercises/$(2)/ex$(1).o $(LIB)
	$$(call say,LD,$$@)$$(CC) $$(LDFLAGS) $$^ $$(LDLIBS) -o $$@
endef
$(foreach n,$(CEX_NUMS),$(eval $(call CONCEPT_EXERCISE_RULES,$(n),stub,$(CEX_DIR))))
$(foreach n,$(CEX_NUMS),$(eval $(call CONCEPT_EXERCISE_RULES,$(n),solution,$(CEX_DIR)/solutions)))
$(foreach n,$(CEX_WRONG_NUMS),$(eval $(call CONCEPT_EXERCISE_RULES,$(n),wrong,$(CEX_DIR)/wrong)))

.PHONY: $(addprefix exercise,$(CEX_NUMS)) test-concept-exercises
$(addprefix exercise,$(CEX_NUMS)): exercise%: $(BUILD)/exercises/$(CEX_KIND)/exercise%   ## exerciseN (5..12): check your function against lib/
	cp $< $@
	./$@

test-concept-exercises: $(foreach n,$(CEX_NUMS),$(BUILD)/exercises/stub/exercise$(n) $(BUILD)/exercises/solution/exercise$(n)) $(foreach n,$(CEX_WRONG_NUMS),$(BUILD)/exercises/wrong/exercise$(n))   ## solutions pass, stubs fail politely, wrong attempts fail
	@for n in $(CEX_NUMS); do \
	  ./$(BUILD)/exercises/solution/exercise$$n > $(BUILD)/exercises/sol$$n.log 2>&1 \
	    || { echo "solution $$n fails the checker:"; cat $(BUILD)/exercises/sol$$n.log; exit 1; }; \
	  grep -q '^PASS' $(BUILD)/exercises/sol$$n.log || { echo "solution $$n: no PASS line"; exit 1; }; \
	  if ./$(BUILD)/exercises/stub/exercise$$n > $(BUILD)/exercises/stub$$n.log 2>&1; then \
	    echo "stub $$n passes the checker without being implemented"; exit 1; fi; \
	  grep -q '^not implemented yet' $(BUILD)/exercises/stub$$n.log \
	    || { echo "stub $$n did not fail politely:"; cat $(BUILD)/exercises/stub$$n.log; exit 1; }; \
	done; \
	for n in $(CEX_WRONG_NUMS); do \
	  if ./$(BUILD)/exercises/wrong/exercise$$n > $(BUILD)/exercises/wrong$$n.log 2>&1; then \
	    echo "the wrong attempt at exercise $$n (lessons/exercises/wrong/) passes the checker"; exit 1; fi; \
	  grep -q '^FAIL' $(BUILD)/exercises/wrong$$n.log || { echo "wrong attempt $$n: no FAIL line"; cat $(BUILD)/exercises/wrong$$n.log; exit 1; }; \
	done; echo "concept exercises: $(words $(CEX_NUMS)) solutions pass the checker, $(words $(CEX_NUMS)) stubs report 'not implemented yet', $(words $(CEX_WRONG_NUMS)) wrong attempt(s) rejected"
TEST_DEPS   += test-concept-exercises
CLEAN_FILES += $(addprefix exercise,$(CEX_NUMS))
