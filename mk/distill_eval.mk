# mk/distill_eval.mk: distillation measured (issue 27).
#
#   make distill-eval     a student (dim 32, 2 layers, from scratch, seed 1) trained on a small
#                         stories corpus (DISTILL_TOKENS tokens sampled from stories260K, seed 1337,
#                         made once in out/distill/stories/) with stories260K's soft targets, against
#                         the same student on the hard labels, the same steps and batches; prints
#                         both validation losses against the teacher's floor, and the CPU
#   make distill-eval DISTILL_ARGS='--temp 1 --alpha 0.5 --steps 300'   other settings
# See docs/distillation.md. About a minute of CPU: 25 s for the corpus (the first time only) and
# 35 s for the two students (measured, docs/distillation.md); .ci/extra runs it.

DISTILL_DIR    := out/distill/stories
DISTILL_TOKENS ?= 300000
DISTILL_ARGS   ?=

$(BUILD)/tools/distill_eval.o: CPPFLAGS += -Ibench
$(BUILD)/tools/distill_eval: $(BUILD)/tools/distill_eval.o $(BUILD)/bench/bench_clock.o $(BUILD)/bench/cpuinfo.o $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

.PHONY: distill-eval
distill-eval: model $(BUILD)/tools/make_stories $(BUILD)/tools/distill_eval   ## soft targets against hard labels: a small student's val loss vs the teacher's floor
	@mkdir -p $(dir $(DISTILL_DIR))
	@[ -f $(DISTILL_DIR)/val.bin ] || ./$(BUILD)/tools/make_stories $(MODEL_BIN) $(MODEL_TOK) $(DISTILL_DIR) \
	  --tokens $(DISTILL_TOKENS) --seed 1337
	./$(BUILD)/tools/distill_eval $(MODEL_BIN) $(DISTILL_DIR)/train.bin $(DISTILL_DIR)/val.bin $(DISTILL_ARGS)
