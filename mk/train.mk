# mk/train.mk: training (issue 12): the corpus, and the programs around the trainer.
#
#   make stories          data/stories/{train,val}.{bin,txt} and floor.txt: a deterministic corpus
#                         of short stories sampled from stories260K (temperature 1, seed 1337,
#                         STORY_TOKENS tokens) and the teacher's floor on its validation split
# See docs/training.md.

STORY_DIR    := data/stories
STORY_TOKENS ?= 500000
STORY_SEED   ?= 1337

.PHONY: stories
$(BUILD)/tools/make_stories: $(BUILD)/tools/make_stories.o $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

stories: model $(BUILD)/tools/make_stories   ## sample the stories corpus + the teacher's floor into data/stories/
	./$(BUILD)/tools/make_stories $(MODEL_BIN) $(MODEL_TOK) $(STORY_DIR) --tokens $(STORY_TOKENS) --seed $(STORY_SEED)

TEST_DEPS += $(BUILD)/tools/make_stories

PROGRAMS += train
.PHONY: train
train: $(BUILD)/tools/train.o $(LIB)            ## ./train: train a model (flags as llama2.c's train.py; see docs/training.md)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
TEST_DEPS += train

# make bench-train: training tokens/s (forward + backward + AdamW) for the stories260K shape and
# llama2.c's 15M shape, naive and best SIMD level, one thread, the GFLOP/s against the FMA peak
# of the same run, and PyTorch's speed on the same batch when /usr/bin/python3 has torch.
BENCH_TRAIN_OBJ := $(BUILD)/tools/bench_train.o
ifneq ($(filter -DTW_HAVE_AVX2,$(CPPFLAGS)),)
  BENCH_TRAIN_OBJ += $(BUILD)/bench/probe_avx2.o $(BUILD)/bench/probe_avx512.o
endif
$(BUILD)/tools/bench_train: $(BENCH_TRAIN_OBJ) $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
TEST_DEPS += $(BUILD)/tools/bench_train

.PHONY: bench-train
bench-train: model $(CKPT15M) $(BUILD)/tools/bench_train   ## training tokens/s: naive vs SIMD, vs PyTorch
	./$(BUILD)/tools/bench_train $(MODEL_BIN) -b 8 -t 256 -s 5
	./$(BUILD)/tools/bench_train $(CKPT15M) -b 4 -t 256 -s 3
