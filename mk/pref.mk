# mk/pref.mk: preferences (issue 30; docs/preferences.md).
#
#   make pref-data   data/pref/pairs.bin: a preference set sampled from stories260K (seeded): for
#                    each prompt of the instruction set, "a story about WORD" for the words of
#                    tw_sft_train_words (lib/train/chat_template.c), a chosen completion that
#                    contains WORD and a rejected one that does not (tools/make_pref.c)
#   make dpo-eval    the rule's satisfaction rate of sampled answers before and after ./train --dpo
#                    on stories260K, with the KL from the reference (tools/pref_eval.c); exit 1 if
#                    the rate did not at least double (the goal). .ci/extra runs it
#   make pref-data PREF_MODEL=data/sft/model.bin PREF_TOK=data/sft/tok.bin   (after make sft-data)
#                    the same from a model whose tokenizer holds the chat template's special
#                    tokens: the prompts are BOS <|user|>a story about WORD<|assistant|> and an
#                    answer ends at <|end|>; dpo-eval takes the same two variables

PREF_DIR   := data/pref
PREF_PAIRS ?= $(PREF_DIR)/pairs.bin
PREF_SEED  ?= 30
PREF_MODEL ?= $(MODEL_BIN)
PREF_TOK   ?= $(MODEL_TOK)
DPO_OUT    := out/dpo
# The run make dpo-eval measures (docs/preferences.md explains the choices).
DPO_FLAGS  ?= --dpo-beta 0.5 --batch 8 --steps 20 --lr 2e-4 --min-lr 2e-5 --warmup 2 --weight-decay 0 --clip 1 --seed 1

$(BUILD)/tools/make_pref: $(BUILD)/tools/make_pref.o $(BUILD)/tools/pref_common.o $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/tools/pref_eval: $(BUILD)/tools/pref_eval.o $(BUILD)/tools/pref_common.o $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
TEST_DEPS += $(BUILD)/tools/make_pref $(BUILD)/tools/pref_eval

.PHONY: pref-data dpo-eval
pref-data: model $(BUILD)/tools/make_pref   ## a preference set sampled from stories260K (PREF_MODEL, PREF_TOK): data/pref/pairs.bin
	@test -f $(PREF_MODEL) -a -f $(PREF_TOK) || { echo "pref-data: $(PREF_MODEL) or $(PREF_TOK) is missing: for data/sft/, run make sft-data first"; exit 1; }
	@mkdir -p $(dir $(PREF_PAIRS))
	./$(BUILD)/tools/make_pref $(PREF_MODEL) $(PREF_TOK) $(PREF_PAIRS) --seed $(PREF_SEED)

dpo-eval: pref-data train $(BUILD)/tools/pref_eval   ## DPO on stories260K: the rule's rate before and after, and the KL paid
	@mkdir -p $(DPO_OUT)
	@grep -m1 'model name' /proc/cpuinfo 2>/dev/null || sysctl -n machdep.cpu.brand_string 2>/dev/null || true
	./train --init $(PREF_MODEL) --dpo $(PREF_PAIRS) $(DPO_FLAGS) --out $(DPO_OUT)/model.bin
	./$(BUILD)/tools/pref_eval --model $(DPO_OUT)/model.bin --ref $(PREF_MODEL) -z $(PREF_TOK) --min-ratio 2
CLEAN_FILES += $(DPO_OUT)
