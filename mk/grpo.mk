# mk/grpo.mk: reinforcement learning from a reward computed in C (./train --grpo; docs/grpo.md).
#
#   make grpo-eval        stories260K, reward "contains dog": the mean reward of 16 completions
#                         of each of the 4 prompts (fixed seed) before and after 30 GRPO steps of
#                         2 prompts x 8 completions, with the KL to the reference it paid, the
#                         time and the CPU (one thread: ./train --grpo runs on one core)
#   make grpo-eval GRPO_REWARD=count   the same with the reward that can be gamed (the count)
#   make grpo-eval GRPO_LR=3e-3 GRPO_EXTRA='--lora 4'   LoRA adapters of rank 4 on wq,wv instead
#   make grpo-eval GRPO_MODEL=data/sft/model.bin GRPO_TOK=data/sft/tok.bin   (after make sft-data)
#                         a tokenizer with the chat template's special tokens: the prompts are asked
#                         as BOS <|user|>PROMPT<|assistant|> and answers end at <|end|> (docs/grpo.md)
# Writes out/grpo/eval.txt (and the trained policy out/grpo/policy.bin). Exits 1 if the mean reward
# after training is not at least twice the one before (the goal docs/grpo.md reports).

GRPO_REWARD ?= contains
GRPO_LR     ?= 3e-4
GRPO_EXTRA  ?=
GRPO_MODEL  ?= $(MODEL_BIN)
GRPO_TOK    ?= $(MODEL_TOK)
GRPO_ARGS   ?= --grpo-group 8 --grpo-prompts 2 --steps 30 --lr $(GRPO_LR) --grpo-beta 0.04 --grpo-eval 16 \
               --reward $(GRPO_REWARD) --reward-word dog --seed 1 $(GRPO_EXTRA)

.PHONY: grpo-eval
grpo-eval: train model                         ## mean reward before/after GRPO on stories260K, with the KL paid
	@mkdir -p out/grpo
	@grep -m1 'model name' /proc/cpuinfo 2>/dev/null || sysctl -n machdep.cpu.brand_string 2>/dev/null || true
	./train --init $(GRPO_MODEL) -z $(GRPO_TOK) --grpo $(GRPO_ARGS) --out out/grpo/policy.$(if $(findstring --lora,$(GRPO_EXTRA)),lora,bin) > out/grpo/eval.txt || { cat out/grpo/eval.txt; exit 1; }
	@cat out/grpo/eval.txt
	@grep -h 'grpo-eval .*mean reward\|steps in' out/grpo/eval.txt
	@awk '/^grpo-eval before: mean reward/ { b = $$5 } /^grpo-eval after: mean reward/ { a = $$5 } \
	  END { if (a == "" || b == "" || a < 2 * b) { print "grpo-eval: the mean reward did not double (" b " -> " a ")"; exit 1 } \
	        print "grpo-eval: the mean reward went from " b " to " a ", " a / b " times" }' out/grpo/eval.txt
CLEAN_FILES += out/grpo
