# Makefile for the transformer walkthrough toolkit. GNU make 3.81+ (macOS's make works).
#
#   make test        build lib/ and the Check suite, run it (ends with Check's summary line);
#                    installs Check and pkg-config first if missing (tools/need_check.sh)
#   make lessonN     build lesson N as ./lessonN          make lessons   build them all
#   make asan        the suite built with AddressSanitizer + UndefinedBehaviorSanitizer
#   make clean       remove build outputs
# Each area of the toolkit adds its own targets in mk/*.mk (model, lessons, kernels, fuzzing);
# `make help` lists them all.

CC       ?= cc

# Parallel by default: one job per core unless the command line chose (-j N, or -j1 for one at a
# time). Setting -j here takes effect from GNU make 4.0 on; macOS's make 3.81 builds serially.
NPROC := $(shell nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 1)
ifeq ($(filter -j%,$(MAKEFLAGS))$(filter 3.%,$(MAKE_VERSION)),)
  MAKEFLAGS += -j$(NPROC)
endif
# One short line per step ("  CC      lib/nn/linear.c"); V=1 prints every full command instead.
# A recipe line starts with $(call say,WHAT,FILE) and goes on with its command.
ifeq ($(V),1)
  say =
else
  say = @printf '  %-7s %s\n' '$(1)' '$(2)';
endif
CSTD     := -std=c11
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes
# -ffp-contract=off: never fuse a*b+c into one FMA behind our back (clang does by default on
# Arm), so the scalar code rounds identically on every machine and prints the same numbers.
FPFLAGS  := -ffp-contract=off
# -g1: line tables and function names only, which is what valgrind's and gdb's backtraces print
# (file:line for every frame), at about 15 % less compile time than -g. To step through code
# and print local variables in gdb: make clean && make CFLAGS='-O0 -g'.
CFLAGS   ?= -O2 -g1
CPPFLAGS += -Ilib
LDLIBS   += -lm
BUILD    ?= build
UNAME_S  := $(shell uname -s)
UNAME_M  := $(shell uname -m)

# Check (the unit-test framework): pkg-config knows its flags (Debian also needs -lsubunit).
# Expanded when a test object is compiled or the runner linked, not when this file is read: by
# then the need-check target below has installed Check if it was missing.
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   = $(shell pkg-config --libs check 2>/dev/null)

LIB      := $(BUILD)/libtw.a
# Fragments append to these: LIB_SRC (extra library sources), PROGRAMS (top-level binaries),
# TEST_DEPS (what `make test` needs before running), CLEAN_FILES.
LIB_SRC   := $(wildcard $(addsuffix /*.c,$(addprefix lib/,core nn train quant tokenize decode formats inspect)))
TEST_SRC  := $(wildcard tests/*.c)
PROGRAMS  :=
TEST_DEPS :=
CLEAN_FILES :=

.PHONY: all test asan clean help
all: $(LIB)

# One compile command for every object (the pattern rule below and the exercise rules in
# mk/simd.mk). -MMD -MP writes a .d file beside each object, read back at the end of this file.
COMPILE = $(CC) $(CSTD) $(WARN) $(FPFLAGS) $(CPPFLAGS) $(CFLAGS) $(ISAFLAGS) -MMD -MP

# The fragments may be read in any order: a prerequisite list that uses a variable other
# fragments append to (TEST_DEPS, LESSON_SRC, ...) is written $$(VAR), expanded only after every
# fragment has been read (second expansion), and recipes expand their variables when they run.
.SECONDEXPANSION:
include $(sort $(wildcard mk/*.mk))

LIB_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRC))
TEST_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(TEST_SRC))

all: $(PROGRAMS)

$(LIB): $(LIB_OBJ)
	@rm -f $@
	$(call say,AR,$@)$(AR) rcs $@ $^

# The suite list is generated from the `Suite *suite_xxx(void)` definitions in tests/*.c, so a new
# test file is picked up without editing the runner.
$(BUILD)/tests/suites.inc: $(TEST_SRC)
	@mkdir -p $(@D)
	@sed -n 's/^Suite[ ]*\*[ ]*\(suite_[A-Za-z0-9_]*\)(void).*/SUITE(\1)/p' $(TEST_SRC) > $@.tmp
	@mv $@.tmp $@
$(BUILD)/tests/test_main.o: $(BUILD)/tests/suites.inc
$(TEST_OBJ): CPPFLAGS += $(CHECK_CFLAGS) -Itests -I$(BUILD)/tests
# The test files at -O1: they call the library (built at CFLAGS) and compare; optimising their own
# loops harder buys nothing and costs a third of their compile time. A CFLAGS given on the
# command line (make asan, make CFLAGS=...) applies to them unchanged.
$(TEST_OBJ): CFLAGS += -O1

# tests/test_peak.c checks the benchmark's FMA probe (bench/peak.c), which is not in the library.
$(BUILD)/tests/test_peak.o: CPPFLAGS += -Ibench
$(BUILD)/tests/run_tests: $(TEST_OBJ) $(BUILD)/bench/peak.o $(LIB) | need-check
	$(call say,LD,$@)$(CC) $(LDFLAGS) $(TEST_OBJ) $(BUILD)/bench/peak.o $(LIB) $(CHECK_LIBS) $(LDLIBS) -o $@

# What the tests need beyond a C compiler, Check and pkg-config, is installed here when missing:
# tools/need_check.sh runs apt-get (through sudo unless root) or brew, or prints the one command
# to run and stops the build. Order-only: it runs before any test object is compiled and is never
# a reason to rebuild one. tests/need_check_test.sh checks its decisions with stub commands.
.PHONY: need-check test-need-check
need-check:
	@pkg-config --exists check 2>/dev/null || sh tools/need_check.sh
$(TEST_OBJ): | need-check
test-need-check:                               ## tools/need_check.sh's choices (root, sudo, brew, none), in stub systems
	@sh tests/need_check_test.sh
TEST_DEPS += test-need-check

# The include arrows of lib/ point one way (tools/check_layers.sh says which way).
.PHONY: check-layers
check-layers:                                  ## lib/'s includes point one way; nothing in lib/ includes tw.h
	@sh tools/check_layers.sh lib
TEST_DEPS += check-layers

# Every file a comment or doc names exists (tools/check_file_refs.sh): a moved file's old name fails.
.PHONY: check-file-refs
check-file-refs:                               ## every file name in comments and docs/ exists in the tree
	@sh tools/check_file_refs.sh .
TEST_DEPS += check-file-refs
# No program runs a shell: no popen, system, exec of sh or sh -c in lib/, tools/, lessons/, bench/,
# fuzz/ and tests/ (tools/check_no_shell.sh; docs/hardening.md, "No shell").
.PHONY: check-no-shell
check-no-shell:                                ## no C or Python file (tests/ too) runs a shell: popen, system, sh -c
	@sh tools/check_no_shell.sh
TEST_DEPS += check-no-shell

test: $(BUILD)/tests/run_tests $(TEST_DEPS)    ## run the Check suite (CK_VERBOSITY=verbose for every test)
	$(call say,TEST,$(BUILD)/tests/run_tests (slow suites side by side: tools/run_suites.sh))sh tools/run_suites.sh ./$(BUILD)/tests/run_tests

asan:                                          ## the suite under ASan/UBSan, in its own build dir
	$(MAKE) BUILD=build-asan test CK_FORK=no \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  LDFLAGS="-fsanitize=address,undefined"

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(call say,CC,$<)$(COMPILE) -c $< -o $@

help:                                          ## list the targets
	@grep -h -E '^[a-zA-Z0-9_%.-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | sort

clean:                                         ## remove build outputs
	rm -rf build build-* $(PROGRAMS) $(CLEAN_FILES)

# Every object's dependency file, wherever it was built from (lib/, tests/, tools/, bench/, fuzz/,
# lessons/, the exercises): touching a header recompiles every object that includes it.
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
