# mk/exercises_wrong.mk: classic wrong attempts at the concept exercises (lessons/exercises/wrong/),
# each built with its exercise's checker (the rules of mk/exercises.mk), which must reject it:
#   make test-wrong-attempts   every wrong attempt fails its checker with a FAIL line (part of
#                              `make test`)
CEX_WRONG := 35 36
$(foreach n,$(CEX_WRONG),$(eval $(call CONCEPT_EXERCISE_RULES,$(n),wrong,$(CEX_DIR)/wrong)))

.PHONY: test-wrong-attempts
test-wrong-attempts: $(foreach n,$(CEX_WRONG),$(BUILD)/exercises/wrong/exercise$(n))   ## the checkers reject the classic wrong attempts
	@for n in $(CEX_WRONG); do \
	  if ./$(BUILD)/exercises/wrong/exercise$$n > $(BUILD)/exercises/wrong$$n.log 2>&1; then \
	    echo "exercise $$n: the checker accepted the wrong attempt lessons/exercises/wrong/ex$$n"_*.c; exit 1; fi; \
	  grep -q '^FAIL' $(BUILD)/exercises/wrong$$n.log \
	    || { echo "exercise $$n: the wrong attempt did not fail with a FAIL line:"; cat $(BUILD)/exercises/wrong$$n.log; exit 1; }; \
	done; echo "wrong attempts: $(words $(CEX_WRONG)) rejected by their checkers"
TEST_DEPS += test-wrong-attempts
