# mk/model.mk: the real pretrained model (stories260K, llama2.c format) and the programs that run it.
#
#   make model            put stories260K.bin and tok512.bin in data/models/ (git-ignored): copied
#                         from ../shared/models/ when that folder exists, else downloaded with curl (or wget;
#                         with neither, tools/need_check.sh curl installs curl as make test installs Check);
#                         both are checked against their sha256
#   make generate         ./generate, llama2.c's flags:  ./generate data/models/stories260K.bin \
#                           -z data/models/tok512.bin -t 0 -n 256 -i "Once upon a time"
#   make npydiff          ./npydiff DIR_A DIR_B [--atol A --rtol R]: compare two --dump folders
#   make attention-map PROMPT="Once upon a time" LAYER=0 HEAD=0
#                         out/attention/L0_H0.png, one head's attention map labelled with tokens
#   make bench-generate   tokens/s for prefill and decode: naive, the compiler-vectorised rung
#                         (autovec) and the best SIMD level, one and two threads (median and
#                         range), without the KV cache; the read bandwidth at the weights'
#                         footprint and the roofline it implies; the CPU. On stories260K and on a
#                         seeded random checkpoint of llama2.c's 15M shape
# See docs/real-model.md.

MODEL_DIR    := data/models
SHARED_MODEL := ../shared/models
MODEL_URL    := https://huggingface.co/karpathy/tinyllamas/resolve/main/stories260K
MODEL_BIN    := $(MODEL_DIR)/stories260K.bin
MODEL_TOK    := $(MODEL_DIR)/tok512.bin
MODEL_SHA_stories260K.bin := b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696
MODEL_SHA_tok512.bin      := 037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312

# sha256sum on Linux, `shasum -a 256` on macOS: whichever exists.
SHA256 := $(shell if command -v sha256sum >/dev/null 2>&1; then echo sha256sum; else echo "shasum -a 256"; fi)

PROGRAMS    += generate npydiff
TEST_DEPS   += model
CLEAN_FILES += out/attention out/bench

.PHONY: model generate npydiff attention-map bench-generate

model: $(MODEL_BIN) $(MODEL_TOK)               ## fetch stories260K + tok512 into data/models/ (sha256-checked)
	@for f in stories260K.bin tok512.bin; do \
	  case $$f in stories260K.bin) want=$(MODEL_SHA_stories260K.bin);; *) want=$(MODEL_SHA_tok512.bin);; esac; \
	  got=$$($(SHA256) $(MODEL_DIR)/$$f | cut -d' ' -f1); \
	  if [ "$$got" != "$$want" ]; then \
	    echo "model: ERROR: $(MODEL_DIR)/$$f has sha256 $$got, expected $$want: delete it and run 'make model' again" >&2; exit 1; \
	  fi; \
	done

# Copy (or download) to a temporary name, check the hash, then rename: a failed or interrupted
# fetch never leaves a file that later targets would trust.
$(MODEL_DIR)/%.bin:
	@mkdir -p $(MODEL_DIR)
	@rm -f $@.tmp
	@if [ -f $(SHARED_MODEL)/$*.bin ]; then \
	  echo "model: copying $(SHARED_MODEL)/$*.bin -> $@"; cp $(SHARED_MODEL)/$*.bin $@.tmp; \
	else \
	  echo "model: downloading $(MODEL_URL)/$*.bin -> $@"; \
	  command -v curl >/dev/null 2>&1 || command -v wget >/dev/null 2>&1 || sh tools/need_check.sh curl || { \
	    echo "model: ERROR: neither curl nor wget is installed: install one, or put $*.bin in $(MODEL_DIR)/ by hand" >&2; exit 1; }; \
	  if command -v curl >/dev/null 2>&1; then fetch="curl -fL --retry 3 -o $@.tmp"; \
	  else fetch="wget -q -O $@.tmp"; fi; \
	  $$fetch $(MODEL_URL)/$*.bin || { rm -f $@.tmp; \
	    echo "model: ERROR: cannot download $(MODEL_URL)/$*.bin (no network?). Put $*.bin in $(SHARED_MODEL)/ or $(MODEL_DIR)/ by hand." >&2; exit 1; }; \
	fi
	@got=$$($(SHA256) $@.tmp | cut -d' ' -f1); \
	if [ "$$got" != "$(MODEL_SHA_$*.bin)" ]; then \
	  rm -f $@.tmp; \
	  echo "model: ERROR: $*.bin has sha256 $$got, expected $(MODEL_SHA_$*.bin): the source is corrupted or a different version, so nothing was installed" >&2; exit 1; \
	fi
	@mv $@.tmp $@
	@echo "model: $@ ok (sha256 verified)"

generate: $(BUILD)/tools/generate.o $(LIB)    ## ./generate: llama2.c-compatible text generation
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

npydiff: $(BUILD)/tools/npydiff.o $(LIB)      ## ./npydiff DIR_A DIR_B: compare two tensor dumps
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tools/attention_matrix: $(BUILD)/tools/attention_matrix.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/tools/make_ckpt15m: $(BUILD)/tools/make_ckpt15m.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
# bench_generate also links the compiler-vectorised rung, the CPU description, the clocks and the
# paired ratios (bench/).
$(BUILD)/tools/bench_generate: $(BUILD)/tools/bench_generate.o $(BUILD)/bench/autovec.o \
                               $(BUILD)/bench/cpuinfo.o $(BUILD)/bench/cache_size.o $(BUILD)/bench/read_stream.o \
                               $(BUILD)/bench/bench_clock.o $(BUILD)/bench/bench_spread.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/tools/bench_generate.o: CPPFLAGS += -Ibench

# The tests run ./generate (flags, exit codes, no partial dump), so build it first. The helper
# programs are built (not run) too, so a change to the library cannot leave them behind.
TEST_DEPS += generate npydiff $(BUILD)/tools/attention_matrix $(BUILD)/tools/make_ckpt15m \
             $(BUILD)/tools/bench_generate

PROMPT ?= Once upon a time
LAYER  ?= 0
HEAD   ?= 0
ATTN_DIR := out/attention
attention-map: generate $(BUILD)/tools/attention_matrix model   ## PNG of one head's attention map (PROMPT=, LAYER=, HEAD=)
	@command -v gnuplot >/dev/null 2>&1 || { echo "attention-map: gnuplot is not installed: 'sudo apt-get install -y gnuplot-nox' (Debian/Ubuntu) or 'brew install gnuplot' (macOS)" >&2; exit 1; }
	@rm -rf $(ATTN_DIR)/dump
	@mkdir -p $(ATTN_DIR)
	./generate $(MODEL_BIN) -z $(MODEL_TOK) -t 0 -n 1 -i "$(PROMPT)" --dump $(ATTN_DIR)/dump > /dev/null
	./$(BUILD)/tools/attention_matrix $(ATTN_DIR)/dump $(LAYER) $(HEAD) $(ATTN_DIR)/L$(LAYER)_H$(HEAD).dat
	gnuplot -e "datafile='$(ATTN_DIR)/L$(LAYER)_H$(HEAD).dat'; outfile='$(ATTN_DIR)/L$(LAYER)_H$(HEAD).png'; plottitle='layer $(LAYER), head $(HEAD)'" viz/attention_map.gp
	@echo "attention-map: wrote $(ATTN_DIR)/L$(LAYER)_H$(HEAD).png"

CKPT15M := data/models/random15M.bin
$(CKPT15M): $(BUILD)/tools/make_ckpt15m
	@mkdir -p $(@D)
	./$(BUILD)/tools/make_ckpt15m $@

# Built in the benchmark's own build directory with OpenMP (as make bench), so the library that
# `make test` uses is never rebuilt by benchmarking; one and two threads in the same run.
bench-generate: model $(CKPT15M)   ## tok/s: naive, autovec, best level; 1 and 2 threads; roofline
	@$(MAKE) --no-print-directory BUILD=$(BENCH_BUILD) OMP=$(HAVE_OMP) $(BENCH_BUILD)/tools/bench_generate
	./$(BENCH_BUILD)/tools/bench_generate $(MODEL_BIN) -p 64 -d 192 -r 9
	./$(BENCH_BUILD)/tools/bench_generate $(CKPT15M) -p 32 -d 64 -r 7
