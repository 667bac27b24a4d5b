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

# make bench-train lives in mk/train_bench.mk (tools/bench_train.c, tools/bench_train_torch.py).
