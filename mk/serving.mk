# mk/serving.mk: serving many users (docs/serving.md).
#   make serve         ./serve MODEL.bin [--requests FILE] [--slots N]: one stream of requests served
#                      with static and with continuous batching
#   make bench-serve   batched decoding on the 15M shape, one thread: aggregate tokens/s for 1 to 64
#                      sequences decoded together against one sequence (with the decode's sums and
#                      on packed panels), and GFLOP/s against the FMA peak measured in the same run;
#                      then ./serve on the same model, with each kernel
$(BUILD)/tools/bench_serve: $(BUILD)/tools/bench_serve.o $(BUILD)/bench/cpuinfo.o \
                            $(BUILD)/bench/bench_clock.o $(BUILD)/bench/peak.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/tools/bench_serve.o: CPPFLAGS += -Ibench
# Built (not run) by the tests, so a change to the library cannot leave it behind.
TEST_DEPS += $(BUILD)/tools/bench_serve

serve: $(BUILD)/tools/serve.o $(LIB)          ## ./serve MODEL.bin: static against continuous batching on a stream
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
TEST_DEPS   += serve
CLEAN_FILES += serve

.PHONY: bench-serve
bench-serve: $(CKPT15M)                        ## batched decode vs one sequence: tok/s, % of FMA peak
	@$(MAKE) --no-print-directory BUILD=$(BENCH_BUILD) OMP=$(HAVE_OMP) $(BENCH_BUILD)/tools/bench_serve
	./$(BENCH_BUILD)/tools/bench_serve $(CKPT15M) -d 32 -r 5
	@$(MAKE) --no-print-directory BUILD=$(BENCH_BUILD) OMP=$(HAVE_OMP) serve
	./serve $(CKPT15M)
	./serve $(CKPT15M) --packed
