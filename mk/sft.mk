# mk/sft.mk: supervised fine-tuning's data and measurement (docs/finetuning.md).
#
#   make add-tokens   ./add-tokens BASE.bin TOK.bin --tokens '<|user|>,...' --out-model M.bin
#                     --out-tokenizer T.bin: new special tokens (mean-initialised rows)

PROGRAMS += add-tokens
add-tokens: $(BUILD)/tools/add_tokens.o $(LIB)   ## ./add-tokens: new special tokens for a model and its tokenizer
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
TEST_DEPS += add-tokens

# make sft-data: the instruction set (tools/make_sft.c): data/sft/{model,tok,train,train_mask}.bin
# and train.txt, "a story about WORD" answered by stories260K's own stories that name WORD.
SFT_DIR      := data/sft
SFT_PER_WORD ?= 20
SFT_SEED     ?= 4242
.PHONY: sft-data
$(BUILD)/tools/make_sft: $(BUILD)/tools/make_sft.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
sft-data: model $(BUILD)/tools/make_sft          ## the instruction set + grown model into data/sft/ (docs/finetuning.md)
	./$(BUILD)/tools/make_sft $(MODEL_BIN) $(MODEL_TOK) $(SFT_DIR) --per-word $(SFT_PER_WORD) --seed $(SFT_SEED)
TEST_DEPS += $(BUILD)/tools/make_sft
$(BUILD)/tools/sft_eval: $(BUILD)/tools/sft_eval.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
TEST_DEPS += $(BUILD)/tools/sft_eval
