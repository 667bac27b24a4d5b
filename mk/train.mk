# mk/train.mk: training (issue 12): the corpus, and the programs around the trainer.
#
#   make stories          data/stories/{train,val}.{bin,txt} and floor.txt: a deterministic corpus
#                         of short stories sampled from stories260K (temperature 1, seed 1337,
#                         STORY_TOKENS tokens) and the teacher's floor on its validation split
# See docs/training.md.

STORY_DIR    := data/stories
STORY_TOKENS ?= 2000000
STORY_SEED   ?= 1337

.PHONY: stories
$(BUILD)/tools/make_stories: $(BUILD)/tools/make_stories.o $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

stories: model $(BUILD)/tools/make_stories   ## sample the stories corpus + the teacher's floor into data/stories/
	./$(BUILD)/tools/make_stories $(MODEL_BIN) $(MODEL_TOK) $(STORY_DIR) --tokens $(STORY_TOKENS) --seed $(STORY_SEED)

TEST_DEPS += $(BUILD)/tools/make_stories

PROGRAMS += train
.PHONY: train
train: $(BUILD)/tools/train.o $(BUILD)/tools/train_grpo.o $(BUILD)/tools/train_dpo.o $(BUILD)/tools/comm_single.o $(LIB)   ## ./train: train a model (flags as llama2.c's train.py; see docs/training.md)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
TEST_DEPS += train

# make bench-train lives in mk/train_bench.mk (tools/bench_train.c, tools/bench_train_torch.py).

# ---- ./train on OpenMP threads ----
# Builds ./train with OpenMP (OMP=1) in its own build folder, runs the deterministic mode of
# tests/test_train_cli.c with --threads 1 and --threads 2 on it, and requires the 2-thread run's
# weights to be byte-identical to this build's --threads 2 (its 2 parts one after the other): the
# split, not the thread count, fixes every sum. The 1-thread and 2-part runs are each held to
# PyTorch's losses and weights by make test (test_train_cli.c). Not part of make test: it
# compiles lib/ a second time.
OMP_TRAIN_BUILD := $(BUILD)-omp
TRAIN_DET := --init data/golden/train/llama/init.bin --tokens data/golden/train/llama/tokens.bin \
  --no-shuffle --batch 3 --seq 12 --steps 10 --lr 5e-3 --warmup 0 --min-lr 5e-3 --weight-decay 0.1 \
  --beta1 0.9 --beta2 0.99 --eps 1e-8 --clip 1 --curve none
.PHONY: test-train-omp
test-train-omp: train                            ## ./train built with OpenMP: 2 threads == 2 parts on 1, byte for byte
	@$(MAKE) --no-print-directory OMP=1 BUILD=$(OMP_TRAIN_BUILD) $(OMP_TRAIN_BUILD)/libtw.a $(OMP_TRAIN_BUILD)/tools/train.o
	@$(MAKE) --no-print-directory OMP=1 BUILD=$(OMP_TRAIN_BUILD) $(OMP_TRAIN_BUILD)/tools/comm_single.o $(OMP_TRAIN_BUILD)/tools/train_grpo.o $(OMP_TRAIN_BUILD)/tools/train_dpo.o
	$(call say,LD,$(OMP_TRAIN_BUILD)/train)$(CC) $(LDFLAGS) $(OMPLIBS) $(OMP_TRAIN_BUILD)/tools/train.o $(OMP_TRAIN_BUILD)/tools/train_grpo.o $(OMP_TRAIN_BUILD)/tools/train_dpo.o $(OMP_TRAIN_BUILD)/tools/comm_single.o $(OMP_TRAIN_BUILD)/libtw.a $(LDLIBS) -o $(OMP_TRAIN_BUILD)/train
	@mkdir -p out/train-omp
	./$(OMP_TRAIN_BUILD)/train $(TRAIN_DET) --threads 2 --out out/train-omp/omp2.bin > out/train-omp/omp2.txt
	./train $(TRAIN_DET) --threads 2 --out out/train-omp/serial2.bin > out/train-omp/serial2.txt 2>/dev/null
	@cmp out/train-omp/omp2.bin out/train-omp/serial2.bin
	@echo "test-train-omp: ./train --threads 2 on 2 OpenMP threads wrote the same bytes as its 2 parts on one thread"
CLEAN_FILES += out/train-omp
