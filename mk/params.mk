# mk/params.mk: the parameter counter (docs/params.md).
#
#   make params    ./params [--context N] [--layers] CONFIG.json: parameters per component and per
#                  layer from a Hugging Face config.json (gpt2, llama, mistral, qwen2, qwen3;
#                  mixtral, qwen3_moe, deepseek_v3: total and activated, MLA's KV cache),
#                  weight memory at fp32/bf16/int8, KV cache at a context length; ends `total N`.
# The counting is lib/formats/hf_config.c and the JSON reader lib/formats/json.c (both part of libtw.a); the configs
# with their published totals are in data/configs/ (README.md there).

PROGRAMS    += params

params: $(BUILD)/tools/params.o $(BUILD)/tools/params_moe.o $(LIB)        ## ./params CONFIG.json: parameter breakdown of a model
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# tests/test_params.c runs ./params (exit codes, the `total N` line), so build it first.
TEST_DEPS += params

