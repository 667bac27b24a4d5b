# mk/simd_q8.mk: the int8 (Q8_0) kernels of lib/simd/q8_*.c (see lib/simd/q8.h and
# docs/quantization.md), compiled under the same conditions as mk/simd.mk's fp32 kernels, each
# object with only the ISA flags it needs; lib/simd/dispatch.c asks the CPU before using them.
#
#   make test-arm-q8   cross-build the int8 kernel self-test for AArch64 and run it under qemu
#                      twice: on qemu's default CPU (with the dot-product extension: neon and
#                      neon_dot are checked) and as a Cortex-A57 (without it: the dispatcher must
#                      fall back to the widening kernel)

Q8_ISA_SRC  :=
ifeq ($(SIMD),1)
  ifneq ($(filter x86_64% amd64%,$(SIMD_TARGET)),)
    Q8_ISA_SRC += lib/simd/q8_avx2.c lib/simd/q8_avx512.c lib/simd/q8_avx512vnni.c lib/simd/q8_vnni_rows16.c
    Q8_ISA_SRC += lib/simd/q8_g4_avx2.c lib/simd/q8_g4_avx512.c
    $(BUILD)/lib/simd/q8_g4_avx2.o: ISAFLAGS := -mavx2 -mfma
    $(BUILD)/lib/simd/q8_g4_avx512.o: ISAFLAGS := -mavx512f -mavx512bw -mavx512vl -mavx2 -mfma
    $(BUILD)/lib/simd/q8_avx2.o: ISAFLAGS := -mavx2 -mfma
    $(BUILD)/lib/simd/q8_avx512.o: ISAFLAGS := -mavx512f -mavx512bw -mavx512vl -mavx2 -mfma
    $(BUILD)/lib/simd/q8_avx512vnni.o: ISAFLAGS := -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mavx2 -mfma
    $(BUILD)/lib/simd/q8_vnni_rows16.o: ISAFLAGS := -mavx512f -mavx512bw -mavx512vl -mavx512vnni
  endif
  ifneq ($(filter aarch64% arm64%,$(SIMD_TARGET)),)
    Q8_ISA_SRC += lib/simd/q8_neon.c lib/simd/q8_neon_dot.c
    $(BUILD)/lib/simd/q8_neon_dot.o: ISAFLAGS := -march=armv8.2-a+dotprod
    Q8_ISA_SRC += lib/simd/q8_g4_neon.c lib/simd/q8_g4_neon_dot.c
    $(BUILD)/lib/simd/q8_g4_neon_dot.o: ISAFLAGS := -march=armv8.2-a+dotprod
  endif
endif
Q8_SRC  := $(Q8_ISA_SRC)
LIB_SRC += $(Q8_SRC)
Q8_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(Q8_SRC))

# ---- the int8 kernel self-test, natively and on AArch64 under qemu ----
# It links the library: the int8 kernels are slots of each level's table (lib/simd/dispatch.c).
$(BUILD)/tests/arm/q8_selftest: $(BUILD)/tests/arm/q8_selftest.o $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/tests/arm/q8_selftest.o: CPPFLAGS += -Itests
$(BUILD)/tests/arm/q8_selftest.o: tests/q8_cases.h lib/simd/q8.h lib/quant/q8_0.h

.PHONY: q8-selftest test-arm-q8
q8-selftest: $(BUILD)/tests/arm/q8_selftest     ## the int8 kernel self-test on this machine (every level)
	./$(BUILD)/tests/arm/q8_selftest

test-arm-q8: arm-lib                             ## int8 kernels on AArch64 under qemu, with and without sdot
	@command -v $(ARM_CC) >/dev/null 2>&1 && command -v qemu-aarch64 >/dev/null 2>&1 || { \
	  echo "test-arm-q8: needs $(ARM_CC) and qemu-aarch64: sudo apt-get install -y gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user" >&2; exit 1; }
	@$(MAKE) --no-print-directory CC=$(ARM_CC) BUILD=$(ARM_BUILD) OMP=0 $(ARM_BUILD)/tests/arm/q8_selftest
	qemu-aarch64 -L $(ARM_ROOT) $(ARM_BUILD)/tests/arm/q8_selftest neon_dot
	qemu-aarch64 -cpu cortex-a57 -L $(ARM_ROOT) $(ARM_BUILD)/tests/arm/q8_selftest neon

# ---- ./quantize: a llama2.c version-0 checkpoint -> version 2 (Q8_0) ----
PROGRAMS  += quantize
TEST_DEPS += quantize
.PHONY: quantize
quantize: $(BUILD)/tools/quantize.o $(LIB)    ## ./quantize IN.bin OUT.bin [--group GS]: Q8_0 checkpoint
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
-include $(BUILD)/tools/quantize.d

# ---- the int8 rows of `make bench` (./run_bench_q8, built and run after ./run_bench by mk/simd.mk) ----
# bench/q8_runq_style.c is built as llama2.c builds runq.c (-Ofast -march=native), this object only.
BENCH_Q8_OBJ := $(BUILD)/bench/bench_q8.o $(BUILD)/bench/q8_runq_style.o $(BUILD)/bench/cache_size.o $(BUILD)/bench/cpuinfo.o \
                $(BUILD)/bench/peak.o
$(BUILD)/bench/q8_runq_style.o: ISAFLAGS := -Ofast -march=native -ffp-contract=fast
$(BUILD)/bench/bench_q8.o: CPPFLAGS += -Itests
ifneq ($(filter -DTW_HAVE_AVX512,$(CPPFLAGS)),)
  BENCH_Q8_OBJ += $(BUILD)/bench/probe_vnni.o $(BUILD)/bench/probe_read.o
  $(BUILD)/bench/probe_vnni.o: ISAFLAGS := -mavx512f -mavx512bw -mavx512vnni
  $(BUILD)/bench/probe_read.o: ISAFLAGS := -mavx512f
endif
.PHONY: run_bench_q8
run_bench_q8: $(BENCH_Q8_OBJ) $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o run_bench_q8
CLEAN_FILES += run_bench_q8

# ---- the int8 rows of `make bench-generate`: the runq-style rung is linked into bench_generate ----
$(BUILD)/tools/bench_generate: $(BUILD)/bench/q8_runq_style.o
