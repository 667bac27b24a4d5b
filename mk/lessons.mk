# mk/lessons.mk: the numbered lessons (docs/lessons.md describes each one).
#
# lessons/NN_topic.c (two digits) builds $(BUILD)/lessons/NN_topic, copied to ./lessonN (no
# leading zero) at the top of the checkout, so a learner types `make lesson3 && ./lesson3`.
# A new lessons/NN_*.c file is picked up without editing this file.
#   make lessonN   one lesson            make lessons   all of them
#   make plots     run every lesson, then draw every viz/*.gp picture into out/ (needs gnuplot)

LESSON_SRC   := $(sort $(wildcard lessons/[0-9][0-9]_*.c))
# lessons/03_norms.c -> 3 (the two digits before the first '_', leading zero dropped)
lesson_num    = $(patsubst 0%,%,$(firstword $(subst _, ,$(notdir $(basename $(1))))))
LESSONS      := $(foreach f,$(LESSON_SRC),lesson$(call lesson_num,$(f)))
LESSON_HELPER := $(BUILD)/lessons/lesson.o

# Files a lesson reads, from its "// Needs: path ..." header lines (lessons 1 and 11 need the
# model and tokenizer in data/models/, which mk/model.mk knows how to fetch).
lesson_needs  = $(shell sed -n 's|^// Needs:||p' $(1))

# One link rule and one copy rule per lesson: $(1) = NN_topic, $(2) = N. What the lesson needs is
# an order-only prerequisite: made if missing, never a reason to relink.
define LESSON_RULES
$(BUILD)/lessons/$(1): $(BUILD)/lessons/$(1).o $(LESSON_HELPER) $(LIB)
	$$(call say,LD,$$@)$$(CC) $$(LDFLAGS) $(BUILD)/lessons/$(1).o $(LESSON_HELPER) $(LIB) $$(LDLIBS) -o $$@
lesson$(2): $(BUILD)/lessons/$(1) | $(call lesson_needs,lessons/$(1).c)
	$$(call say,CP,$$@)cp $$< $$@
endef
$(foreach f,$(LESSON_SRC),$(eval $(call LESSON_RULES,$(basename $(notdir $(f))),$(call lesson_num,$(f)))))

.PHONY: lessons plots test-lessons-full
lessons: $(LESSONS)                            ## build every lesson as ./lessonN

# make test runs a lesson whose header says "// Extra runs: ci" (it costs seconds) once; this runs
# the lessons suite with every lesson's determinism and --seed runs too (tests/test_lessons.c).
test-lessons-full: $(BUILD)/tests/run_tests $(LESSONS) model   ## the lessons suite with the slow lessons' second and --seed runs (.ci/extra)
	TW_LESSON_EXTRA_RUNS=all CK_RUN_SUITE=lessons ./$(BUILD)/tests/run_tests

# Runs each lesson with its pictures on: a lesson draws its own viz/NN_*.gp with the titles and
# data it chose (lesson 11's head maps carry their layer and head), into out/lessonN/. With gnuplot
# installed, every PNG a lesson's "// Pictures:" line promises must then exist, or the target
# fails. The other scripts in viz/ (attention_map.gp, bench_gflops.gp, which read what
# `make attention-map` and `make bench` write) are drawn with their default data when it exists.
# gnuplot is optional: without it the lessons still run, write their data and print the commands.
plots: lessons                                 ## run every lesson, drawing its pictures into out/lessonN/
	@mkdir -p out; gp=0; command -v gnuplot > /dev/null 2>&1 && gp=1; \
	for src in $(LESSON_SRC); do \
	  n=$$(basename $$src | sed 's/_.*//; s/^0//'); \
	  for png in $$(sed -n 's|^// Pictures:||p' $$src); do rm -f out/lesson$$n/$$png; done; \
	  if ./lesson$$n > out/.lesson.log 2>&1; then echo "ran lesson$$n"; \
	  else echo "lesson$$n failed (run ./lesson$$n to see why)"; rm -f out/.lesson.log; exit 1; fi; \
	  if [ $$gp = 1 ]; then \
	    for png in $$(sed -n 's|^// Pictures:||p' $$src); do \
	      if [ -s out/lesson$$n/$$png ]; then echo "  drew out/lesson$$n/$$png"; \
	      else echo "lesson$$n did not draw $$png:"; grep -i -A3 "picture\|gnuplot" out/.lesson.log; exit 1; fi; \
	    done; \
	  fi; \
	done; rm -f out/.lesson.log; \
	if [ $$gp = 1 ]; then \
	  for g in viz/*.gp; do \
	    case "$$g" in viz/[0-9][0-9]_*) continue;; esac; \
	    if gnuplot "$$g" > out/.gnuplot.log 2>&1 && ! grep -q "does not exist" out/.gnuplot.log; then echo "drew $$g"; \
	    else echo "skipped $$g (its data is not there; see the script's header comment)"; fi; \
	  done; rm -f out/.gnuplot.log; \
	  echo "pictures are in out/lesson*/ (*.png)"; \
	else \
	  echo "gnuplot is not installed: the lessons ran and wrote their data into out/;"; \
	  echo "install gnuplot (apt-get install gnuplot-nox / brew install gnuplot) and run 'make plots' again"; \
	fi

TEST_DEPS   += lessons
CLEAN_FILES += $(LESSONS)


# Lesson 18's induction model: a 2-layer model trained for 6,000 steps on repeated random
# segments of varied period (about a minute), written once into data/models/induction.bin; the
# lesson measures its induction heads when the file is there. test-induction makes it and runs
# the lesson, whose checks on it can then fail (.ci/extra runs it: too long for make test).
.PHONY: induction-model test-induction
induction-model: data/models/induction.bin     ## train lesson 18's induction model (about a minute)
data/models/induction.bin: lesson18
	@mkdir -p data/models
	./lesson18 --train-induction --no-plot
test-induction: induction-model                ## lesson 18 with its induction model (checks the heads)
	./lesson18 --no-plot > /dev/null
	@echo "test-induction: lesson 18's induction checks passed"
