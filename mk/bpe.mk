# mk/bpe.mk: learning a BPE tokenizer (docs/bpe.md; lesson 16).
#
#   make bpe-train     ./bpe-train TEXT.txt --vocab N -o TOK.bin: learn a vocabulary and write it in
#                      llama2.c's tokenizer format (for ./generate -z, llama2.c's run, ./train)
#   make bpe-corpus    out/bpe/stories.txt: BPE_CORPUS_MB (default 10) MB of English stories sampled
#                      from stories260K with ./generate (temperature 1, seeds 1, 2, 3, ...; two
#                      processes, odd and even seeds, joined in order). Takes minutes; made once.
#   make bpe-compare   on the held-out tenth of out/bpe/stories.txt: bytes/token of tok512, of a
#                      512-piece vocabulary ./bpe-train learns from the rest, and of sentencepiece
#                      (BPE, byte fallback, same size) when python3-sentencepiece is installed
#   make bench-bpe     train on out/bpe/stories.txt to 4096 pieces (MB/s); the naive and the fast
#                      trainer on the same first BPE_NAIVE_KB KB to BPE_NAIVE_VOCAB pieces (ratio,
#                      same run; the naive one is quadratic); sentencepiece's time on the whole
#                      text to 4096 pieces when python3-sentencepiece is installed
#   make bench-encode  encoding one long line (100 KB and 2 MB of story words) with tok512: the
#                      heap encoder's time, and the naive one's up to ENCODE_NAIVE_KB (it is quadratic)

PROGRAMS    += bpe-train
TEST_DEPS   += bpe-train
CLEAN_FILES += out/bpe

BPE_CORPUS     := out/bpe/stories.txt
BPE_CORPUS_MB  ?= 10
BPE_NAIVE_KB   ?= 64
BPE_NAIVE_VOCAB ?= 1024
SYS_PYTHON3    ?= /usr/bin/python3

ENCODE_KB       ?= 100,2048
ENCODE_NAIVE_KB ?= 100

.PHONY: bpe-corpus bpe-compare bench-bpe bench-encode

bpe-train: $(BUILD)/tools/bpe_train.o $(LIB)  ## ./bpe-train TEXT --vocab N -o TOK.bin: learn a BPE vocabulary
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tools/bench_bpe: $(BUILD)/tools/bench_bpe.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tools/bench_encode: $(BUILD)/tools/bench_encode.o $(BUILD)/bench/cpuinfo.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/tools/bench_encode.o: CPPFLAGS += -Ibench

# Each half appends one story per seed until it holds half the bytes; written under .tmp names and
# renamed, so an interrupted run leaves no corpus that later targets would trust.
bpe-corpus: generate model                     ## out/bpe/stories.txt: sampled English stories (BPE_CORPUS_MB)
	@if [ -f $(BPE_CORPUS) ]; then echo "bpe-corpus: $(BPE_CORPUS) exists ($$(wc -c < $(BPE_CORPUS)) bytes; delete it to remake)"; exit 0; fi; \
	mkdir -p out/bpe; \
	half=$$(( $(BPE_CORPUS_MB) * 500000 )); \
	for part in 1 2; do ( \
	  f=out/bpe/stories.$$part.tmp; : > $$f; s=$$part; \
	  while [ $$(wc -c < $$f) -lt $$half ]; do \
	    ./generate $(MODEL_BIN) -z $(MODEL_TOK) -t 1.0 -p 0.9 -s $$s -n 0 2>/dev/null >> $$f || exit 1; \
	    s=$$((s + 2)); \
	  done ) & \
	done; wait; \
	cat out/bpe/stories.1.tmp out/bpe/stories.2.tmp > $(BPE_CORPUS).tmp && rm -f out/bpe/stories.[12].tmp && \
	mv $(BPE_CORPUS).tmp $(BPE_CORPUS) && echo "bpe-corpus: wrote $(BPE_CORPUS) ($$(wc -c < $(BPE_CORPUS)) bytes)"

bpe-compare: bpe-train model                   ## tok512 vs ./bpe-train vs sentencepiece, bytes/token on stories
	@[ -f $(BPE_CORPUS) ] || { echo "bpe-compare: $(BPE_CORPUS) is missing: run 'make bpe-corpus' first" >&2; exit 1; }
	./bpe-train $(BPE_CORPUS) --vocab 512 -o out/bpe/tok_stories512.bin --compare $(MODEL_TOK)
	@if $(SYS_PYTHON3) -c "import sentencepiece" 2>/dev/null; then \
	  $(SYS_PYTHON3) tools/bpe_sentencepiece.py $(BPE_CORPUS) --vocab 512 --held-out 0.1; \
	else echo "bpe-compare: sentencepiece is not installed (apt-get install -y python3-sentencepiece): its figure is skipped"; fi

bench-bpe: $(BUILD)/tools/bench_bpe            ## BPE training speed: MB/s, naive ratio, sentencepiece
	@[ -f $(BPE_CORPUS) ] || { echo "bench-bpe: $(BPE_CORPUS) is missing: run 'make bpe-corpus' first" >&2; exit 1; }
	./$(BUILD)/tools/bench_bpe $(BPE_CORPUS) --vocab 4096 --naive-kb $(BPE_NAIVE_KB) --naive-vocab $(BPE_NAIVE_VOCAB)
	@if $(SYS_PYTHON3) -c "import sentencepiece" 2>/dev/null; then \
	  $(SYS_PYTHON3) tools/bpe_sentencepiece.py $(BPE_CORPUS) --vocab 4096 --held-out 0 --time; \
	else echo "bench-bpe: sentencepiece is not installed (apt-get install -y python3-sentencepiece): its time is skipped"; fi

bench-encode: $(BUILD)/tools/bench_encode model   ## tokenizer encoding of one long line: heap vs naive
	./$(BUILD)/tools/bench_encode $(MODEL_TOK) data/stories260K_greedy.txt --kb $(ENCODE_KB) --naive-kb $(ENCODE_NAIVE_KB)

-include $(BUILD)/tools/bpe_train.d $(BUILD)/tools/bench_bpe.d
