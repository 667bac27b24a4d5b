# Makefile for the transformer walkthrough toolkit. GNU make 3.81+ (macOS's make works).
#
#   make test        build lib/ and the Check suite, run it (ends with Check's summary line)
#   make lessonN     build lesson N as ./lessonN          make lessons   build them all
#   make asan        the suite built with AddressSanitizer + UndefinedBehaviorSanitizer
#   make clean       remove build outputs
# Each area of the toolkit adds its own targets in mk/*.mk (model, lessons, kernels, fuzzing);
# `make help` lists them all.

CC       ?= cc
CSTD     := -std=c11
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes
# -ffp-contract=off: never fuse a*b+c into one FMA behind our back (clang does by default on
# Arm), so the scalar code rounds identically on every machine and prints the same numbers.
FPFLAGS  := -ffp-contract=off
CFLAGS   ?= -O2 -g
CPPFLAGS += -Ilib
LDLIBS   += -lm
BUILD    ?= build
UNAME_S  := $(shell uname -s)
UNAME_M  := $(shell uname -m)

# Check (the unit-test framework): pkg-config knows its flags (Debian also needs -lsubunit).
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)

LIB      := $(BUILD)/libtw.a
# Fragments append to these: LIB_SRC (extra library sources), PROGRAMS (top-level binaries),
# TEST_DEPS (what `make test` needs before running), CLEAN_FILES.
LIB_SRC   := $(wildcard lib/*.c)
TEST_SRC  := $(wildcard tests/*.c)
PROGRAMS  :=
TEST_DEPS :=
CLEAN_FILES :=

.PHONY: all test asan clean help
all: $(LIB)

include $(sort $(wildcard mk/*.mk))

LIB_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRC))
TEST_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(TEST_SRC))

all: $(PROGRAMS)

$(LIB): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

# The suite list is generated from the `Suite *suite_xxx(void)` definitions in tests/*.c, so a new
# test file is picked up without editing the runner.
$(BUILD)/tests/suites.inc: $(TEST_SRC)
	@mkdir -p $(@D)
	@sed -n 's/^Suite[ ]*\*[ ]*\(suite_[A-Za-z0-9_]*\)(void).*/SUITE(\1)/p' $(TEST_SRC) > $@.tmp
	@mv $@.tmp $@
$(BUILD)/tests/test_main.o: $(BUILD)/tests/suites.inc
$(TEST_OBJ): CPPFLAGS += $(CHECK_CFLAGS) -Itests -I$(BUILD)/tests

$(BUILD)/tests/run_tests: $(TEST_OBJ) $(LIB)
	@if [ -z "$(CHECK_LIBS)" ]; then echo "Check is not installed: run 'sudo apt-get install -y check pkg-config' (Debian/Ubuntu) or 'brew install check pkg-config' (macOS)"; exit 1; fi
	$(CC) $(LDFLAGS) $(TEST_OBJ) $(LIB) $(CHECK_LIBS) $(LDLIBS) -o $@

test: $(BUILD)/tests/run_tests $(TEST_DEPS)    ## run the Check suite (CK_VERBOSITY=verbose for every test)
	./$(BUILD)/tests/run_tests

asan:                                          ## the suite under ASan/UBSan, in its own build dir
	$(MAKE) BUILD=build-asan test CK_FORK=no \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  LDFLAGS="-fsanitize=address,undefined"

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) $(FPFLAGS) $(CPPFLAGS) $(CFLAGS) $(ISAFLAGS) -MMD -MP -c $< -o $@

help:                                          ## list the targets
	@grep -h -E '^[a-zA-Z0-9_%.-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | sort

clean:                                         ## remove build outputs
	rm -rf build build-* $(PROGRAMS) $(CLEAN_FILES)

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d)
