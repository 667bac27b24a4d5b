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

# make sft-eval: fine-tunes the grown stories260K on the instruction set twice, the same steps and
# seed: all weights (out/sft/full.bin) and LoRA r 4 on wq,wv (out/sft/lora*.bin), then prints
# sft_eval's table: how often an answer to a held-out word's prompt names it, against the grown
# base given the same prompt; the loss on the stories' validation split (what was forgotten).
# Several minutes on one core (docs/finetuning.md has the table seen and the CPU): not in .ci/extra.
SFT_STEPS   ?= 200
SFT_SAMPLES ?= 20
SFT_TRAIN = --tokens $(SFT_DIR)/train.bin --mask $(SFT_DIR)/train_mask.bin --steps $(SFT_STEPS) --batch 8 \
  --seq 256 --seed 1 --val $(STORY_DIR)/val.bin --eval-every $(SFT_STEPS) --eval-batches 4 --sample-every 0 --curve none
.PHONY: sft-eval
sft-eval: train $(BUILD)/tools/make_sft $(BUILD)/tools/sft_eval   ## fine-tune (full, LoRA) on the instruction set; the table
	@test -s $(SFT_DIR)/train.bin || $(MAKE) --no-print-directory sft-data
	@test -s $(STORY_DIR)/val.bin || $(MAKE) --no-print-directory stories
	@mkdir -p out/sft
	./train --init $(SFT_DIR)/model.bin $(SFT_TRAIN) --lr 1e-3 --min-lr 1e-4 --out out/sft/full.bin > out/sft/full.log
	./train --init $(SFT_DIR)/model.bin $(SFT_TRAIN) --lr 5e-3 --min-lr 5e-4 --lora 4 --lora-alpha 8 \
	  --lora-targets wq,wv --out out/sft/lora.bin --merged out/sft/lora_merged.bin > out/sft/lora.log
	./$(BUILD)/tools/sft_eval $(SFT_DIR)/tok.bin $(STORY_DIR)/val.bin --samples $(SFT_SAMPLES) \
	  base=$(SFT_DIR)/model.bin full=out/sft/full.bin lora=out/sft/lora_merged.bin
	@grep -m1 'model name' /proc/cpuinfo 2>/dev/null || sysctl -n machdep.cpu.brand_string 2>/dev/null || true
CLEAN_FILES += out/sft
