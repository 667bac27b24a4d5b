# mk/exercises.mk: the concept exercises 5..12 and 13..25 (lessons/exercises/concepts.h), one or
# more per lesson: softmax with a temperature, LayerNorm and RMSNorm, RoPE, causal attention,
# SwiGLU, top-p sampling, the backward of Linear and of softmax with cross-entropy, BPE encoding,
# the embedding backward, splitting into heads, a pre-norm block, counting parameters, AdamW,
# Q8_0, a BPE merge, beam search, the logit lens, decoding a token, gradient clipping, the
# learning-rate schedule, a proposal of speculative decoding, a block-table lookup. The same mechanism as the kernel exercises 1..4 in mk/simd.mk:
#   make exerciseN              build your lessons/exercises/exN_*.c with check_concepts.c, run it
#   make exerciseN SOLUTION=1   the same with solutions/exN_*.c
#   make test-concept-exercises every solution passes, every stub says "not implemented yet", and
#                               every classic wrong attempt (wrong/exN_*.c) is rejected with the
#                               message its "The checker says:" line names (part of `make test`)
CEX_NUMS := 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 27 28 30 31 33 34 35 36 37 38 39 40 42 43
CEX_DIR  := lessons/exercises
CEX_KIND := $(if $(filter 1,$(SOLUTION)),solution,stub)

# The checker of exercise N is compiled once and linked with the stub, the solution and the wrong
# attempt. $(1) = N
define CONCEPT_EXERCISE_CHECK_RULE
$(BUILD)/exercises/check$(1).o: $(CEX_DIR)/check_concepts.c $(CEX_DIR)/concepts.h
	@mkdir -p $$(@D)
	$$(call say,CC,$$<)$$(CC) $$(CSTD) $$(WARN) $$(FPFLAGS) $$(CPPFLAGS) -I$(CEX_DIR) -DEXERCISE=$(1) $$(CFLAGS) -MMD -MP -c $$< -o $$@
endef
$(foreach n,$(CEX_NUMS),$(eval $(call CONCEPT_EXERCISE_CHECK_RULE,$(n))))
# Beside each exercise object, source_name.o records the path of the file it was built from, so
# the checker names the file actually built (your stub, the solution or a wrong attempt).
# $(1) = N, $(2) = build subfolder (stub|solution|wrong), $(3) = folder of the exercise source
define CONCEPT_EXERCISE_RULES
$(BUILD)/exercises/$(2)/ex$(1).o: $$(wildcard $(3)/ex$(1)_*.c) $(CEX_DIR)/concepts.h
	@mkdir -p $$(@D)
	$$(call say,CC,$$@)$$(CC) $$(CSTD) $$(WARN) $$(FPFLAGS) $$(CPPFLAGS) -I$(CEX_DIR) $$(CFLAGS) -MMD -MP -c $$(wildcard $(3)/ex$(1)_*.c) -o $$@
$(BUILD)/exercises/$(2)/name$(1).o: $(CEX_DIR)/source_name.c
	@mkdir -p $$(@D)
	$$(call say,CC,$$@)$$(CC) $$(CSTD) $$(WARN) -DEX_SOURCE='"$$(wildcard $(3)/ex$(1)_*.c)"' -c $$< -o $$@
$(BUILD)/exercises/$(2)/exercise$(1): $(BUILD)/exercises/check$(1).o $(BUILD)/exercises/$(2)/ex$(1).o $(BUILD)/exercises/$(2)/name$(1).o $(LIB)
	$$(call say,LD,$$@)$$(CC) $$(LDFLAGS) $$^ $$(LDLIBS) -o $$@
endef
$(foreach n,$(CEX_NUMS),$(eval $(call CONCEPT_EXERCISE_RULES,$(n),stub,$(CEX_DIR))))
$(foreach n,$(CEX_NUMS),$(eval $(call CONCEPT_EXERCISE_RULES,$(n),solution,$(CEX_DIR)/solutions)))
$(foreach n,$(CEX_NUMS),$(eval $(call CONCEPT_EXERCISE_RULES,$(n),wrong,$(CEX_DIR)/wrong)))
# The headers each checker and exercise object read (-MMD): a change to a library struct such as
# tw_block_config rebuilds them (a stale checker once read an old layout: "cannot make the block").
-include $(wildcard $(BUILD)/exercises/*.d $(BUILD)/exercises/*/*.d)

# The test of a set of exercises (shared with mk/simd.mk). For each N: the solution exits 0 with a
# PASS line; the stub exits non-zero with "not implemented yet"; the wrong attempt exits non-zero
# with a FAIL line that contains the text after "// The checker says: " in wrong/exN_*.c (so it
# is rejected for the mistake it makes, not by accident).
# $(1) = the numbers, $(2) = arguments for every run
define EXERCISE_TEST_LOOP
for n in $(1); do \
  d=$(BUILD)/exercises; \
  ./$$d/solution/exercise$$n $(2) > $$d/sol$$n.log 2>&1 \
    || { echo "solution $$n fails the checker:"; cat $$d/sol$$n.log; exit 1; }; \
  grep -q '^PASS' $$d/sol$$n.log || { echo "solution $$n: no PASS line"; exit 1; }; \
  if ./$$d/stub/exercise$$n $(2) > $$d/stub$$n.log 2>&1; then \
    echo "stub $$n passes the checker without being implemented"; exit 1; fi; \
  grep -q '^not implemented yet' $$d/stub$$n.log \
    || { echo "stub $$n did not fail politely:"; cat $$d/stub$$n.log; exit 1; }; \
  w=$$(ls $(CEX_DIR)/wrong/ex$${n}_*.c); \
  says=$$(sed -n 's|^// The checker says: ||p' $$w); \
  [ -n "$$says" ] || { echo "$$w: no '// The checker says: ' line"; exit 1; }; \
  if ./$$d/wrong/exercise$$n $(2) > $$d/wrong$$n.log 2>&1; then \
    echo "the checker of exercise $$n accepts the wrong attempt $$w:"; cat $$d/wrong$$n.log; exit 1; fi; \
  grep '^FAIL' $$d/wrong$$n.log | grep -qF -- "$$says" \
    || { echo "exercise $$n: $$w should fail with \"$$says\", got:"; cat $$d/wrong$$n.log; exit 1; }; \
done
endef

.PHONY: $(addprefix exercise,$(CEX_NUMS)) test-concept-exercises
$(addprefix exercise,$(CEX_NUMS)): exercise%: $(BUILD)/exercises/$(CEX_KIND)/exercise%   ## exerciseN (5..25): check your function against lib/
	cp $< $@
	./$@

test-concept-exercises: $(foreach k,stub solution wrong,$(foreach n,$(CEX_NUMS),$(BUILD)/exercises/$(k)/exercise$(n)))   ## solutions 5..25 pass, stubs fail politely, wrong attempts are rejected
	@$(call EXERCISE_TEST_LOOP,$(CEX_NUMS),) && echo "concept exercises: $(words $(CEX_NUMS)) solutions pass the checker, $(words $(CEX_NUMS)) stubs report 'not implemented yet', $(words $(CEX_NUMS)) wrong attempts are rejected for their mistake"
TEST_DEPS   += test-concept-exercises
CLEAN_FILES += $(addprefix exercise,$(CEX_NUMS))
