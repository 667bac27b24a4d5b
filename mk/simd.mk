# mk/simd.mk: the optional SIMD kernels (lib/simd/), their benchmark, the Arm cross-test and the
# kernel exercises. See docs/kernels.md.
#
#   make SIMD=0 ...        build without any SIMD object (only the naive level exists)
#   make OMP=1 ...         compile the packed matmul with OpenMP (rung 5); off by default
#   make bench             verify every kernel, then time it (./run_bench; OpenMP on if the compiler has it)
#   make bench BLAS=openblas   the same, with cblas_sgemm/cblas_sgemv measured beside ours
#   make test-arm          cross-build the kernel self-test for AArch64 and run it under qemu
#   make exerciseN         build and check exercise N (lessons/exercises/), N = 1..4
#
# ISA flags go on the objects that need them only, so the rest of the library and every program
# still run on any x86-64; the dispatcher (lib/simd/dispatch.c) asks the CPU before using them.

SIMD ?= 1
OMP  ?= 0
# The compiler's target, not the build machine's: `make CC=aarch64-linux-gnu-gcc` builds NEON.
SIMD_TARGET := $(shell $(CC) -dumpmachine 2>/dev/null)

SIMD_BASE_SRC := lib/simd/dispatch.c lib/simd/ref.c lib/simd/matmul_1_naive.c lib/simd/train_ops.c \
                 lib/simd/train_elementwise.c \
                 lib/simd/matmul_2_reordered.c lib/simd/matmul_3_blocked.c lib/simd/matmul_4_packed.c \
                 lib/simd/matvec_mt.c lib/simd/sdpa_tiled_hook.c lib/simd/linear_packed.c
SIMD_ISA_SRC  :=
ifeq ($(SIMD),1)
  ifneq ($(filter x86_64% amd64%,$(SIMD_TARGET)),)
    SIMD_ISA_SRC += lib/simd/kernels_avx2.c lib/simd/matmul_5_avx2.c lib/simd/matvec_avx2.c \
                    lib/simd/kernels_avx512.c lib/simd/matmul_5_avx512.c lib/simd/matvec_avx512.c \
                    lib/simd/attn_avx512.c lib/simd/sdpa_tiled_avx2.c lib/simd/sdpa_tiled_avx512.c \
                    lib/simd/sdpa_tiled_narrow_avx512.c lib/simd/linear_packed_avx2.c \
                    lib/simd/linear_packed_avx512.c
    CPPFLAGS += -DTW_HAVE_AVX2 -DTW_HAVE_AVX512
    $(BUILD)/lib/simd/kernels_avx2.o $(BUILD)/lib/simd/matmul_5_avx2.o: ISAFLAGS := -mavx2 -mfma
    $(BUILD)/lib/simd/matvec_avx2.o $(BUILD)/lib/simd/linear_packed_avx2.o: ISAFLAGS := -mavx2 -mfma
    $(BUILD)/lib/simd/kernels_avx512.o $(BUILD)/lib/simd/matmul_5_avx512.o: ISAFLAGS := -mavx512f -mfma
    $(BUILD)/lib/simd/matvec_avx512.o $(BUILD)/lib/simd/linear_packed_avx512.o: ISAFLAGS := -mavx512f -mfma
    $(BUILD)/lib/simd/attn_avx512.o: ISAFLAGS := -mavx512f -mfma
    $(BUILD)/lib/simd/sdpa_tiled_avx2.o: ISAFLAGS := -mavx2 -mfma
    $(BUILD)/lib/simd/sdpa_tiled_avx512.o $(BUILD)/lib/simd/sdpa_tiled_narrow_avx512.o: ISAFLAGS := -mavx512f -mfma
  endif
  ifneq ($(filter aarch64% arm64%,$(SIMD_TARGET)),)
    # Advanced SIMD is baseline on AArch64: no flag needed.
    SIMD_ISA_SRC += lib/simd/kernels_neon.c lib/simd/matmul_5_neon.c lib/simd/sdpa_tiled_neon.c
    CPPFLAGS += -DTW_HAVE_NEON
  endif
endif
SIMD_SRC := $(SIMD_BASE_SRC) $(SIMD_ISA_SRC)
LIB_SRC  += $(SIMD_SRC)
SIMD_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(SIMD_SRC))

# OpenMP only on the packed matmul's object (and the link). Apple clang has no -fopenmp: there,
# `brew install libomp` and pass OMPFLAGS='-Xclang -fopenmp -I/opt/homebrew/opt/libomp/include'
# and OMPLIBS='-L/opt/homebrew/opt/libomp/lib -lomp'.
OMPFLAGS ?= -fopenmp
OMPLIBS  ?= -fopenmp
ifeq ($(OMP),1)
  $(BUILD)/lib/simd/matmul_4_packed.o $(BUILD)/lib/simd/matvec_mt.o $(BUILD)/lib/quant/q8_threads.o $(BUILD)/lib/train/parallel.o: ISAFLAGS := $(OMPFLAGS)
  LDFLAGS += $(OMPLIBS)
endif

# ---- benchmark ----
# ./run_bench (bench/bench.c; ./bench would clash with the directory) is built in its own build directory, with OpenMP when the compiler supports it, so
# the library build used by `make test` is never changed by benchmarking.
# A BLAS=openblas build gets a directory of its own: make does not notice changed flags, so
# sharing one would reuse a bench.o compiled without the OpenBLAS columns.
BENCH_BUILD := $(BUILD)/bench-build$(if $(BLAS),-$(BLAS))
HAVE_OMP = $(shell echo 'int main(void){return 0;}' | $(CC) $(OMPFLAGS) -x c - -o /dev/null 2>/dev/null && echo 1 || echo 0)
BLAS ?=
ifeq ($(BLAS),openblas)
  BLAS_CFLAGS := -DTW_BENCH_OPENBLAS $(shell pkg-config --cflags openblas 2>/dev/null)
  BLAS_LIBS   := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
endif
BENCH_ARGS ?=

.PHONY: bench bench-bin test-arm
bench:                                         ## verify, then time every kernel (BLAS=openblas to compare)
	@$(MAKE) --no-print-directory BUILD=$(BENCH_BUILD) OMP=$(HAVE_OMP) BLAS=$(BLAS) bench-bin run_bench_q8
	./run_bench $(BENCH_ARGS)
	./run_bench_q8 $(BENCH_ARGS)

# The FMA-throughput probe is bench/peak.c (inline assembly, no ISA flags needed).
# bench/autovec.c is the compiler-vectorised rung: plain loops built the way llama2.c builds its
# matmul, in this object only (never in the library: -ffast-math changes rounding).
AUTOVEC_FLAGS ?= -O3 -ffast-math -ffp-contract=fast -march=native
BENCH_OBJ := $(BUILD)/bench/bench.o $(BUILD)/bench/autovec.o $(BUILD)/bench/cpuinfo.o $(BUILD)/bench/read_stream.o \
             $(BUILD)/bench/peak.o
# The four-rows-at-a-time matvecs: a rung only the benchmark runs (bench/matvec_4row.h).
ifneq ($(filter -DTW_HAVE_AVX2,$(CPPFLAGS)),)
  BENCH_OBJ += $(BUILD)/bench/matvec_4row_avx2.o $(BUILD)/bench/matvec_4row_avx512.o
  $(BUILD)/bench/matvec_4row_avx2.o: ISAFLAGS := -mavx2 -mfma
  $(BUILD)/bench/matvec_4row_avx512.o: ISAFLAGS := -mavx512f -mfma
endif
$(BUILD)/bench/autovec.o: ISAFLAGS := $(AUTOVEC_FLAGS)
ifeq ($(OMP),1)
  $(BUILD)/tools/bench_generate.o: ISAFLAGS := $(OMPFLAGS)
endif
bench-bin: $(BENCH_OBJ) $(LIB)
	$(call say,LD,run_bench)$(CC) $(LDFLAGS) $^ $(BLAS_LIBS) $(LDLIBS) -o run_bench

$(BUILD)/bench/bench.o: CPPFLAGS += -Itests $(BLAS_CFLAGS)
# make test compiles the benchmark (without running it), so it cannot fall behind the library.
TEST_DEPS += $(BUILD)/bench/bench.o
CLEAN_FILES += run_bench

# ---- Arm: cross-build and run the NEON self-test under qemu ----
ARM_CC   ?= aarch64-linux-gnu-gcc
ARM_ROOT ?= /usr/aarch64-linux-gnu
ARM_BUILD ?= $(BUILD)-arm
# The AArch64 library, built once before test-arm and test-arm-q8 (both link it from $(ARM_BUILD)):
# without it, `make test-arm test-arm-q8` at -j2 ran two sub-makes that built one library at once.
.PHONY: arm-lib
arm-lib:
	@command -v $(ARM_CC) >/dev/null 2>&1 && command -v qemu-aarch64 >/dev/null 2>&1 || { \
	  echo "test-arm: needs $(ARM_CC) and qemu-aarch64: sudo apt-get install -y gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user" >&2; exit 1; }
	@$(MAKE) --no-print-directory CC=$(ARM_CC) BUILD=$(ARM_BUILD) OMP=0 $(ARM_BUILD)/libtw.a

test-arm: arm-lib                              ## cross-build the kernel self-test for AArch64, run it in qemu
	@$(MAKE) --no-print-directory CC=$(ARM_CC) BUILD=$(ARM_BUILD) OMP=0 $(ARM_BUILD)/tests/arm/simd_selftest
	qemu-aarch64 -L $(ARM_ROOT) $(ARM_BUILD)/tests/arm/simd_selftest

# The self-test links the library: the kernels' references are the components' loops (lib/nn/).
$(BUILD)/tests/arm/simd_selftest: $(BUILD)/tests/arm/simd_selftest.o $(BUILD)/bench/peak.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/tests/arm/simd_selftest.o: CPPFLAGS += -Itests -Ilib/simd -Ibench

# The same self-test on this machine (all levels the CPU has): `make simd-selftest`.
.PHONY: simd-selftest
simd-selftest: $(BUILD)/tests/arm/simd_selftest   ## run the Check-free kernel self-test natively
	./$(BUILD)/tests/arm/simd_selftest

# ---- kernel exercises (lessons/exercises/) ----
# make exerciseN builds your lessons/exercises/exN_*.c with the checker into ./exerciseN and runs
# it; SOLUTION=1 builds solutions/exN_*.c instead. `make test-exercises` proves that every
# solution passes the checker, every stub fails it politely and every classic wrong attempt
# (wrong/exN_*.c) is rejected for its mistake (run by `make test`; the loop is mk/exercises.mk's).
EX_DIR  := lessons/exercises
EX_NUMS := 1 2 3 4

# The checker of exercise N is compiled once and linked with the stub, the solution and the wrong
# attempt. $(1) = N
define EXERCISE_CHECK_RULE
$(BUILD)/exercises/check$(1).o: CPPFLAGS += -I$(EX_DIR) -Itests -DEXERCISE=$(1)
$(BUILD)/exercises/check$(1).o: $(EX_DIR)/check.c
	@mkdir -p $$(@D)
	$$(call say,CC,$$<)$$(COMPILE) -c $$< -o $$@
endef
$(foreach n,$(EX_NUMS),$(eval $(call EXERCISE_CHECK_RULE,$(n))))
# $(1) = N, $(2) = build subfolder (stub|solution|wrong), $(3) = folder of the exercise source.
# name$(1).o records the path of the file built, for the checker's messages (source_name.c).
define EXERCISE_RULES
$(BUILD)/exercises/$(2)/ex$(1).o: CPPFLAGS += -I$(EX_DIR)
$(BUILD)/exercises/$(2)/ex$(1).o: $$(wildcard $(3)/ex$(1)_*.c)
	@mkdir -p $$(@D)
	$$(call say,CC,$$@)$$(COMPILE) -c $$(wildcard $(3)/ex$(1)_*.c) -o $$@
$(BUILD)/exercises/$(2)/name$(1).o: $(EX_DIR)/source_name.c
	@mkdir -p $$(@D)
	$$(call say,CC,$$@)$$(CC) $$(CSTD) $$(WARN) -DEX_SOURCE='"$$(wildcard $(3)/ex$(1)_*.c)"' -c $$< -o $$@
$(BUILD)/exercises/$(2)/exercise$(1): $(BUILD)/exercises/check$(1).o $(BUILD)/exercises/$(2)/ex$(1).o $(BUILD)/exercises/$(2)/name$(1).o $(LIB)
	$$(call say,LD,$$@)$$(CC) $$(LDFLAGS) $$^ $$(LDLIBS) -o $$@
endef
$(foreach n,$(EX_NUMS),$(eval $(call EXERCISE_RULES,$(n),stub,$(EX_DIR))))
$(foreach n,$(EX_NUMS),$(eval $(call EXERCISE_RULES,$(n),solution,$(EX_DIR)/solutions)))
$(foreach n,$(EX_NUMS),$(eval $(call EXERCISE_RULES,$(n),wrong,$(EX_DIR)/wrong)))

EX_KIND := $(if $(filter 1,$(SOLUTION)),solution,stub)
.PHONY: $(addprefix exercise,$(EX_NUMS)) test-exercises
$(addprefix exercise,$(EX_NUMS)): exercise%: $(BUILD)/exercises/$(EX_KIND)/exercise%   ## exerciseN: check and time your kernel
	cp $< $@
	./$@

test-exercises: $(foreach k,stub solution wrong,$(foreach n,$(EX_NUMS),$(BUILD)/exercises/$(k)/exercise$(n)))   ## solutions pass, stubs fail politely, wrong attempts are rejected
	@$(call EXERCISE_TEST_LOOP,$(EX_NUMS),--no-timing) && echo "exercises: 4 solutions pass the checker, 4 stubs report 'not implemented yet', 4 wrong attempts are rejected for their mistake"
TEST_DEPS += test-exercises
CLEAN_FILES += $(addprefix exercise,$(EX_NUMS))

# ---- the naive level is the naive build, bit for bit ----
# Builds ./generate without any SIMD object (SIMD=0) in its own build folder, then dumps every
# tensor of a prompt with it and with this build's ./generate --simd naive, and requires each
# .npy file and the story to be byte-identical: the hooks in softmax.c, norm.c, ffn.c, mha.c and
# linear.c change nothing until a program opts in. (Not part of `make test`: it compiles lib/
# a second time.)
NOSIMD_BUILD := $(BUILD)-nosimd
BITEXACT_DIR := out/naive-bitexact
.PHONY: test-naive-bitexact
test-naive-bitexact: generate model              ## the naive level == a build without SIMD, byte for byte
	@$(MAKE) --no-print-directory SIMD=0 BUILD=$(NOSIMD_BUILD) $(NOSIMD_BUILD)/libtw.a $(NOSIMD_BUILD)/tools/generate.o
	$(call say,LD,$(NOSIMD_BUILD)/generate)$(CC) $(LDFLAGS) $(NOSIMD_BUILD)/tools/generate.o $(NOSIMD_BUILD)/libtw.a $(LDLIBS) -o $(NOSIMD_BUILD)/generate
	@rm -rf $(BITEXACT_DIR) && mkdir -p $(BITEXACT_DIR)
	./$(NOSIMD_BUILD)/generate $(MODEL_BIN) -z $(MODEL_TOK) -t 0 -n 64 -i "Once upon a time there was a little girl" \
	  --dump $(BITEXACT_DIR)/nosimd > $(BITEXACT_DIR)/nosimd.txt 2>/dev/null
	./generate $(MODEL_BIN) -z $(MODEL_TOK) -t 0 -n 64 -i "Once upon a time there was a little girl" \
	  --simd naive --dump $(BITEXACT_DIR)/naive > $(BITEXACT_DIR)/naive.txt 2>/dev/null
	@cmp $(BITEXACT_DIR)/nosimd.txt $(BITEXACT_DIR)/naive.txt
	@n=0; for f in $(BITEXACT_DIR)/nosimd/*.npy; do \
	  cmp -s $$f $(BITEXACT_DIR)/naive/$${f##*/} || { echo "test-naive-bitexact: $${f##*/} differs" >&2; exit 1; }; \
	  n=$$((n + 1)); done; \
	  echo "test-naive-bitexact: the story and all $$n tensors are byte-identical (SIMD=0 build vs --simd naive)"
CLEAN_FILES += $(BITEXACT_DIR)
