# mk/arm.mk: the whole toolkit on AArch64 (64-bit Arm, as in Apple silicon and Graviton), run
# under qemu on an x86-64 machine. `make test-arm` (mk/simd.mk) covers the NEON kernels; this
# covers everything a learner runs.
#
#   make test-arm-lessons   cross-build every lesson with $(ARM_CC) (NEON kernels included),
#                           run each under qemu-aarch64 (its own self-checks must pass there),
#                           and compare every tensor it writes with the native run, with ./npydiff
#                           (tools/arm_lesson.sh, two lessons at a time, the last first: the late
#                           lessons are the slow ones, 25 and 29 about 7 minutes each under qemu);
#                           then ./generate, cross-built, writes stories260K's documented greedy
#                           story under qemu with the NEON kernels (--simd neon) and with naive ones
#
# Tolerance of the comparison: atol 1e-6, rtol 1e-5. The library's arithmetic is the same IEEE
# float operations in the same order on both machines (-ffp-contract=off forbids silent FMA
# fusion), so nearly every tensor comes out byte-identical. The exceptions come from libm:
# erff, tanhf and expf are not correctly rounded, and glibc's x86-64 and AArch64 versions differ
# by 1 ulp on a few inputs. A few float operations after a GELU can grow that to about 10 ulp
# (1.2e-6 relative; 8 ulp was the largest seen). 1e-5 relative allows about 80 ulp.
# Lesson 12 (the kernel timings) is skipped: timing under an emulator means nothing.
# Needs: gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user (Debian/Ubuntu packages).

ARM_LESSON_BUILD := $(BUILD)-arm-lessons
# Deferred (=): LESSON_SRC is set by mk/lessons.mk, which may be read after this file.
ARM_LESSON_SRC    = $(filter-out lessons/12_%,$(LESSON_SRC))
ARM_LESSON_BINS   = $(foreach f,$(ARM_LESSON_SRC),$(ARM_LESSON_BUILD)/lessons/$(basename $(notdir $(f))))

# GCC 12.2's AArch64 vectoriser (Debian's gcc-aarch64-linux-gnu 12.2.0-14) stops with an internal
# compiler error in vect_transform_reduction on lessons/13_backprop.c and lessons/19_scale.c at
# -O2. In the cross build below (its build directory ends in -arm-lessons) the lessons' own objects
# are built without loop vectorisation (the library keeps it). The results are the same either
# way (without -ffast-math, GCC vectorises only what leaves every float operation as written), and
# the comparison checks them against x86-64.
ifneq ($(filter %-arm-lessons,$(BUILD)),)
  $(BUILD)/lessons/%.o: ISAFLAGS := -fno-tree-vectorize
endif

# Tolerance of the comparison: 1e-6 + 1e-5 |x86-64|. A lesson whose tensors need another
# absolute tolerance says so, with the reason, in its header: `// Arm tolerance: 1e-5 ...`
# (lesson 18). A lesson that must run with other flags here says `// Arm run: --simd naive ...`
# (lesson 14).

# ./generate as a file inside the build directory (the top-level ./generate is the native one).
$(BUILD)/tools/generate-bin: $(BUILD)/tools/generate.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

.PHONY: test-arm-lessons
test-arm-lessons: lessons npydiff model              ## every lesson cross-built for AArch64, run in qemu, tensors compared
	@command -v $(ARM_CC) >/dev/null 2>&1 && command -v qemu-aarch64 >/dev/null 2>&1 || { \
	  echo "test-arm-lessons: needs $(ARM_CC) and qemu-aarch64: sudo apt-get install -y gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user" >&2; exit 1; }
	@$(MAKE) --no-print-directory CC=$(ARM_CC) BUILD=$(ARM_LESSON_BUILD) OMP=0 $(ARM_LESSON_BINS) \
	  $(ARM_LESSON_BUILD)/tools/generate-bin
	@rm -rf out/arm && mkdir -p out/arm
	@fail=0; \
	printf '%s\n' $(ARM_LESSON_SRC) | sort -r | xargs -P 2 -n 1 sh tools/arm_lesson.sh $(ARM_ROOT) $(ARM_LESSON_BUILD) \
	  > out/arm/lessons.txt || fail=1; \
	sort -V out/arm/lessons.txt; \
	for level in neon naive; do \
	  if qemu-aarch64 -L $(ARM_ROOT) $(ARM_LESSON_BUILD)/tools/generate-bin $(MODEL_BIN) -z $(MODEL_TOK) \
	       -t 0 -n 256 --simd $$level 2> out/arm/generate-$$level.log | cmp -s - data/stories260K_greedy.txt; then \
	    echo "generate --simd $$level: AArch64 writes the documented greedy story, character for character"; \
	  else echo "generate --simd $$level: FAILED on AArch64 (the story differs, or see out/arm/generate-$$level.log)"; fail=1; fi; \
	done; \
	exit $$fail
