# mk/hardening.mk: hostile-input hardening (docs/hardening.md).
#
#   make fuzz        build the libFuzzer targets (fuzz/*.c) with clang and
#                    -fsanitize=fuzzer,address,undefined in build-fuzz/, then run each one for
#                    FUZZ_SECONDS (default 30) from the committed corpus; stops at the first crash
#                    and leaves the input in build-fuzz/fuzz/artifacts/. FUZZ_TARGETS="npy json" to
#                    pick targets, FUZZ_CC=clang-14 to pick the compiler. The kernels_* targets are
#                    differential: each SIMD kernel family at every level this CPU has against
#                    the reference the naive model runs, on float rows full of extremes
#                    (fuzz/fuzz_kernels_*.c, tests/simd_range.h); they abort on a disagreement.
#   make valgrind    the Check suite and every lesson under valgrind --leak-check=full
#                    --error-exitcode=1: any invalid access or leak fails the target
#   make corpus      regenerate the corrupted-input corpus data/corrupt/ (tests/corrupt/make_corpus.py)
#                    and the fuzzers' seed files under fuzz/corpus/
# tests/test_corrupt.c (part of `make test`) runs every reader and program on data/corrupt/.

PYTHON3      ?= python3
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 30
FUZZ_KERNELS := kernels_dot kernels_norm kernels_softmax kernels_silu kernels_attend
# Every fuzz target file (fuzz/fuzz_*.c) is a target: a new one cannot be left out of make fuzz.
FUZZ_TARGETS ?= $(sort $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c)))
FUZZ_BUILD   := build-fuzz
FUZZ_TMPDIR  := $(shell if [ -d /dev/shm ] && [ -w /dev/shm ]; then echo /dev/shm; else echo $${TMPDIR:-/tmp}; fi)
# Coverage instrumentation for the library and the targets; libFuzzer's main only at the link.
FUZZ_CFLAGS  := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
                -fno-sanitize-recover=undefined
FUZZ_LINK    := -fsanitize=fuzzer,address,undefined
# Longest input per target: big enough for the seed files, small enough to stay fast.
FUZZ_MAXLEN_npy       := 4096
FUZZ_MAXLEN_json      := 4096
FUZZ_MAXLEN_llama2c   := 8192
FUZZ_MAXLEN_tokenizer := 8192
FUZZ_MAXLEN_encode    := 1024
FUZZ_MAXLEN_q8file    := 8192
FUZZ_MAXLEN_train_state := 8192
FUZZ_MAXLEN_tokens    := 1024
# lora: the seeds are 2.6 KB (r 1 on wq) and 18 KB (r 2 on three targets).
FUZZ_MAXLEN_lora      := 20000
# the byte-level BPE readers: a synthetic tokenizer.json of 256 pieces is about 3.4 KB
FUZZ_MAXLEN_hfjson    := 8192
FUZZ_MAXLEN_gpt2      := 8192
# The kernel targets: a row of up to 600 floats takes up to 600-2400 bytes; attention S x D more.
FUZZ_MAXLEN_kernels   := 8192
# Read-only seed folders besides fuzz/corpus/<target>/: the corrupted files the tests also use.
FUZZ_SEEDS_npy     := data/corrupt/npy
FUZZ_SEEDS_json    := data/corrupt/json
FUZZ_SEEDS_llama2c := data/corrupt/llama2c
FUZZ_SEEDS_q8file  := data/corrupt/q8file
FUZZ_SEEDS_train_state := data/corrupt/twstate
FUZZ_SEEDS_tokens  := data/corrupt/tokens
FUZZ_SEEDS_lora    := data/corrupt/lora
# models with experts (TWMX, lib/train/moe_file.h): the seeds are about 1 KB
FUZZ_MAXLEN_moe_file := 4096
FUZZ_SEEDS_moe_file  := data/corrupt/twmx

.PHONY: fuzz fuzz-bins valgrind corpus

fuzz: model                                    ## run every libFuzzer target for FUZZ_SECONDS each (clang)
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || { echo "fuzz: $(FUZZ_CC) not found: install clang and libclang-rt-14-dev (Debian) or use Xcode's clang (macOS), or set FUZZ_CC" >&2; exit 1; }
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) CFLAGS="$(FUZZ_CFLAGS)" fuzz-bins
	@mkdir -p $(FUZZ_BUILD)/fuzz/artifacts
	@echo "fuzz: the path-based readers get each input through a file in $(FUZZ_TMPDIR)"
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/fuzz/work/$$t; \
	  case $$t in npy) ml=$(FUZZ_MAXLEN_npy); seeds="$(FUZZ_SEEDS_npy)";; \
	    json) ml=$(FUZZ_MAXLEN_json); seeds="$(FUZZ_SEEDS_json)";; \
	    moe_config) ml=$(FUZZ_MAXLEN_json); seeds="$(FUZZ_SEEDS_json)";; \
	    llama2c) ml=$(FUZZ_MAXLEN_llama2c); seeds="$(FUZZ_SEEDS_llama2c)";; \
	    tokenizer) ml=$(FUZZ_MAXLEN_tokenizer); seeds="";; \
	    q8file) ml=$(FUZZ_MAXLEN_q8file); seeds="$(FUZZ_SEEDS_q8file)";; \
	    train_state) ml=$(FUZZ_MAXLEN_train_state); seeds="$(FUZZ_SEEDS_train_state)";; \
	    tokens) ml=$(FUZZ_MAXLEN_tokens); seeds="$(FUZZ_SEEDS_tokens)";; \
	    lora) ml=$(FUZZ_MAXLEN_lora); seeds="$(FUZZ_SEEDS_lora)";; \
	    hfjson) ml=$(FUZZ_MAXLEN_hfjson); seeds="";; \
	    gpt2) ml=$(FUZZ_MAXLEN_gpt2); seeds="";; \
	    moe_file) ml=$(FUZZ_MAXLEN_moe_file); seeds="$(FUZZ_SEEDS_moe_file)";; \
	    kernels_*) ml=$(FUZZ_MAXLEN_kernels); seeds="";; \
	    *) ml=$(FUZZ_MAXLEN_encode); seeds="";; esac; \
	  dict=""; if [ -f fuzz/$$t.dict ]; then dict="-dict=fuzz/$$t.dict"; fi; \
	  corpus=""; if [ -d fuzz/corpus/$$t ]; then corpus=fuzz/corpus/$$t; fi; \
	  log=$(FUZZ_BUILD)/fuzz/$$t.log; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s (log: $$log)"; \
	  if TMPDIR=$(FUZZ_TMPDIR) ./$(FUZZ_BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	       -max_len=$$ml $$dict -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/fuzz/artifacts/$$t- \
	       $(FUZZ_BUILD)/fuzz/work/$$t $$corpus $$seeds > $$log 2>&1; then \
	    execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $$log); \
	    echo "fuzz: $$t: $$execs inputs, no crash"; \
	  else \
	    tail -n 40 $$log; \
	    echo "fuzz: $$t FAILED: the input is in $(FUZZ_BUILD)/fuzz/artifacts/ (reproduce: ./$(FUZZ_BUILD)/fuzz/fuzz_$$t FILE)" >&2; \
	    exit 1; \
	  fi; \
	done

fuzz-bins: $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))
.SECONDARY: $(patsubst %,$(BUILD)/fuzz/fuzz_%.o,$(FUZZ_TARGETS))

# The differential targets share the checks of the Check suite (tests/simd_range.h).
$(BUILD)/fuzz/fuzz_kernels_%.o: CPPFLAGS += -Itests
# The targets' header dependencies (-MMD), so a changed check or reader header rebuilds them.
-include $(patsubst %,$(BUILD)/fuzz/fuzz_%.d,$(FUZZ_TARGETS))

$(BUILD)/fuzz/fuzz_%: $(BUILD)/fuzz/fuzz_%.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $(FUZZ_LINK) $^ $(LDLIBS) -o $@

# valgrind: the suite in-process (CK_FORK=no, so the tests themselves are checked, not a fork
# parent), then each lesson with its output in a scratch folder. The lessons run from their
# $(BUILD)/lessons/ binaries, not the ./lessonN copies, which may come from another build (after
# `make asan` they hold the ASan runtime, which cannot run under valgrind). Programs the suite
# starts with system() are not traced; they are covered by `make asan`.
VALGRIND := valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect,possible \
            --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=1
VALGRIND_OUT := $(BUILD)/valgrind-out
# (= not :=: LESSON_SRC is set by mk/lessons.mk, which may be read after this file)
# A lesson that would take many minutes under valgrind (it runs code tens of times slower) says
# "// Valgrind: skip" in its header, with the reason: the library code it runs is in the suite,
# which runs under valgrind above. Lessons 14, 18, 25, 28 and 29 say so.
VALGRIND_SKIPPED = $(shell grep -l '^// Valgrind: skip' $(LESSON_SRC))
VALGRIND_LESSONS = $(patsubst lessons/%.c,$(BUILD)/lessons/%,$(filter-out $(VALGRIND_SKIPPED),$(LESSON_SRC)))
valgrind: $(BUILD)/tests/run_tests $$(TEST_DEPS) ## the suite and every lesson under valgrind (no errors, no leaks)
	@command -v valgrind >/dev/null 2>&1 || { echo "valgrind: not installed: 'sudo apt-get install -y valgrind' (Linux only)" >&2; exit 1; }
	@$(MAKE) --no-print-directory $(VALGRIND_LESSONS)
	CK_FORK=no $(VALGRIND) ./$(BUILD)/tests/run_tests
	@rm -rf $(VALGRIND_OUT)
	@for l in $(VALGRIND_LESSONS); do \
	  echo "valgrind: $$l"; \
	  $(VALGRIND) ./$$l --no-plot --out $(VALGRIND_OUT)/$$(basename $$l) > /dev/null || { echo "valgrind: $$l failed" >&2; exit 1; }; \
	done
	@echo "valgrind: suite and $(words $(VALGRIND_LESSONS)) lessons clean"

corpus:                                        ## regenerate data/corrupt/ and fuzz/corpus/ seeds
	$(PYTHON3) tests/corrupt/make_corpus.py
