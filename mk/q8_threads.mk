# q8_threads.mk: the int8 matvec's thread split (lib/quant/q8_threads.c) with real OpenMP threads.
#   make test-q8-threads   the q8_threads suite (tests/test_q8_threads.c) built with OpenMP in the
#                          benchmarks' build directory, on 1, 2 and 3 threads: every level, row-major
#                          and packed, bit-identical to one call. `make test` builds without
#                          OpenMP, so there the threaded call runs on one thread (the split itself
#                          is tested there part by part). Then the attend_heads suite
#                          (tests/test_attend_heads.c): a decode step's attention heads on 1, 2
#                          and 3 threads. Run by .ci/extra.
.PHONY: test-q8-threads
test-q8-threads:                               ## int8 matvec on 1, 2, 3 OpenMP threads == one call, bit for bit
	@if [ "$(HAVE_OMP)" != 1 ]; then echo "test-q8-threads: $(CC) has no OpenMP ($(OMPFLAGS)): skipped"; exit 0; fi; \
	$(MAKE) --no-print-directory BUILD=$(BENCH_BUILD) OMP=1 $(BENCH_BUILD)/tests/run_tests && \
	CK_RUN_SUITE=q8_threads ./$(BENCH_BUILD)/tests/run_tests && \
	CK_RUN_SUITE=attend_heads ./$(BENCH_BUILD)/tests/run_tests
