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
	$$(CC) $$(LDFLAGS) $(BUILD)/lessons/$(1).o $(LESSON_HELPER) $(LIB) $$(LDLIBS) -o $$@
lesson$(2): $(BUILD)/lessons/$(1) | $(call lesson_needs,lessons/$(1).c)
	cp $$< $$@
endef
$(foreach f,$(LESSON_SRC),$(eval $(call LESSON_RULES,$(basename $(notdir $(f))),$(call lesson_num,$(f)))))

.PHONY: lessons plots
lessons: $(LESSONS)                            ## build every lesson as ./lessonN

# Runs each lesson (their files land in out/lessonN/), then renders every viz/*.gp with its
# default data file. gnuplot is optional: without it the lessons still run and this says so.
# A lesson's picture (viz/NN_*.gp) that fails to draw fails the target; other scripts in viz/
# (e.g. attention_map.gp, which reads what `make attention-map` writes) are drawn if their data
# exists and otherwise reported and skipped.
plots: lessons                                 ## run every lesson, then draw all viz/*.gp into out/
	@for l in $(LESSONS); do \
	  if ./$$l --no-plot > /dev/null; then echo "ran $$l"; else echo "$$l failed (run ./$$l to see why)"; exit 1; fi; \
	done
	@if command -v gnuplot > /dev/null 2>&1; then \
	  bad=0; \
	  for g in viz/*.gp; do \
	    [ -f "$$g" ] || continue; \
	    if gnuplot "$$g" 2> out/.gnuplot.err; then echo "drew $$g"; \
	    else case "$$g" in \
	      viz/[0-9][0-9]_*) echo "$$g failed:"; cat out/.gnuplot.err; bad=1;; \
	      *) echo "skipped $$g (its data is not there; see the script's header comment)";; \
	    esac; fi; \
	  done; \
	  rm -f out/.gnuplot.err; \
	  echo "pictures are in out/lesson*/ (*.png)"; \
	  exit $$bad; \
	else \
	  echo "gnuplot is not installed: the lessons ran and wrote their data into out/;"; \
	  echo "install gnuplot (apt-get install gnuplot / brew install gnuplot) and run 'make plots' again"; \
	fi

TEST_DEPS   += lessons
CLEAN_FILES += $(LESSONS)

